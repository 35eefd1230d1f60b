// #22 items 4-6: `verify` accepts only what was signed (exactly the documented top-level keys, the signature in its
// one canonical spelling), reads back every field of a certificate or a journal against its schema (one `problem:`
// line, exit 1; a journal line at fault makes the record ERROR and is named), and takes only an Ed25519 public key
// file as the trusted key (anything else exit 2, naming the file). Over a real signed certificate of rules version 2.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/report/canonical-json.js';
import { runCli } from '../helpers/cli.js';
import { unpackFixtureRun } from '../helpers/journals-v1.js';

const V2 = join(process.cwd(), 'test', 'fixtures', 'journals-v2');
const KEY = join(V2, 'lab-key.pub.pem');
const root = mkdtempSync(join(tmpdir(), 'cq-vhostile-'));
const noKeyEnv = { CABLEQUAL_LAB_KEY: join(root, 'none', 'lab-key.pem') };

// A copy of the signed good-qsfp56-quick run (journal unpacked), its certificate.json edited by `edit`.
let copies = 0;
function runCopy(edit?: (doc: Record<string, any>) => unknown, raw?: (text: string) => string): string {
  const dir = join(root, `run-${copies++}`);
  unpackFixtureRun('journals-v2', 'good-qsfp56-quick', dir);
  const cert = join(dir, 'certificate.json');
  const doc = JSON.parse(readFileSync(cert, 'utf8')) as Record<string, any>;
  const edited = edit ? (edit(doc) ?? doc) : doc;
  const text = `${canonicalJson(edited)}\n`;
  writeFileSync(cert, raw ? raw(text) : text);
  return dir;
}

async function verify(dir: string, key: string = KEY) {
  return runCli(['verify', join(dir, 'certificate.json'), '--public-key', key], { env: noKeyEnv });
}

// NOT VERIFIED with exactly one problem line matching `problem`.
async function refused(dir: string, problem: RegExp) {
  const r = await verify(dir);
  expect(r.code, r.err).toBe(1);
  const lines = r.err.trimEnd().split('\n');
  expect(lines.filter((l) => l.startsWith('problem: '))).toHaveLength(1);
  expect(lines[0]).toMatch(problem);
  expect(lines.at(-1)).toMatch(/^NOT VERIFIED: /);
  expect(r.out).not.toMatch(/^OK/m);
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const sig = (f: (s: string) => string) => (d: Record<string, any>) => void (d['signature'] = f(d['signature'] as string));

describe('verify accepts only what was signed (#22 item 4)', { timeout: 60_000 }, () => {
  it('the untouched certificate verifies pinned, exit 0', async () => {
    const r = await verify(runCopy());
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^OK: /m);
  });

  const TOP: [string, (d: Record<string, any>) => void][] = [
    ['"outcome":"PASS" beside body', (d) => void (d['outcome'] = 'PASS')],
    ['approvedBy beside body', (d) => void (d['approvedBy'] = 'QA lead')],
    ['an empty key', (d) => void (d[''] = null)],
    ['unsignedReason beside a signature', (d) => void (d['unsignedReason'] = 'none')],
  ];
  for (const [what, edit] of TOP) {
    it(`a top-level field (${what}) in canonical form: NOT VERIFIED`, async () => {
      await refused(runCopy(edit), /fields outside the signed body \(.*\): not covered by the signature/);
    });
  }

  const SIGNATURES: [string, (s: string) => string][] = [
    ['its == removed', (s) => s.replace(/=+$/, '')],
    ['in base64url', (s) => Buffer.from(s, 'base64').toString('base64url')],
    ['with extra padding', (s) => `${s}==`],
    ['with junk after it', (s) => `${s}!!junk`],
    ['with a base64 block after it', (s) => `${s}AAAA`],
    // The same 64 bytes: the last character's low 4 bits are dropped by a lenient decoder.
    ['with non-zero padding bits', (s) => `${s.slice(0, 85)}${B64[B64.indexOf(s[85]!) + 1]}==`],
    ['empty', () => ''],
  ];
  for (const [what, edit] of SIGNATURES) {
    it(`the signature ${what}: NOT VERIFIED`, async () => {
      const dir = runCopy(sig(edit));
      const r = await verify(dir);
      expect(r.code, r.err).toBe(1);
      expect(r.err).toMatch(/^problem: .*certificate\.json: certificate: signature: expected the canonical base64 of a 64-byte Ed25519 signature/);
    });
  }
});

