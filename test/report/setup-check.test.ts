// What a short run may claim: the quick protocol (a 1-minute idle and a 3-minute loaded soak) is a set-up check, not a
// qualification. Its document is a set-up-check report (setup-check.json/.html, its kind in the signed body), `--json`
// says qualification false with the protocol, every "zero errors bound" sentence uses the soak's own duration, and
// verify tells it apart from a certificate. Certificates written before keep verifying. Simulated lab, in process.
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/domain/record.js';
import { buildCertificateDocument, type CertificateDocument } from '../../src/report/certificate-json.js';
import { canonicalJson } from '../../src/report/canonical-json.js';
import { hashFile } from '../../src/report/journal-hash.js';
import { keygen, loadLabKey } from '../../src/report/sign.js';
import { runCli } from '../helpers/cli.js';
import { csvObjects } from '../helpers/csv.js';

const root = mkdtempSync(join(tmpdir(), 'cq-setup-check-'));
let labDir = '';
let runDir = '';
let json: Record<string, any> = {};
const labEnv = () => ({ CABLEQUAL_LAB_KEY: join(labDir, 'lab-key.pem') });

// What quick.json lacks, as the declaration says it (src/rules/qualification.ts).
const QUICK_SHORT = [
  'its soak with link load and idle GPUs runs 60 s; a qualification needs 10 min',
  'its soak with link load and the GPU load on both nodes runs 3 min; a qualification needs 60 min',
];

beforeAll(async () => {
  labDir = join(root, 'lab');
  await keygen(labDir);
  const r = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--seed', '7', '--out', join(root, 'reports'), '--db', 'off', '--json'], {
    env: labEnv(),
  });
  expect(r.code, r.err).toBe(0);
  json = JSON.parse(r.out) as Record<string, any>;
  runDir = json['runDir'] as string;
}, 120_000);

// A copy of the run directory (to change a document without touching the run).
function copyRun(): string {
  const dir = mkdtempSync(join(root, 'copy-'));
  cpSync(runDir, dir, { recursive: true });
  return dir;
}

