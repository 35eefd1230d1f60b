import type { RunRecord } from '../domain/record.js';
import { writeCertificateHtml } from './certificate-html.js';
import type { ProtocolDerived } from './certificate-content.js';
import { certificateDocumentFor, writeCertificateDocument } from './certificate-json.js';
import { writeRunCsvs } from './csv.js';
import { labKeyPath, loadLabKey, type LabKey } from './sign.js';
import { EMPTY_TIMESERIES, type RunTimeseries } from './series.js';

export interface RenderOptions {
  // A loaded key wins; null forces an unsigned certificate; undefined loads from labKeyFile / $CABLEQUAL_LAB_KEY / default.
  labKey?: LabKey | null;
  labKeyFile?: string;
  env?: NodeJS.ProcessEnv;
  // Why the documents are unsigned, when the caller chose so (labKey null).
  unsignedReason?: string;
  // The protocol that ran is not a built-in: what it changes (named on the certificate).
  protocolDerived?: ProtocolDerived | null;
  // Told when the signed document (certificate, set-up check or run report) was written unsigned for want of a key.
  onUnsigned?: (file: string) => void;
}

// Every output of a finished run (cablequal report <run dir> re-renders with this): JSON first, so the HTML can cite its signer.
export async function renderAll(record: RunRecord, dir: string, timeseries: RunTimeseries = EMPTY_TIMESERIES, opts: RenderOptions = {}): Promise<string[]> {
  const keyPath = labKeyPath(opts.labKeyFile, opts.env);
  const labKey = opts.labKey !== undefined ? opts.labKey : await loadLabKey(keyPath);
  const unsignedReason = opts.unsignedReason ?? (opts.labKey === null ? 'signing disabled' : `no lab key at ${keyPath} (create one with cablequal keygen)`);
  const doc = await certificateDocumentFor(record, dir, { labKey, unsignedReason, protocolDerived: opts.protocolDerived ?? null });
  const json = await writeCertificateDocument(doc, dir);
  if (doc.signature === null && opts.labKey !== null) opts.onUnsigned?.(json);
  const html = await writeCertificateHtml(record, dir, {
    timeseries,
    protocolDerived: opts.protocolDerived ?? null,
    signature: { fingerprint: doc.body.signer?.fingerprint ?? null, unsignedReason: doc.unsignedReason, journalSha256: doc.body.journal.sha256 },
  });
  const csv = await writeRunCsvs(record, dir, { timeseries });
  return [json, ...html, ...csv];
}
