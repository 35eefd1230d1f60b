// `npx tsx scripts/adversarial.ts [--write]`: tries every family of hostile input of issues #22 and #32 against the built CLI
// (bin/cablequal.js, each attack in its own process with a time limit, so a hang counts as not held) and counts, per
// family, the attacks tried and the ones that held: the exit code the README promises, one line on stderr, no stack
// trace, within the limit. Prints the table; --write puts it into docs/adversarial.md between its markers. Needs a
// build (`npm run build`) and mkfifo.
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, sign } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { canonicalJson } from '../src/report/canonical-json.js';
import { integrityFamilies } from './adversarial-integrity.js';
import { fingerprint } from '../src/report/sign.js';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'cablequal.js');
const V2 = join(ROOT, 'test', 'fixtures', 'journals-v2');
const KEY = join(V2, 'lab-key.pub.pem');
const LIMIT_MS = 20_000;
const work = mkdtempSync(join(tmpdir(), 'cq-adversarial-'));
const env = { ...process.env, CABLEQUAL_LAB_KEY: join(work, 'no-lab-key', 'lab-key.pem'), CABLEQUAL_LAB_PUBLIC_KEY: '', CABLEQUAL_DB: 'off' };

// Parsed JSON that the attacks edit at any depth.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the edits reach anywhere into a parsed file
type Json = Record<string, any>;

interface Outcome {
  code: number | null;
  out: string;
  err: string;
  ms: number;
  timedOut: boolean;
}

function cli(args: string[], cwd = work, extraEnv: NodeJS.ProcessEnv = {}): Outcome {
  const t = performance.now();
  // SIGKILL at the limit: a CLI blocked opening a FIFO ignores SIGTERM (#32 item 3), and spawnSync waits for its exit.
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...env, ...extraEnv },
    encoding: 'utf8',
    timeout: LIMIT_MS,
    killSignal: 'SIGKILL',
    maxBuffer: 64 << 20,
  });
  return { code: r.status, out: r.stdout ?? '', err: r.stderr ?? '', ms: performance.now() - t, timedOut: r.error !== undefined || r.signal !== null };
}

// What every attack must show besides its own expectation: an answer in time, and no stack trace.
function clean(o: Outcome): string | null {
  if (o.timedOut) return `no answer within ${LIMIT_MS / 1000} s`;
  if (/internal error|\n\s+at .+:\d+:\d+/.test(o.err)) return `stack trace: ${o.err.split('\n')[0]}`;
  return null;
}

interface Attack {
  name: string;
  // Why it did not hold, or null when it held.
  run: () => string | null | Promise<string | null>;
}
const families: { family: string; what: string; attacks: Attack[] }[] = [];
const family = (name: string, what: string) => {
  const f = { family: name, what, attacks: [] as Attack[] };
  families.push(f);
  return (attack: string, run: Attack['run']) => f.attacks.push({ name: attack, run });
};

// One line on stderr, the expected exit code, and the first line matching `says`.
function expectOneLine(o: Outcome, code: number, says: RegExp): string | null {
  const bad = clean(o);
  if (bad) return bad;
  if (o.code !== code) return `exit ${o.code}, expected ${code}: ${o.err.split('\n')[0]}`;
  // yargs adds its usage hint to the errors it reports itself (as test/cli/hostile-input.test.ts allows).
  const lines = o.err
    .trimEnd()
    .split('\n')
    .filter((l) => !/^Run "cablequal( [a-z]+)* --help" for usage\.$/.test(l));
  if (lines.length !== 1) return `${lines.length} lines on stderr`;
  return says.test(lines[0]!) ? null : `says "${lines[0]}"`;
}

// verify: NOT VERIFIED (exit 1), problem lines only, never OK.
function notVerified(o: Outcome): string | null {
  const bad = clean(o);
  if (bad) return bad;
  if (o.code !== 1) return `exit ${o.code}: ${o.out.split('\n')[0] || o.err.split('\n')[0]}`;
  const lines = o.err.trimEnd().split('\n');
  if (!lines.at(-1)!.startsWith('NOT VERIFIED: ')) return 'no NOT VERIFIED line';
  return lines.slice(0, -1).every((l) => l.startsWith('problem: ') || l.startsWith('warning: ')) ? null : `stray line "${lines[0]}"`;
}

// A copy of the signed good-qsfp56-quick run of rules version 2, journal unpacked.
let copies = 0;
function runCopy(): string {
  const dir = join(work, `run-${copies++}`);
  cpSync(join(V2, 'good-qsfp56-quick'), dir, { recursive: true });
  writeFileSync(join(dir, 'journal.jsonl'), gunzipSync(readFileSync(join(dir, 'journal.jsonl.gz'))));
  return dir;
}
const certOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'certificate.json'), 'utf8')) as Json;
const fifo = (path: string) => {
  if (spawnSync('mkfifo', [path]).status !== 0) throw new Error(`mkfifo ${path} failed`);
  return path;
};
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

