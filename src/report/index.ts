// The report layer's public surface, for cli/ and run/ (everything takes a finished RunRecord; nothing here reads the journal's lines).
export { writeFileAtomic } from './atomic-write.js';
export { summarise } from './certificate-content.js';
export { verifyCertificate } from './certificate-json.js';
export { compareRuns } from './compare.js';
export { CSV_COLUMNS } from './csv-columns.js';
export { runRow, toCsv } from './csv.js';
export { readRunRecord } from './record-io.js';
export { regress, regressRecords } from './regress.js';
export { renderAll } from './render-all.js';
export { DEFAULT_LAB_KEY_PATH, keygen, requireConfiguredLabKey, trustedLabPublicKey, type LabKey } from './sign.js';