describe('verify reads every certificate field against its schema (#22 item 5)', { timeout: 60_000 }, () => {
  const FIELDS: [string, (d: Record<string, any>) => void, RegExp][] = [
    ['journal file 5', (d) => void (d['body'].journal.file = 5), /body\.journal\.file: expected a file name \(no directory\), got number 5/],
    ['journal file {}', (d) => void (d['body'].journal.file = {}), /body\.journal\.file: expected a file name \(no directory\), got an object/],
    ['journal file a path', (d) => void (d['body'].journal.file = '../../etc/passwd'), /body\.journal\.file: expected a file name/],
    ['journal hash a number', (d) => void (d['body'].journal.sha256 = 7), /body\.journal\.sha256: expected 64 hex digits or null, got number 7/],
    ['rulesVersion a string', (d) => void (d['body'].rulesVersion = '2'), /body\.rulesVersion: expected a whole number, got a string/],
    ['reasons an object', (d) => void (d['body'].reasons = {}), /body\.reasons: expected an array, got an object/],
    ['a reason`s rule a number', (d) => void (d['body'].reasons = [{ rule: 1, message: 'x' }]), /body\.reasons\[0\]\.rule: expected a string, got number 1/],
    [
      'an unknown outcome',
      (d) => void (d['body'].outcome = 'GOOD'),
      /body\.outcome: expected one of "PASS", "MARGINAL", "FAIL", "ERROR", "ABORTED", got a string/,
    ],
    ['the signer`s key a number', (d) => void (d['body'].signer.publicKeyPem = 5), /body\.signer\.publicKeyPem: expected a PEM public key/],
    ['the signer missing', (d) => void delete d['body'].signer, /body\.signer: expected an object or null, got nothing \(missing\)/],
    [
      'an unsigned document`s reason a number',
      (d) => void ((d['signature'] = null), (d['unsignedReason'] = 3)),
      /unsignedReason: expected a string, got number 3/,
    ],
  ];
  for (const [what, edit, problem] of FIELDS) {
    it(`${what}: one problem line, exit 1`, async () => {
      await refused(runCopy(edit), problem);
    });
  }

  it('a body nested 200,000 deep: one problem line, exit 1, no stack trace', async () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    await refused(
      runCopy(undefined, (t) => t.replace('"kind":', `"deep":${deep},"kind":`)),
      /certificate\.json: nested deeper than 64 levels: not a certificate cablequal wrote$/,
    );
  });

  it('a journal that is a FIFO is named, never read for ever', async () => {
    const dir = runCopy();
    const { spawnSync } = await import('node:child_process');
    const { rmSync } = await import('node:fs');
    rmSync(join(dir, 'journal.jsonl'));
    expect(spawnSync('mkfifo', [join(dir, 'journal.jsonl')]).status).toBe(0);
    const r = await verify(dir);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/journal\.jsonl: not a regular file, cannot be the journal/);
  });
});

describe('a journal field of the wrong type is named, never a crash (#22 item 5)', { timeout: 60_000 }, () => {
  // The run copy with its identity line's vendorSn replaced by the number 5.
  function snFive(): { dir: string; line: number } {
    const dir = runCopy();
    const lines = readFileSync(join(dir, 'journal.jsonl'), 'utf8').split('\n');
    const at = lines.findIndex((l) => l.startsWith('{"type":"identity"'));
    lines[at] = lines[at]!.replaceAll('"vendorSn":"APF24150032K7N"', '"vendorSn":5');
    writeFileSync(join(dir, 'journal.jsonl'), lines.join('\n'));
    return { dir, line: at + 1 };
  }

  it('grade: ERROR, the line named with the field; report renders; verify is NOT VERIFIED', async () => {
    const { dir, line } = snFive();
    const g = await runCli(['grade', dir, '--json']);
    expect(g.code, g.err).toBe(3);
    expect((JSON.parse(g.out) as { outcome: string }).outcome).toBe('ERROR');
    expect(g.err).toContain(`line ${line}: identity: ends[0].identity.vendorSn: expected a string, got number 5`);
    const rep = await runCli(['report', dir], { env: { CABLEQUAL_LAB_KEY: join(root, 'k', 'lab-key.pem') } });
    expect(rep.err).not.toMatch(/internal error|TypeError/);
    const v = await verify(dir);
    expect(v.code).toBe(1);
  });

  it('compare and db import skip a record.json whose serial is a number, naming the field', async () => {
    const { dir } = snFive();
    const record = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as Record<string, any>;
    record['cable'].serial = 5;
    writeFileSync(join(dir, 'record.json'), JSON.stringify(record));
    const c = await runCli(['compare', dir, '--out', join(root, 'compare.csv')]);
    expect(c.err).toMatch(/skipped .*record\.json: not a run record cablequal can read: record: cable\.serial: expected a string or null, got number 5/);
    expect(c.out).toMatch(/^0 run\(s\) compared/);
    const i = await runCli(['db', 'import', dir, '--db', join(root, 'store.db')]);
    expect(i.err + i.out).toMatch(/record\.json: not a run record cablequal can read: record: cable\.serial: expected a string or null, got number 5/);
  });
});

describe('the trusted key is an Ed25519 public key or bad usage (#22 item 6)', { timeout: 60_000 }, () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const edPrivate = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const KEYS: [string, string, RegExp][] = [
    ['empty', '', /not an Ed25519 public key \(empty\)$/],
    ['RSA', rsa, /not an Ed25519 public key \(key type rsa, not Ed25519\)$/],
    ['garbage', 'hello\n', /not an Ed25519 public key \(not one PEM "PUBLIC KEY" block\)$/],
    ['a private key', edPrivate, /not an Ed25519 public key \(a private key: give the public key/],
    ['a key with junk after it', `${readFileSync(KEY, 'utf8')}junk\n`, /not an Ed25519 public key \(not one PEM "PUBLIC KEY" block\)$/],
  ];
  for (const [what, text, problem] of KEYS) {
    it(`--public-key ${what}: exit 2 naming the file; $CABLEQUAL_LAB_PUBLIC_KEY too`, async () => {
      const file = join(root, `${what.replace(/\W/g, '-')}.pem`);
      writeFileSync(file, text);
      const dir = runCopy();
      const r = await verify(dir, file);
      expect(r.code).toBe(2);
      expect(r.err.trimEnd().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(new RegExp(`^cablequal: --public-key ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `));
      expect(r.err.trimEnd()).toMatch(problem);
      const e = await runCli(['verify', join(dir, 'certificate.json')], { env: { ...noKeyEnv, CABLEQUAL_LAB_PUBLIC_KEY: file } });
      expect(e.code).toBe(2);
      expect(e.err).toContain(`$CABLEQUAL_LAB_PUBLIC_KEY ${file}: not an Ed25519 public key`);
    });
  }

  it('--public-key /dev/zero: exit 2 at once', async () => {
    const r = await verify(runCopy(), '/dev/zero');
    expect(r.code).toBe(2);
    expect(r.err).toBe('cablequal: --public-key /dev/zero: a device, not a regular file\n');
  });
});