// --- certificate tampers -------------------------------------------------------------------------------------------
const cert = family('certificate tampers', '`verify --public-key` of a signed certificate edited after signing: NOT VERIFIED, exit 1');
// The certificate's document edited and written back in canonical form (or as `raw` makes it).
function tampered(edit: (d: Json) => void, raw?: (text: string) => string): string {
  const dir = runCopy();
  const d = certOf(dir);
  edit(d);
  const text = `${canonicalJson(d)}\n`;
  writeFileSync(join(dir, 'certificate.json'), raw ? raw(text) : text);
  return dir;
}
const verifyDir = (dir: string, key = KEY) => cli(['verify', join(dir, 'certificate.json'), '--public-key', key]);
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const certAttacks: [string, (d: Json) => void, ((t: string) => string)?][] = [
  ['"outcome":"PASS" beside body', (d) => void (d['outcome'] = 'PASS')],
  ['"approvedBy" beside body', (d) => void (d['approvedBy'] = 'QA')],
  ['"unsignedReason" beside a signature', (d) => void (d['unsignedReason'] = 'none')],
  ['signature without its ==', (d) => void (d['signature'] = d['signature'].replace(/=+$/, ''))],
  ['signature in base64url', (d) => void (d['signature'] = Buffer.from(d['signature'], 'base64').toString('base64url'))],
  ['signature with extra padding', (d) => void (d['signature'] += '==')],
  ['signature with junk after it', (d) => void (d['signature'] += '!!junk')],
  ['signature with non-zero padding bits', (d) => void (d['signature'] = `${d['signature'].slice(0, 85)}${B64[B64.indexOf(d['signature'][85]) + 1]}==`)],
  ['signature empty', (d) => void (d['signature'] = '')],
  ['signature null (claims unsigned)', (d) => void (d['signature'] = null)],
  ['outcome PASS -> FAIL in the body', (d) => void (d['body'].outcome = 'FAIL')],
  ['journal file 5', (d) => void (d['body'].journal.file = 5)],
  ['journal file {}', (d) => void (d['body'].journal.file = {})],
  ['journal file ../../etc/passwd', (d) => void (d['body'].journal.file = '../../etc/passwd')],
  ['journal sha256 a number', (d) => void (d['body'].journal.sha256 = 7)],
  ['rulesVersion "2"', (d) => void (d['body'].rulesVersion = '2')],
  ['reasons an object', (d) => void (d['body'].reasons = {})],
  ['signer key a number', (d) => void (d['body'].signer.publicKeyPem = 5)],
  ['body nested 200,000 deep', () => undefined, (t) => t.replace('"kind":', `"deep":${'['.repeat(200_000)}${']'.repeat(200_000)},"kind":`)],
  ['a duplicate key', () => undefined, (t) => t.replace('{"body":{', '{"body":{"outcome":"FAIL",')],
  ['re-saved with whitespace', () => undefined, (t) => JSON.stringify(JSON.parse(t), null, 2)],
];
for (const [name, edit, raw] of certAttacks) cert(name, () => notVerified(verifyDir(tampered(edit, raw))));
cert('one byte of the journal changed', () => {
  const dir = runCopy();
  const j = readFileSync(join(dir, 'journal.jsonl'));
  j[j.length - 10] ^= 1;
  writeFileSync(join(dir, 'journal.jsonl'), j);
  return notVerified(verifyDir(dir));
});
cert('the journal replaced by a FIFO', () => {
  const dir = runCopy();
  rmSync(join(dir, 'journal.jsonl'));
  fifo(join(dir, 'journal.jsonl'));
  return notVerified(verifyDir(dir));
});
cert('the journal line of the cable identity with vendorSn 5', () => {
  const dir = runCopy();
  const path = join(dir, 'journal.jsonl');
  writeFileSync(path, readFileSync(path, 'utf8').replace('"vendorSn":"APF24150032K7N"', '"vendorSn":5'));
  return notVerified(verifyDir(dir));
});

