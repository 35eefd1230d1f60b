// `verify` trusts a pinned lab key, never the key inside the certificate, and accepts only the exact canonical bytes
// that were signed; `report` never replaces a signed certificate with an unsigned one (#17 items 2, 3). The
// documented openssl commands (operator guide §11) verify real certificates, old and new.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/domain/record.js';
import { certificateDocumentFor, writeCertificateDocument } from '../../src/report/certificate-json.js';
import { DEFAULT_LAB_KEY_PATH, keygen, loadLabKey } from '../../src/report/sign.js';
import { runCli } from '../helpers/cli.js';

const root = mkdtempSync(join(tmpdir(), 'cq-pin-'));
let labDir = ''; // the lab's key directory (lab-key.pem, lab-key.pub.pem)
let runDir = ''; // a run signed with it
let certText = '';
// The quick protocol's run is a set-up check: its signed document is setup-check.json (verify treats it like any other).
const DOC = 'setup-check.json';
const labEnv = () => ({ CABLEQUAL_LAB_KEY: join(labDir, 'lab-key.pem') });
const noKeyEnv = { CABLEQUAL_LAB_KEY: join(root, 'no-such-dir', 'lab-key.pem') }; // nothing trusted on this machine

beforeAll(async () => {
  labDir = join(root, 'lab');
  await keygen(labDir);
  const r = await runCli(
    ['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--seed', '7', '--label', 'pin', '--out', join(root, 'reports'), '--db', 'off', '--json'],
    { env: labEnv() },
  );
  expect(r.code).toBe(0);
  runDir = (JSON.parse(r.out) as { runDir: string }).runDir;
  certText = readFileSync(join(runDir, DOC), 'utf8');
}, 120_000);

// A copy of the signed run with certificate.json holding `text` (verify reads what a document is from its signed body,
// never from its file name).
function withCertificate(text: string): string {
  const dir = mkdtempSync(join(root, 'copy-'));
  cpSync(runDir, dir, { recursive: true });
  writeFileSync(join(dir, 'certificate.json'), text);
  return join(dir, 'certificate.json');
}

describe('verify pins the lab`s key', { timeout: 60_000 }, () => {
  it('on the lab`s controller: pinned by the public key beside the lab key, OK, exit 0', async () => {
    const r = await runCli(['verify', join(runDir, DOC)], { env: labEnv() });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^OK: .*signature \\(pinned: the lab's public key ${join(labDir, 'lab-key.pub.pem')}\\)`, 'm'));
  });

  it('with no key trusted: UNPINNED, exit 5, never OK', async () => {
    const r = await runCli(['verify', join(runDir, DOC)], { env: noKeyEnv });
    expect(r.code).toBe(5);
    expect(r.out).not.toMatch(/^OK/m);
    expect(r.out).toMatch(/^UNPINNED: .*the signer sha256:[0-9a-f]{64} is not pinned/m);
  });

  it('$CABLEQUAL_LAB_PUBLIC_KEY and --public-key pin it; a certificate re-signed with another key inside is NOT VERIFIED', async () => {
    const pub = join(labDir, 'lab-key.pub.pem');
    expect((await runCli(['verify', join(runDir, DOC)], { env: { ...noKeyEnv, CABLEQUAL_LAB_PUBLIC_KEY: pub } })).code).toBe(0);
    expect((await runCli(['verify', join(runDir, DOC), '--public-key', pub], { env: noKeyEnv })).code).toBe(0);
    const bad = await runCli(['verify', join(runDir, DOC)], { env: { ...noKeyEnv, CABLEQUAL_LAB_PUBLIC_KEY: join(root, 'missing.pem') } });
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^cablequal: \$CABLEQUAL_LAB_PUBLIC_KEY .*missing\.pem: cannot read the lab's public key \(ENOENT\)\n$/);
    // A forger's certificate: re-signed with their own key, which it then carries.
    const forger = await keygen(join(root, 'forger'));
    const forgedDir = mkdtempSync(join(root, 'forged-'));
    cpSync(runDir, forgedDir, { recursive: true });
    // `report` no longer re-signs a journal the lab key signed with another key (#32 item 1a: its journal signatures
    // are not the signing key's), so the forger signs the document with their own tools.
    const r = await runCli(['report', forgedDir], { env: { CABLEQUAL_LAB_KEY: forger.privateKeyPath } });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/journal signatures do not hold \(signed by sha256:[0-9a-f]{64}, not by the lab key sha256:[0-9a-f]{64}\)/);
    const record = JSON.parse(readFileSync(join(forgedDir, 'record.json'), 'utf8')) as RunRecord;
    await writeCertificateDocument(await certificateDocumentFor(record, forgedDir, { labKey: await loadLabKey(forger.privateKeyPath) }), forgedDir);
    const pinned = await runCli(['verify', join(forgedDir, DOC)], { env: labEnv() });
    expect(pinned.code).toBe(1);
    expect(pinned.err).toContain(`problem: signed by key ${forger.fingerprint}, not by the trusted lab key`);
    const unpinned = await runCli(['verify', join(forgedDir, DOC)], { env: noKeyEnv });
    expect(unpinned.code).toBe(5); // consistent, but nothing says who signed it
  });
});

