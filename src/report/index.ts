// The report layer's public surface, for cli/ and run/ (everything takes a finished RunRecord; nothing here reads the journal's lines).
export { writeFileAtomic } from './atomic-write.js';
export { canonicalJson } from './canonical-json.js';
export { certificateContent, documentKind, summarise, IDLE_PHASE, LOADED_PHASE, type CertificateContent, type DocumentKind } from './certificate-content.js';
export { renderCertificateHtml, writeCertificateHtml, type HtmlWriterExtras, type SignatureNote } from './certificate-html.js';
export {
  buildCertificateDocument,
  certificateDocumentFor,
  verifyCertificate,
  writeCertificateDocument,
  writeCertificateJson,
  type CertificateDocument,
  type Regrade,
  type VerifyOptions,
  type VerifyResult,
} from './certificate-json.js';
export { laneRateChart, throughputChart } from './charts.js';
export { compareRuns, byPartPath, type CompareResult } from './compare.js';
export { CSV_COLUMNS, type CsvColumn, type CsvFile } from './csv-columns.js';
export { runRow, toCsv, writeRunCsvs } from './csv.js';
export { junitXml, type JunitCase, type JunitSuite } from './junit.js';
export { readRunRecord, RECORD_FILE } from './record-io.js';
export { DEFAULT_TOLERANCES, regress, regressRecords, regressionJunit, renderRegressionText, type RegressionResult, type RegressionRow, type Tolerances } from './regress.js';
export { renderAll, type RenderOptions } from './render-all.js';
export { DEFAULT_LAB_KEY_PATH, fingerprint, keygen, labKeyPath, loadLabKey, requireConfiguredLabKey, signBytes, trustedLabPublicKey, verifyBytes, type KeygenResult, type LabKey } from './sign.js';
export { EMPTY_TIMESERIES, type JournalPoint, type RunTimeseries, type ThroughputPoint } from './timeseries.js';