// --- key files -----------------------------------------------------------------------------------------------------
const keys = family(
  'key files',
  '`verify --public-key FILE` (and `$CABLEQUAL_LAB_PUBLIC_KEY`) with a file that is not an Ed25519 public key: exit 2 naming it',
);
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'pem', type: 'spki' }).toString();
const ecdsa = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'pem', type: 'spki' }).toString();
const edPrivate = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const keyFiles: [string, () => string][] = [
  ['empty', () => ''],
  ['RSA public key', () => rsa],
  ['ECDSA P-256 public key', () => ecdsa],
  ['garbage text', () => 'hello\n'],
  ['Ed25519 private key', () => edPrivate],
  ['the lab key with junk after it', () => `${readFileSync(KEY, 'utf8')}junk\n`],
  ['two public keys', () => `${readFileSync(KEY, 'utf8')}${readFileSync(KEY, 'utf8')}`],
  ['100 KB of base64', () => `-----BEGIN PUBLIC KEY-----\n${'A'.repeat(100_000)}\n-----END PUBLIC KEY-----\n`],
];
const certDir = runCopy();
for (const [name, text] of keyFiles) {
  keys(`--public-key: ${name}`, () => {
    const file = join(work, `key-${name.replace(/\W+/g, '-')}.pem`);
    writeFileSync(file, text());
    return expectOneLine(verifyDir(certDir, file), 2, new RegExp(`^cablequal: --public-key ${esc(file)}: `));
  });
}
keys('--public-key /dev/zero', () => expectOneLine(verifyDir(certDir, '/dev/zero'), 2, /^cablequal: --public-key \/dev\/zero: a device, not a regular file$/));
keys('--public-key a FIFO', () => {
  const f = fifo(join(work, 'key.fifo'));
  return expectOneLine(verifyDir(certDir, f), 2, new RegExp(`^cablequal: --public-key ${esc(f)}: a pipe`));
});
keys('--public-key a directory', () => expectOneLine(verifyDir(certDir, work), 2, /: a directory, not a regular file$/));
keys('--public-key missing', () => expectOneLine(verifyDir(certDir, join(work, 'none.pem')), 2, /cannot read the lab's public key \(ENOENT\)$/));
keys('$CABLEQUAL_LAB_PUBLIC_KEY: RSA public key', () => {
  const file = join(work, 'env-rsa.pem');
  writeFileSync(file, rsa);
  const r = spawnSync(process.execPath, [BIN, 'verify', join(certDir, 'certificate.json')], {
    cwd: work,
    env: { ...env, CABLEQUAL_LAB_PUBLIC_KEY: file },
    encoding: 'utf8',
    timeout: LIMIT_MS,
  });
  return expectOneLine(
    { code: r.status, out: r.stdout, err: r.stderr, ms: 0, timedOut: r.error !== undefined },
    2,
    /^cablequal: \$CABLEQUAL_LAB_PUBLIC_KEY .*: not an Ed25519 public key/,
  );
});

// --- input files ---------------------------------------------------------------------------------------------------
const inputs = family(
  'input files',
  'protocol, scenario, manifest, ssh config, journal and record files that are hostile: one line naming the file or field, never a hang',
);
const files = join(work, 'files');
mkdirSync(files);
const big = join(files, 'big.json');
writeFileSync(big, '');
truncateSync(big, 2 << 20);
writeFileSync(join(files, 'nested.json'), `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
symlinkSync('/dev/zero', join(files, 'zero.json'));
const protocolCases: [string, string, RegExp][] = [
  ['--protocol /dev/zero', '/dev/zero', /^cablequal: \/dev\/zero: a device, not a regular file$/],
  ['--protocol a FIFO', fifo(join(files, 'protocol.fifo.json')), /a pipe, not a regular file$/],
  ['--protocol a directory', files, /a directory, not a regular file$/],
  ['--protocol 2 MiB', big, /more than the 1 MiB a protocol file may hold$/],
  ['--protocol nested 100,000 deep', join(files, 'nested.json'), /nested deeper than 32 levels/],
];
for (const [name, path, says] of protocolCases)
  inputs(name, () => expectOneLine(cli(['run', '--sim', 'good-qsfp56', '--protocol', path, '--dry-run']), 2, says));
const scenario = () => JSON.parse(readFileSync(join(ROOT, 'samples', 'scenarios', 'good-qsfp56.json'), 'utf8')) as Json;
const scenarioCases: [string, (s: Json) => void, RegExp][] = [
  ['--sim: 300-character vendor name', (s) => void (s['cable'].eeprom.vendorName = 'V'.repeat(300)), /cable\.eeprom\.vendorName: expected printable ASCII/],
  ['--sim: non-ASCII vendor name', (s) => void (s['cable'].eeprom.vendorName = 'Ämphenol'), /cable\.eeprom\.vendorName: expected printable ASCII/],
  ['--sim: bad OUI', (s) => void (s['cable'].eeprom.vendorOui = 'zz:zz'), /cable\.eeprom\.vendorOui: expected three hex bytes/],
  [
    '--sim: attenuation 600 dB',
    (s) => void (s['cable'].eeprom.attenuationDb = [2, 3, 600, 6]),
    /attenuationDb\[2\]: expected a whole number of dB in \[0, 255\]/,
  ],
  ['--sim: throughput as a string', (s) => void (s['throughput'].railGbps = '92'), /throughput\.railGbps: expected Gb\/s/],
  ['--sim: invalid rail IP', (s) => void (s['nodes'][0].railIps = ['10.0.0.300', '10.0.1.1']), /nodes\[0\]\.railIps\[0\]: expected a dotted IPv4 address/],
  ['--sim: unknown field', (s) => void (s['thermal'].tauSeconds = 1), /thermal\.tauSeconds: not allowed here/],
  ['--sim: node name with a shell character', (s) => void (s['nodes'][0].name = 'a;reboot'), /nodes\[0\]\.name: expected a host name/],
];
for (const [name, edit, says] of scenarioCases) {
  inputs(name, () => {
    const s = scenario();
    edit(s);
    const file = join(files, `${name.replace(/\W+/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(s));
    return expectOneLine(cli(['run', '--sim', file, '--protocol', 'quick', '--out', join(work, 'reports')]), 2, says);
  });
}
inputs('--sim: a scenario that is /dev/zero', () =>
  expectOneLine(cli(['run', '--sim', join(files, 'zero.json'), '--dry-run']), 2, /a device, not a regular file$/),
);
inputs('--ssh-config /dev/zero', () =>
  expectOneLine(cli(['run', '--nodes', 'a,b', '--ssh-config', '/dev/zero', '--dry-run']), 2, /\/dev\/zero: a device, not a regular file$/),
);
inputs('--ssh-config with Include /dev/zero', () => {
  const config = join(files, 'ssh_config');
  writeFileSync(config, 'Include /dev/zero\n');
  return expectOneLine(cli(['run', '--nodes', 'a,b', '--ssh-config', config, '--dry-run']), 2, /Include \/dev\/zero: .*a device, not a regular file/);
});
inputs('batch --manifest /dev/zero', () =>
  expectOneLine(cli(['batch', '--manifest', '/dev/zero', '--sim', 'good-qsfp56']), 2, /^cablequal: \/dev\/zero: a device/),
);
inputs('batch --manifest a FIFO', () =>
  expectOneLine(cli(['batch', '--manifest', fifo(join(files, 'box.fifo')), '--sim', 'good-qsfp56']), 2, /a pipe, not a regular file$/),
);
inputs('grade: a journal whose identity has vendorSn 5', () => {
  const dir = runCopy();
  const path = join(dir, 'journal.jsonl');
  writeFileSync(path, readFileSync(path, 'utf8').replace(/"vendorSn":"APF24150032K7N"/g, '"vendorSn":5'));
  const o = cli(['grade', dir]);
  const bad = clean(o);
  if (bad) return bad;
  if (o.code !== 3 || !o.out.startsWith('ERROR')) return `exit ${o.code}: ${o.out.split('\n')[0]}`;
  return /identity: ends\[0\]\.identity\.vendorSn: expected a string, got number 5/.test(o.err) ? null : 'the line is not named';
});
inputs('grade: a journal whose recorded protocol is not JSON', () => {
  const dir = runCopy();
  const path = join(dir, 'journal.jsonl');
  const lines = readFileSync(path, 'utf8').split('\n');
  lines[0] = JSON.stringify({ ...(JSON.parse(lines[0]!) as object), protocolText: 'not json' });
  writeFileSync(path, lines.join('\n'));
  return expectOneLine(cli(['grade', dir]), 2, /^cablequal: journal\.jsonl line 1 \(the protocol the run recorded/);
});
for (const cmd of ['compare', 'db import'] as const) {
  inputs(`${cmd}: a record.json whose serial is the number 5`, () => {
    const dir = runCopy();
    const r = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as Json;
    r['cable'].serial = 5;
    writeFileSync(join(dir, 'record.json'), JSON.stringify(r));
    const o = cmd === 'compare' ? cli(['compare', dir, '--out', join(work, 'c.csv')]) : cli(['db', 'import', dir, '--db', join(work, 'store.db')]);
    const bad = clean(o);
    if (bad) return bad;
    return /cable\.serial: expected a string or null, got number 5/.test(o.err + o.out) ? null : `accepted: ${(o.out + o.err).split('\n')[0]}`;
  });
}

// --- GPU-load programs ---------------------------------------------------------------------------------------------
const loads = family('GPU-load programs', 'a protocol whose GPU load or check hands a shell or an interpreter program text: exit 2 naming commands.gpuLoad');
const protocolWith = (gpuLoad: unknown) => {
  const p = JSON.parse(readFileSync(join(ROOT, 'protocols', 'quick.json'), 'utf8')) as Json;
  p['commands'].gpuLoad = gpuLoad;
  const file = join(files, `load-${loads.length}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(p));
  return file;
};
const gpuLoads: [string, unknown][] = [
  ['/bin/sh -c "reboot; ..."', { program: '/bin/sh', args: ['-c', 'reboot; gpu_burn {durationS}'] }],
  ['bash -lc', { program: 'bash', args: ['-lc', 'reboot'] }],
  ['dash -ec', { program: 'dash', args: ['-ec', 'reboot'] }],
  ['python3 -c', { program: 'python3', args: ['-c', 'import os; os.system("reboot")'] }],
  ['docker run IMAGE python -c', { program: 'docker', args: ['run', '--rm', 'img', 'python', '-c', 'import os'] }],
  ['docker run --entrypoint sh IMAGE -c', { program: 'docker', args: ['run', '--entrypoint', 'sh', 'img', '-c', 'reboot'] }],
  ['env perl -e', { program: 'env', args: ['perl', '-e', 'system "reboot"'] }],
  ['ruby -e', { program: 'ruby', args: ['-e', 'system "reboot"'] }],
  ['node --eval', { program: 'node', args: ['--eval', 'require("child_process")'] }],
  ['busybox sh -c', { program: 'busybox', args: ['sh', '-c', 'reboot'] }],
  ['awk program text', { program: 'awk', args: ['system("reboot")'] }],
  ['ssh to another host', { program: 'ssh', args: ['spark-b', 'reboot'] }],
  ['one-line form "sh -c reboot"', 'sh -c reboot'],
  ['check: sh -c', { program: 'gpu_burn', args: ['-m', '16384', '-c', '/usr/local/share/gpu-burn/compare.ptx', '{durationS}'], check: ['sh', '-c', 'reboot'] }],
];
for (const [name, gpuLoad] of gpuLoads) {
  loads(name, () =>
    expectOneLine(cli(['run', '--sim', 'good-qsfp56', '--protocol', protocolWith(gpuLoad), '--dry-run']), 2, /: commands\.gpuLoad(\.check)?: expected /),
  );
}

// --- dry-run options -----------------------------------------------------------------------------------------------
const dry = family('dry-run options', '`run --dry-run` given what a run refuses, or interrupted: exit 2 (or 130 on Ctrl-C), nothing run or written');
writeFileSync(join(work, 'afile'), 'x\n');
const dryCases: [string, string[], RegExp][] = [
  ['--sim-fault bogus', ['--sim', 'good-qsfp56', '--sim-fault', 'bogus'], /^cablequal: bad fault "bogus"/],
  ['--sim-fault on an unknown node', ['--sim', 'good-qsfp56', '--sim-fault', 'ssh-drop@10s:spark-z'], /no simulated node "spark-z"/],
  ['--seed with --nodes', ['--nodes', 'a,b', '--seed', '3'], /--sim-fault and --seed apply to the simulated lab only/],
  ['--sim-fault with --nodes', ['--nodes', 'a,b', '--sim-fault', 'ssh-drop@10s'], /--sim-fault and --seed apply to the simulated lab only/],
  // `run --sim X --speed N` runs the lab in process at N times real time (#23 item 8), up to 100.
  ['--speed above the --sim maximum', ['--sim', 'good-qsfp56', '--speed', '500'], /--speed 500: with --sim at most 100/],
  ['--speed 0', ['--nodes', 'a,b', '--speed', '0'], /--speed: expected a speed-up factor from 0\.1 to 1000/],
  ['--label empty', ['--sim', 'good-qsfp56', '--label', ' '], /--label: empty/],
  ['--out under a file', ['--sim', 'good-qsfp56', '--out', 'afile/reports'], /--out: .*afile is a file, not a directory$/],
  ['--protocol /dev/zero', ['--sim', 'good-qsfp56', '--protocol', '/dev/zero'], /a device, not a regular file$/],
];
for (const [name, args, says] of dryCases) dry(name, () => expectOneLine(cli(['run', ...args, '--dry-run']), 2, says));
dry('Ctrl-C during the dry run of the full procedure', async () => {
  const child = spawn(process.execPath, [BIN, 'run', '--sim', 'good-qsfp56', '--dry-run'], { cwd: work, env });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  // Once it is running (its modules loaded), one SIGINT, as a terminal's Ctrl-C sends.
  setTimeout(() => child.kill('SIGINT'), 700);
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null | 'timeout' }>((resolve) => {
    const t = setTimeout(() => (child.kill('SIGKILL'), resolve({ code: null, signal: 'timeout' })), LIMIT_MS);
    child.on('exit', (c, sig) => (clearTimeout(t), resolve({ code: c, signal: sig })));
  });
  if (signal === 'timeout') return `still running ${LIMIT_MS / 1000} s after one SIGINT`;
  // The signal came before the CLI installed its handler (a loaded machine): node's default ends it at once.
  if (signal === 'SIGINT' && out === '') return null;
  if (code === 0 && out.includes('== spark-a ==')) return null; // it had finished before the signal: nothing to stop
  return code === 130 && out === '' && /dry run interrupted/.test(err) ? null : `exit ${code}: ${err.trim().split('\n').at(-1)}`;
});

// --- journal edits, store re-checks, faults mid-run (issue #32 items 1, 2, 5): scripts/adversarial-integrity.ts ----
integrityFamilies({ bin: BIN, work, env, limitMs: LIMIT_MS, family, clean, expectOneLine });
// --- hostile files (#32 item 3) -----------------------------------------------------------------------------------
const hostile = family(
  'hostile files',
  "a run's record.json, journal or certificate that is a FIFO, /dev/zero, a gigabyte, or holds 1e999: one line naming it (exit 2, or NOT VERIFIED), never a hang or a stack trace",
);
// A run copy whose `file` is replaced by a FIFO (or a link to /dev/zero).
function runWith(file: string, what: 'fifo' | 'zero'): string {
  const dir = runCopy();
  rmSync(join(dir, file), { force: true });
  if (what === 'fifo') fifo(join(dir, file));
  else symlinkSync('/dev/zero', join(dir, file));
  return dir;
}
// The one warning line of an import or a compare that skipped the run, and its exit code.
function skippedWith(o: Outcome, code: number, says: RegExp): string | null {
  const bad = clean(o);
  if (bad) return bad;
  if (o.code !== code) return `exit ${o.code}, expected ${code}: ${o.err.split('\n')[0]}`;
  const warnings = o.err.trimEnd().split('\n');
  return warnings.length === 1 && says.test(warnings[0]!) ? null : `says "${warnings.join(' | ')}"`;
}
hostile('db import: record.json a FIFO', () => {
  const dir = runWith('record.json', 'fifo');
  return skippedWith(cli(['db', 'import', dir, '--db', join(work, 'h1.db')]), 2, /^warning: skipped .*record\.json: a pipe, not a regular file$/);
});
hostile('db import: record.json is /dev/zero', () => {
  const dir = runWith('record.json', 'zero');
  return skippedWith(cli(['db', 'import', dir, '--db', join(work, 'h2.db')]), 2, /^warning: skipped .*record\.json: a device, not a regular file$/);
});
// The store re-grades the journal (#32 item 2): a journal that is a pipe cannot be re-checked, the run is skipped.
hostile('db import: journal.jsonl and certificate.json FIFOs beside a good record', () => {
  const dir = runWith('journal.jsonl', 'fifo');
  rmSync(join(dir, 'certificate.json'));
  fifo(join(dir, 'certificate.json'));
  return skippedWith(cli(['db', 'import', dir, '--db', join(work, 'h3.db')]), 2, /^warning: skipped .*journal\.jsonl: a pipe, not a regular file$/);
});
hostile('regress: a run whose record.json is a FIFO', () => {
  const dir = runWith('record.json', 'fifo');
  const o = cli(['regress', '--baseline', runCopy(), dir]);
  return clean(o) ?? (o.code === 3 && /record\.json: a pipe, not a regular file/.test(o.out + o.err) ? null : `exit ${o.code}: ${o.out.split('\n')[0]}`);
});
hostile('compare: a run whose record.json is a FIFO', () => {
  const dir = runWith('record.json', 'fifo');
  return skippedWith(cli(['compare', dir, runCopy(), '--out', join(work, 'h.csv')]), 0, /^warning: skipped .*record\.json: a pipe, not a regular file$/);
});
hostile('grade: journal.jsonl a FIFO', () =>
  expectOneLine(cli(['grade', runWith('journal.jsonl', 'fifo')]), 2, /journal\.jsonl: not a file \(a journal is a file of JSON lines\)$/),
);
hostile('grade: a journal of 1 GiB (sparse: the journal, then zeros)', () => {
  const dir = runCopy();
  truncateSync(join(dir, 'journal.jsonl'), 1 << 30);
  return expectOneLine(cli(['grade', dir]), 2, /journal\.jsonl: 1073741824 bytes, more than the 768 MiB a journal file may hold$/);
});
hostile('status: a run whose live.json is a FIFO', () => {
  const dir = runCopy();
  fifo(join(dir, 'live.json'));
  const o = cli(['status', '--out', dir, '--json']);
  return clean(o) ?? (o.code === 0 && o.out.trim() === '[]' ? null : `exit ${o.code}: ${o.out.split('\n')[0]}`);
});
for (const [name, spelled] of [
  ['1e999', '1e999'],
  ['-1e999 in an array', '[1,-1e999]'],
] as const) {
  hostile(`verify: a certificate number ${name}`, () => {
    const dir = runCopy();
    const d = certOf(dir);
    d['body'].summary.crcErrors = 7357;
    writeFileSync(join(dir, 'certificate.json'), `${canonicalJson(d)}\n`.replace('"crcErrors":7357', `"crcErrors":${spelled}`));
    const o = verifyDir(dir);
    return notVerified(o) ?? (/body\.summary\.crcErrors(\[1\])?: a number that is not finite/.test(o.err) ? null : 'the field is not named');
  });
}

// --- output paths (#32 item 4) ------------------------------------------------------------------------------------
const outputs = family(
  'output paths',
  '`compare --out` and `regress --junit` aimed at a FIFO, a device or a symbolic link: exit 2 naming it, the path left as it was',
);
const precious = join(work, 'precious.txt');
let outPaths = 0;
writeFileSync(precious, 'keep\n');
for (const [what, make, kind] of [
  ['a FIFO', (p: string) => fifo(p), 'a pipe'],
  // A character device of the script's own (mknod as root): against a build without the check, as root, the rename
  // replaced the machine's /dev/null (it did, once, run against the build before #32). Not root: /dev/null, which
  // such a build cannot replace.
  ['a character device', (p: string) => (spawnSync('mknod', ['-m', '666', p, 'c', '1', '3']).status === 0 ? p : '/dev/null'), 'a device'],
  ['a symbolic link', (p: string) => (symlinkSync(precious, p), p), 'a symbolic link'],
] as const) {
  for (const [cmd, args] of [
    ['compare --out', (p: string) => ['compare', runCopy(), '--out', p]],
    ['regress --junit', (p: string) => ['regress', '--baseline', runCopy(), runCopy(), '--junit', p]],
  ] as const) {
    outputs(`${cmd} ${what}`, () => {
      const path = make(join(work, `out-${outPaths++}`));
      const held = expectOneLine(cli(args(path)), 2, new RegExp(`: ${kind}, not a regular file: cablequal writes only a new file or over a regular one`));
      if (held) return held;
      const st = lstatSync(path);
      if (kind === 'a pipe' && !st.isFIFO()) return 'the FIFO was replaced';
      if (kind === 'a symbolic link' && (!st.isSymbolicLink() || readFileSync(precious, 'utf8') !== 'keep\n')) return 'the link or its target changed';
      if (kind === 'a device' && !st.isCharacterDevice()) return 'the device was replaced';
      return null;
    });
  }
}

// --- small ones (#32 item 6) ----------------------------------------------------------------------------------------
const small = family(
  'small ones',
  'an empty --public-key, $CABLEQUAL_DB=off, --speed 1e-300, --json --dry-run, a missing --ssh-config, dashboard --out <a file>, ESC in a label, a body re-signed unpinned, status --json: each as promised',
);
small("verify --public-key ''", () =>
  expectOneLine(
    cli(['verify', join(certDir, 'certificate.json'), '--public-key', ''], work, { CABLEQUAL_LAB_PUBLIC_KEY: KEY }),
    2,
    /^cablequal: --public-key: empty/,
  ),
);
small('db import with $CABLEQUAL_DB=off', () => {
  const o = expectOneLine(cli(['db', 'import', runCopy()]), 2, /^cablequal: db import: \$CABLEQUAL_DB=off writes no store/);
  return o ?? (existsSync(join(work, 'off')) ? 'a file named off was created' : null);
});
small('dashboard with $CABLEQUAL_DB=off', () =>
  expectOneLine(cli(['dashboard', '--out', work, '--listen', '0']), 2, /\$CABLEQUAL_DB=off: there is no store to show/),
);
small('run --speed 1e-300', () =>
  expectOneLine(
    cli(['run', '--sim', 'good-qsfp56', '--speed', '1e-300']),
    2,
    /^cablequal: --speed: expected a speed-up factor from 0\.1 to 1000, got "1e-300"$/,
  ),
);
small('sim serve --speed 1e-300', () =>
  expectOneLine(
    cli(['sim', 'serve', '--scenario', 'good-qsfp56', '--speed', '1e-300']),
    2,
    /^cablequal: --speed: expected a speed-up factor from 0\.1 to 1000/,
  ),
);
small('run --json --dry-run prints JSON', () => {
  const o = cli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--json', '--dry-run']);
  const bad = clean(o);
  if (bad) return bad;
  try {
    const plan = JSON.parse(o.out) as { schema?: string; commands?: unknown[] };
    return o.code === 0 && plan.schema === 'cablequal.dry-run/1' && (plan.commands?.length ?? 0) > 10 ? null : `exit ${o.code}, schema ${plan.schema}`;
  } catch {
    return `not JSON: ${o.out.split('\n')[0]}`;
  }
});
small('run --ssh-config missing', () =>
  expectOneLine(cli(['run', '--nodes', 'a,b', '--ssh-config', join(work, 'no-such-config'), '--dry-run']), 2, /--ssh-config .*no-such-config: no such file/),
);
small('dashboard --out a file', () =>
  expectOneLine(cli(['dashboard', '--out', 'afile', '--listen', '0'], work, { CABLEQUAL_DB: '' }), 2, /^cablequal: --out afile: not a directory/),
);
// compare reads the journal (a record.json's own label is not what it shows): the label is journalled by a run given it.
small('compare: a label holding ESC [2J and BEL, journalled by the run', () => {
  const made = cli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--label', 'x\u001b[2J\u0007', '--out', join(work, 'esc-runs'), '--json']);
  if (made.code !== 0) return `the run with that label ended ${made.code}`;
  const dir = (JSON.parse(made.out) as { runDir: string }).runDir;
  const out = join(work, 'esc.csv');
  const o = cli(['compare', dir, '--out', out]);
  const bad = clean(o);
  if (bad) return bad;
  const csv = readFileSync(out, 'utf8');
  return o.code === 0 && !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(csv) && csv.includes('x\\x1b[2J\\x07')
    ? null
    : 'a control character reached compare.csv';
});
// The body re-signed by another key, so that only an unpinned verify's consistency checks stand between it and OK.
const mallory = generateKeyPairSync('ed25519');
const malloryPem = mallory.publicKey.export({ format: 'pem', type: 'spki' }).toString();
const malloryFp = fingerprint(mallory.publicKey);
for (const [name, edit] of [
  ['another serial', (b: Json) => void (b['cable'].serial = 'MT9999XX00001')],
  ['simulated: false', (b: Json) => void (b['simulated'] = false)],
] as const) {
  small(`verify unpinned: a body re-signed with ${name}`, () => {
    const dir = runCopy();
    const d = certOf(dir);
    edit(d['body']);
    d['body'].signer = { algorithm: 'Ed25519', fingerprint: malloryFp, publicKeyPem: malloryPem };
    d['signature'] = sign(null, Buffer.from(canonicalJson(d['body'])), mallory.privateKey).toString('base64');
    writeFileSync(join(dir, 'certificate.json'), `${canonicalJson(d)}\n`);
    const o = cli(['verify', join(dir, 'certificate.json')]);
    return (
      notVerified(o) ??
      (/the journal('s cable serial| says the run was simulated)/.test(o.err) ? null : `not the journal's disagreement: ${o.err.split('\n')[0]}`)
    );
  });
}
small('status --json is one JSON array', () => {
  const o = cli(['status', '--out', work, '--json']);
  const bad = clean(o);
  if (bad) return bad;
  try {
    return Array.isArray(JSON.parse(o.out)) && o.code === 0 ? null : `exit ${o.code}: not an array`;
  } catch {
    return `not JSON: ${o.out.split('\n')[0]}`;
  }
});