describe('verify accepts only the canonical bytes that were signed', { timeout: 60_000 }, () => {
  const cases: [string, (t: string) => string, RegExp][] = [
    ['an unsigned field added', (t) => t.replace(/}\n$/, ',"approvedBy":"QA"}\n'), /fields outside the signed body \("approvedBy"\)/],
    ['a duplicate key', (t) => t.replace('{"body":{', '{"body":{"outcome":"FAIL",'), /not the canonical form that was signed/],
    [
      'keys reordered',
      (t) => {
        const d = JSON.parse(t) as { body: unknown; signature: string };
        return `${JSON.stringify({ signature: d.signature, body: d.body })}\n`;
      },
      /not the canonical form that was signed \(first difference at character 3,/,
    ],
    ['whitespace', (t) => `${JSON.stringify(JSON.parse(t), null, 2)}\n`, /not the canonical form that was signed/],
    ['the final newline removed', (t) => t.trimEnd(), /not the canonical form that was signed/],
  ];
  it.each(cases)('%s: NOT VERIFIED with the reason', async (_what, edit, reason) => {
    const r = await runCli(['verify', withCertificate(edit(certText))], { env: labEnv() });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(reason);
    expect(r.err).toMatch(/NOT VERIFIED/);
  });

  it('the untouched bytes verify', async () => {
    expect((await runCli(['verify', withCertificate(certText)], { env: labEnv() })).code).toBe(0);
  });
});

