import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyCertificate, type CertificateDocument } from '../../src/report/certificate-json.js';
import { renderAll } from '../../src/report/render-all.js';
import { keygen } from '../../src/report/sign.js';
import { errorRecord, failingCloneRecord, failingCloneTimeseries } from '../fixtures/records/build.js';
import { makeRunDir, tempRoot } from '../fixtures/records/run-dir.js';

describe('renderAll', () => {
  it('writes JSON, HTML and CSVs signed with the key from $CABLEQUAL_LAB_KEY, and the result verifies', async () => {
    const root = tempRoot();
    const keys = await keygen(join(root, 'keys'));
    const rec = failingCloneRecord();
    const dir = makeRunDir(root, rec);
    const paths = await renderAll(rec, dir, failingCloneTimeseries(), { env: { CABLEQUAL_LAB_KEY: keys.privateKeyPath } });
    expect(paths.map((p) => p.slice(dir.length + 1))).toEqual([
      'certificate.json',
      'certificate.html',
      'summary.csv',
      'lanes.csv',
      'timeseries.csv',
      'throughput.csv',
    ]);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    const doc = JSON.parse(readFileSync(join(dir, 'certificate.json'), 'utf8')) as CertificateDocument;
    const html = readFileSync(join(dir, 'certificate.html'), 'utf8');
    expect(html).toContain(keys.fingerprint);
    expect(html).toContain(doc.body.journal.sha256!);
    const v = await verifyCertificate(join(dir, 'certificate.json'), {
      regrade: async () => ({ outcome: rec.outcome, reasons: rec.reasons }),
      publicKeyPem: readFileSync(keys.publicKeyPath, 'utf8'),
      currentRulesVersion: 2,
    });
    expect(v.problems).toEqual([]);
  });

  it('without a key file it writes an unsigned run report and says where the key was expected', async () => {
    const root = tempRoot();
    const rec = errorRecord();
    const dir = makeRunDir(root, rec);
    const missing = join(root, 'no-such-key.pem');
    const paths = await renderAll(rec, dir, undefined, { labKeyFile: missing });
    expect(paths.map((p) => p.slice(dir.length + 1))).toEqual([
      'run-report.json',
      'run-report.html',
      'summary.csv',
      'lanes.csv',
      'timeseries.csv',
      'throughput.csv',
    ]);
    // no series: header-only files, so a re-render always leaves the same set of files
    expect(readFileSync(join(dir, 'throughput.csv'), 'utf8')).toBe('run_id,t_s,phase,simulated,rail,gbps,direction\r\n');
    const doc = JSON.parse(readFileSync(join(dir, 'run-report.json'), 'utf8')) as CertificateDocument;
    expect(doc.signature).toBeNull();
    expect(doc.unsignedReason).toBe(`no lab key at ${missing} (create one with cablequal keygen)`);
    expect(readFileSync(join(dir, 'run-report.html'), 'utf8')).toContain(`UNSIGNED: run-report.json carries no signature (no lab key at ${missing}`);
  });
});