// --- run them ------------------------------------------------------------------------------------------------------
const BEGIN = '<!-- adversarial:begin (generated by `npx tsx scripts/adversarial.ts --write`; do not edit) -->';
const END = '<!-- adversarial:end -->';
const rows: string[] = [];
const failed: string[] = [];
let tried = 0;
let held = 0;
for (const f of families) {
  let ok = 0;
  for (const a of f.attacks) {
    let why: string | null;
    try {
      why = await a.run();
    } catch (e) {
      why = `the script failed: ${(e as Error).message}`;
    }
    if (why === null) ok++;
    else failed.push(`${f.family}: ${a.name}: ${why}`);
    process.stderr.write(`${why === null ? 'held' : 'NOT HELD'}  ${f.family}: ${a.name}${why ? ` (${why})` : ''}\n`);
  }
  tried += f.attacks.length;
  held += ok;
  rows.push(`| ${f.family} | ${f.what} | ${f.attacks.length} | ${ok} |`);
}

// The dry run's cost: wall time of the full default procedure's plan, median of three (machine shared, see below).
// CPU time (user + system) from /usr/bin/time when the machine has it: the wall time of a shared machine varies.
const walls: number[] = [];
const cpus: number[] = [];
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, BIN, 'run', '--sim', 'good-qsfp56', '--dry-run'], {
    cwd: work,
    env,
    encoding: 'utf8',
  });
  walls.push(performance.now() - t);
  const m = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr ?? '');
  if (m) cpus.push(Number(m[1]) + Number(m[2]));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const dryWallS = median(walls) / 1000;
