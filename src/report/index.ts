// The report layer's surface for run/ and the writers' callers (everything takes a finished RunRecord; nothing here
// reads the journal's lines). A command that needs one part imports its module directly: `cablequal verify` loads
// certificate-json.ts and sign.ts, not the HTML, CSV and chart writers this barrel brings.
export { CSV_COLUMNS } from './csv-columns.js';
export { runRow, toCsv } from './csv.js';
export { readRunRecord } from './record-io.js';
export { regressRecords } from './regress.js';
export { renderAll } from './render-all.js';
export { type LabKey } from './sign.js';