describe('report never replaces a signed certificate with an unsigned one', { timeout: 60_000 }, () => {
  it('$CABLEQUAL_LAB_KEY naming a missing file: exit 2, one line, nothing rewritten', async () => {
    const cert = withCertificate(certText);
    const dir = join(cert, '..');
    const before = readFileSync(join(dir, 'record.json'), 'utf8');
    const r = await runCli(['report', dir], { env: { CABLEQUAL_LAB_KEY: join(root, 'gone', 'lab-key.pem') } });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^cablequal: .*gone\/lab-key\.pem: no lab key there \(named by \$CABLEQUAL_LAB_KEY\); create it with cablequal keygen/);
    expect(r.err.split('\n').filter(Boolean)).toHaveLength(1);
    expect(readFileSync(cert, 'utf8')).toBe(certText);
    expect(readFileSync(join(dir, 'record.json'), 'utf8')).toBe(before);
  });

  it('an unreadable key (not a PEM key): exit 2, the signed certificate kept', async () => {
    const cert = withCertificate(certText);
    const junk = join(root, 'junk.pem');
    writeFileSync(junk, 'not a key\n');
    const r = await runCli(['report', join(cert, '..')], { env: { CABLEQUAL_LAB_KEY: junk } });
    expect(r.code).toBe(2);
    expect(r.err).toBe(`cablequal: ${junk}: not a PEM private key\n`);
    expect(readFileSync(cert, 'utf8')).toBe(certText);
  });

  it('no key configured and none at the default place, but a signed certificate in the run: refused', async () => {
    expect(existsSync(DEFAULT_LAB_KEY_PATH), `this test needs no lab key at ${DEFAULT_LAB_KEY_PATH}`).toBe(false);
    const cert = withCertificate(certText);
    const r = await runCli(['report', join(cert, '..')], { env: {} });
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `cablequal: ${cert}: signed by the lab key, and no lab key is at ${DEFAULT_LAB_KEY_PATH}: refusing to replace it with an unsigned one (point CABLEQUAL_LAB_KEY at the lab key)\n`,
    );
    expect(readFileSync(cert, 'utf8')).toBe(certText);
  });

  it('with the lab key: the certificate is re-signed and still verifies', async () => {
    const cert = withCertificate(certText);
    const r = await runCli(['report', join(cert, '..')], { env: labEnv() });
    expect(r.code).toBe(0);
    expect((await runCli(['verify', cert], { env: labEnv() })).code).toBe(0);
  });
});

// The operator guide's openssl commands, taken from the guide itself, run in a run directory with the lab's public key.
const guide = readFileSync(join(process.cwd(), 'docs', 'operator-guide.md'), 'utf8');
const recipe = /\*\*With plain openssl\*\*[^`]*```sh\n([\s\S]*?)```/.exec(guide)![1]!;
const openssl = spawnSync('openssl', ['version'], { encoding: 'utf8' });

describe('the documented openssl commands verify a certificate', { timeout: 60_000 }, () => {
  it('openssl is on this machine (the test below is not skipped)', () => {
    expect(openssl.status).toBe(0);
    expect(openssl.stdout).toMatch(/^OpenSSL 3\./);
  });

  function runRecipe(dir: string, pub: string): string {
    copyFileSync(pub, join(dir, 'lab-key.pub.pem'));
    return execFileSync('bash', ['-euo', 'pipefail', '-c', recipe], { cwd: dir, encoding: 'utf8' });
  }

  it('a certificate written now: Signature Verified Successfully, and the certified journal hash is the journal`s', () => {
    const dir = join(withCertificate(certText), '..');
    const out = runRecipe(dir, join(labDir, 'lab-key.pub.pem'));
    expect(out).toContain('Signature Verified Successfully');
    const certified = /"sha256":"([0-9a-f]{64})"/.exec(out.split('\n').find((l) => l.startsWith('"journal"'))!)![1];
    expect(out).toContain(`${certified}  journal.jsonl`);
  });

  it.each(['journals-v1', 'journals-v2'])('certificates already written (%s fixtures) verify with openssl too', (set) => {
    const fixtures = join(process.cwd(), 'test', 'fixtures', set);
    const certified = readdirSync(fixtures, { withFileTypes: true }).filter((d) => d.isDirectory() && existsSync(join(fixtures, d.name, 'certificate.json')));
    expect(certified.length).toBeGreaterThan(0);
    for (const d of certified) {
      const dir = mkdtempSync(join(root, `${set}-`));
      cpSync(join(fixtures, d.name), dir, { recursive: true });
      writeFileSync(join(dir, 'journal.jsonl'), gunzipSync(readFileSync(join(dir, 'journal.jsonl.gz'))));
      expect(runRecipe(dir, join(fixtures, 'lab-key.pub.pem'))).toContain('Signature Verified Successfully');
    }
  });

  it('an edited body does not verify with openssl', () => {
    const dir = join(withCertificate(certText.replace('"outcome":"PASS"', '"outcome":"FAIL"')), '..');
    expect(() => runRecipe(dir, join(labDir, 'lab-key.pub.pem'))).toThrow(/Signature Verification Failure|Command failed/);
  });
});