const dryCpu = cpus.length === 3 ? `, ${median(cpus).toFixed(2)} s of CPU` : '';

const table = [
  BEGIN,
  `Measured ${new Date().toISOString().slice(0, 10)} on the shared 2-core machine (load average ${loadavg()[0]!.toFixed(1)}), cablequal as built.`,
  '',
  '| family | what is tried | tried | held |',
  '|---|---|---|---|',
  ...rows,
  `| **all** | | **${tried}** | **${held}** |`,
  '',
  `\`run --sim good-qsfp56 --dry-run\` (the full 75-minute procedure's plan): ${dryWallS.toFixed(2)} s wall${dryCpu}, medians of 3, process start included (before: ~8 s wall, ~8 s of CPU, the whole virtual run executed).`,
  ...(failed.length ? ['', 'Not held:', '', ...failed.map((f) => `- ${f}`)] : []),
  END,
].join('\n');
process.stdout.write(`${table}\n`);
if (process.argv.includes('--write')) {
  const doc = join(ROOT, 'docs', 'adversarial.md');
  const text = readFileSync(doc, 'utf8');
  const a = text.indexOf('<!-- adversarial:begin');
  const b = text.indexOf(END);
  if (a < 0 || b < 0) throw new Error(`${doc}: no adversarial markers`);
  writeFileSync(doc, text.slice(0, a) + table + text.slice(b + END.length));
}
rmSync(work, { recursive: true, force: true });
process.exitCode = failed.length ? 1 : 0;