describe('a quick run is a set-up check', { timeout: 60_000 }, () => {
  it('--json: qualification false, the protocol named, what it lacks; the document is setup-check.*, no certificate', () => {
    expect(json['outcome']).toBe('PASS');
    expect(json['qualification']).toBe(false);
    expect(json['protocol']).toBe('quick');
    expect(json['shortOfQualification']).toEqual(QUICK_SHORT);
    expect(json['certificate']).toBeNull();
    expect(json['document']).toBe(join(runDir, 'setup-check.html'));
    const files = readdirSync(runDir);
    expect(files).toEqual(expect.arrayContaining(['setup-check.json', 'setup-check.html']));
    expect(files.filter((f) => f.startsWith('certificate'))).toEqual([]);
    const record = JSON.parse(readFileSync(join(runDir, 'record.json'), 'utf8')) as RunRecord;
    expect([record.kind, record.shortOfQualification]).toEqual(['setup-check', QUICK_SHORT]);
    // summary.csv says it too.
    const [row] = csvObjects(readFileSync(join(runDir, 'summary.csv'), 'utf8'));
    expect(row!['run_kind']).toBe('setup-check');
  });

  it('the signed body is a set-up check with its verdict and what it lacks', () => {
    const doc = JSON.parse(readFileSync(join(runDir, 'setup-check.json'), 'utf8')) as CertificateDocument;
    expect(doc.signature).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect([doc.body.kind, doc.body.verdict, doc.body.outcome, doc.body.protocol.name]).toEqual(['setup-check', 'PASS', 'PASS', 'quick']);
    expect(doc.body.shortOfQualification).toEqual(QUICK_SHORT);
  });

  it("the HTML says set-up check in its title, banner and verdict box, and bounds the BER over the soak's own 3 minutes", () => {
    const html = readFileSync(join(runDir, 'setup-check.html'), 'utf8');
    expect(html).toContain('<title>Set-up check — NOT a qualification certificate');
    expect(html).toContain('<h1>Set-up check — NOT a qualification certificate</h1>');
    expect(html).not.toContain('Cable qualification certificate');
    expect(html).toContain(`SET-UP CHECK — NOT A QUALIFICATION. Protocol quick runs short of the burn-in a qualification needs: ${QUICK_SHORT.join('; ')}.`);
    expect(html).toContain('<div class="verdict v-PASS">PASS<div class="kind">set-up check</div></div>');
    expect(html).toContain('What the loaded soak showed (soak-loaded, 3 min: a set-up check, not a qualification)');
    // -ln(0.05) / (180 s x 212.5 Gb/s) = 7.8e-14: the bound of these 3 minutes, not the 60-minute 3.9e-15.
    expect(html).toContain('zero errors over 3 min at 212.5 Gb/s bound the BER below 7.8e-14.');
    expect(html).not.toMatch(/60 minutes|3\.9e-15/);
  });

  it('verify: OK as a SET-UP CHECK against the pinned lab key', async () => {
    const r = await runCli(['verify', join(runDir, 'setup-check.json')], { env: labEnv() });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^OK: .*setup-check\.json: SET-UP CHECK \(not a qualification\): signature \(pinned/m);
  });

  it('renamed certificate.json it still verifies only as a set-up check; its kind edited to certificate: NOT VERIFIED', async () => {
    const dir = copyRun();
    renameSync(join(dir, 'setup-check.json'), join(dir, 'certificate.json'));
    const renamed = await runCli(['verify', join(dir, 'certificate.json')], { env: labEnv() });
    expect(renamed.code).toBe(0);
    expect(renamed.out).toMatch(/^OK: .*certificate\.json: SET-UP CHECK \(not a qualification\)/m);
    const text = readFileSync(join(dir, 'certificate.json'), 'utf8');
    writeFileSync(join(dir, 'certificate.json'), text.replace('"kind":"setup-check"', '"kind":"certificate"'));
    const edited = await runCli(['verify', join(dir, 'certificate.json')], { env: labEnv() });
    expect(edited.code).toBe(1);
    expect(edited.err).toContain('problem: signature does not match the certificate content');
  });

  it('a body claiming a qualification for the quick protocol, signed with the lab key itself: NOT VERIFIED, the claim named', async () => {
    // What a doctored build (or a bug) would sign: the record's kind replaced, the document then a certificate.
    const dir = copyRun();
    const record = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as RunRecord;
    const claimed: RunRecord = { ...record, kind: 'qualification' };
    delete claimed.shortOfQualification;
    const h = (await hashFile(join(dir, 'journal.jsonl')))!;
    const doc = buildCertificateDocument(claimed, { file: 'journal.jsonl', sha256: h.sha256, bytes: h.bytes }, await loadLabKey(join(labDir, 'lab-key.pem')));
    expect(doc.body.kind).toBe('certificate');
    writeFileSync(join(dir, 'certificate.json'), `${canonicalJson(doc)}\n`);
    const r = await runCli(['verify', join(dir, 'certificate.json')], { env: labEnv() });
    expect(r.code).toBe(1);
    expect(r.err).toContain(`problem: the document is a certificate, but its journal's protocol (quick) makes it a setup-check (${QUICK_SHORT.join('; ')})`);
  });
});

describe('certificates written before set-up checks were told apart', { timeout: 60_000 }, () => {
  const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'journals-v2');
  const unpack = (name: string): string => {
    const dir = mkdtempSync(join(root, `v2-${name}-`));
    cpSync(join(FIXTURES, name), dir, { recursive: true });
    writeFileSync(join(dir, 'journal.jsonl'), gunzipSync(readFileSync(join(FIXTURES, name, 'journal.jsonl.gz'))));
    return dir;
  };

  it('a quick run`s certificate still verifies as issued, with a note of what it would be today', async () => {
    const dir = unpack('good-qsfp56-quick');
    const r = await runCli(['verify', join(dir, 'certificate.json'), '--public-key', join(FIXTURES, 'lab-key.pub.pem')]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^OK: .*certificate\.json: qualification certificate: /m);
    expect(r.out).toContain(
      `note: issued as a qualification certificate before set-up checks were told apart: its protocol (quick) runs short of a qualification (${QUICK_SHORT.join('; ')}); written today it would be a set-up check\n`,
    );
  });

  it('a full-protocol certificate verifies with no such note', async () => {
    const dir = unpack('failing-clone-spark-burnin');
    expect(existsSync(join(dir, 'certificate.json'))).toBe(true);
    const r = await runCli(['verify', join(dir, 'certificate.json'), '--public-key', join(FIXTURES, 'lab-key.pub.pem')]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^OK: .*certificate\.json: qualification certificate: /m);
    expect(r.out).not.toContain('set-up check');
  });
});
