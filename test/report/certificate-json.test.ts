import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/domain/record.js';
import { RULES_VERSION } from '../../src/rules/versions.js';
import { canonicalJson } from '../../src/report/canonical-json.js';
import {
  certificateDocumentFor,
  verifyCertificate,
  writeCertificateDocument,
  type CertificateDocument,
  type Regrade,
} from '../../src/report/certificate-json.js';
import { keygen, loadLabKey } from '../../src/report/sign.js';
import { errorRecord, failingCloneRecord } from '../fixtures/records/build.js';
import { makeRunDir, tempRoot } from '../fixtures/records/run-dir.js';

const regradeAs =
  (r: RunRecord): Regrade =>
  async () => ({ outcome: r.outcome, reasons: r.reasons });

async function signedRun() {
  const root = tempRoot();
  const keys = await keygen(join(root, 'keys'));
  const labKey = (await loadLabKey(keys.privateKeyPath))!;
  const record = failingCloneRecord();
  const dir = makeRunDir(root, record);
  const cert = await writeCertificateDocument(await certificateDocumentFor(record, dir, { labKey }), dir);
  return { root, keys, record, dir, cert: cert!, publicKeyPem: readFileSync(keys.publicKeyPath, 'utf8') };
}

describe('certificate.json', () => {
  it('is one canonical line carrying journal hash, fingerprint and verdict', async () => {
    const { cert, keys, dir } = await signedRun();
    expect(cert).toBe(join(dir, 'certificate.json'));
    const text = readFileSync(cert, 'utf8');
    const doc = JSON.parse(text) as CertificateDocument;
    expect(text).toBe(canonicalJson(doc) + '\n');
    expect(doc.body.kind).toBe('certificate');
    expect(doc.body.verdict).toBe('FAIL');
    expect(doc.body.signer?.fingerprint).toBe(keys.fingerprint);
    expect(doc.body.journal.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(doc.body.journal.bytes).toBe(readFileSync(join(dir, 'journal.jsonl')).length);
    expect(doc.body.cable.partNumber).toBe('ONT-DAC-QS56-0.5');
    expect(doc.body.summary.linkDownEvents).toBe(2);
  });

  it('verifies with the trusted key, the journal and the re-graded verdict', async () => {
    const { cert, record, publicKeyPem, keys } = await signedRun();
    const v = await verifyCertificate(cert, { regrade: regradeAs(record), publicKeyPem, currentRulesVersion: RULES_VERSION });
    expect(v.problems).toEqual([]);
    expect(v.ok).toBe(true);
    expect(v.outcome).toBe('FAIL');
    expect(v.fingerprint).toBe(keys.fingerprint);
  });

  it('fails after one byte of the journal changes', async () => {
    const { cert, record, publicKeyPem, dir } = await signedRun();
    const jp = join(dir, 'journal.jsonl');
    const bytes = readFileSync(jp);
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0x01;
    writeFileSync(jp, bytes);
    const v = await verifyCertificate(cert, { regrade: regradeAs(record), publicKeyPem, currentRulesVersion: RULES_VERSION });
    expect(v.ok).toBe(false);
    expect(v.problems).toHaveLength(1);
    expect(v.problems[0]).toMatch(/journal journal.jsonl SHA-256 [0-9a-f]{64} differs/);
  });

  it("fails after the certificate's outcome is edited", async () => {
    const { cert, record, publicKeyPem } = await signedRun();
    writeFileSync(cert, readFileSync(cert, 'utf8').replace('"outcome":"FAIL"', '"outcome":"PASS"'));
    const v = await verifyCertificate(cert, { regrade: regradeAs(record), publicKeyPem, currentRulesVersion: RULES_VERSION });
    expect(v.ok).toBe(false);
    expect(v.problems).toContain('signature does not match the certificate content (edited, or signed by another key)');
    expect(v.problems).toContain('re-grading gives FAIL, certificate says PASS');
  });

  it('fails with another key', async () => {
    const { cert, record, root } = await signedRun();
    const other = await keygen(join(root, 'other'));
    const v = await verifyCertificate(cert, {
      regrade: regradeAs(record),
      publicKeyPem: readFileSync(other.publicKeyPath, 'utf8'),
      currentRulesVersion: RULES_VERSION,
    });
    expect(v.ok).toBe(false);
    expect(v.problems.some((p) => p.startsWith('signed by key sha256:') && p.includes(other.fingerprint))).toBe(true);
  });

  it('fails when re-grading disagrees about the reasons', async () => {
    const { cert, record, publicKeyPem } = await signedRun();
    const v = await verifyCertificate(cert, {
      regrade: async () => ({ outcome: 'FAIL', reasons: record.reasons.slice(0, 1) }),
      publicKeyPem,
      currentRulesVersion: RULES_VERSION,
    });
    expect(v.problems).toEqual(['re-grading gives reasons [link-down], certificate lists [link-down, lane-ratio]']);
  });

  it('without a lab key writes an unsigned document that verify rejects with a clear note', async () => {
    const root = tempRoot();
    const record = failingCloneRecord();
    const dir = makeRunDir(root, record);
    const cert = await writeCertificateDocument(
      await certificateDocumentFor(record, dir, { labKey: null, unsignedReason: 'no lab key at /nowhere/lab-key.pem' }),
      dir,
    );
    const doc = JSON.parse(readFileSync(cert!, 'utf8')) as CertificateDocument;
    expect(doc.signature).toBeNull();
    expect(doc.body.signer).toBeNull();
    const v = await verifyCertificate(cert!, { regrade: regradeAs(record), currentRulesVersion: RULES_VERSION });
    expect(v.problems).toEqual(['certificate is unsigned (no lab key at /nowhere/lab-key.pem)']);
  });

  it('an ERROR run is written as run-report.json with no verdict', async () => {
    const root = tempRoot();
    const record = errorRecord();
    const dir = makeRunDir(root, record);
    const p = await writeCertificateDocument(await certificateDocumentFor(record, dir, {}), dir);
    expect(p).toBe(join(dir, 'run-report.json'));
    const doc = JSON.parse(readFileSync(p!, 'utf8')) as CertificateDocument;
    expect(doc.body.kind).toBe('run-report');
    expect(doc.body.verdict).toBeNull();
    expect(doc.body.outcome).toBe('ERROR');
  });

  it('a file that is not a certificate is one problem, not a crash', async () => {
    const root = tempRoot();
    const p = join(root, 'x.json');
    writeFileSync(p, '{"hello":1}');
    const v = await verifyCertificate(p, { regrade: async () => ({ outcome: 'PASS', reasons: [] }), currentRulesVersion: RULES_VERSION });
    expect(v).toMatchObject({ ok: false, problems: [`${p}: not a cablequal certificate (schema cablequal.certificate/1)`] });
  });
});
