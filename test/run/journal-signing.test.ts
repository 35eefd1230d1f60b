// The journal signed as it is written (#32 item 1a) and a store that re-checks (#32 item 2). Runs on the simulated lab
// with the quick protocol and a throw-away lab key ($CABLEQUAL_LAB_KEY): the run signs its journal's chain head at
// each checkpoint. Each tamper is the issue's, made as a forger with a script would (lines edited, the hash chain
// recomputed, no lab key): it may still be graded for a look, but `report` refuses to re-issue it and `db import`
// refuses to take it, each in one line; a record.json edited FAIL -> PASS is imported as the journal's FAIL.
import { cpSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { certificateDocumentFor, writeCertificateDocument } from '../../src/report/certificate-json.js';
import { keygen, loadLabKey } from '../../src/report/sign.js';
import { CHAIN_START, chainLine, lineHash } from '../../src/run/journal-chain.js';
import { readJournal } from '../../src/run/journal.js';
import { trustOf } from '../../src/cli/journal-trust.js';
import { chooseStore, openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/cli.js';

type Line = Record<string, unknown>;
let root: string;
let env: NodeJS.ProcessEnv;
const runDirs: Record<string, string> = {};
let fingerprint: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'cq-signed-'));
  const k = await keygen(join(root, 'keys'));
  fingerprint = k.fingerprint;
  env = { CABLEQUAL_LAB_KEY: k.privateKeyPath };
  for (const s of ['steady-lane-qsfp56', 'failing-clone']) {
    const r = await runCli(['run', '--sim', s, '--protocol', 'protocols/quick.json', '--label', s, '--out', join(root, 'reports'), '--db', 'off', '--json'], {
      env,
    });
    runDirs[s] = (JSON.parse(r.out) as { runDir: string }).runDir;
  }
}, 180_000);

const linesOf = (dir: string): Line[] =>
  readFileSync(join(dir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);

// A copy of a run directory whose journal is `lines` re-chained (every prev recomputed).
function forged(from: string, lines: Line[]): string {
  const dir = join(mkdtempSync(join(root, 'forged-')), 'run');
  cpSync(from, dir, { recursive: true });
  let prev = CHAIN_START;
  const out = lines.map((l) => {
    const o = { ...l };
    delete o['prev'];
    const line = chainLine(JSON.stringify(o), prev);
    prev = lineHash(line);
    return line;
  });
  writeFileSync(join(dir, 'journal.jsonl'), `${out.join('\n')}\n`);
  return dir;
}

const relabelled = (dir: string) => linesOf(dir).map((l) => (l['type'] === 'sample' && String(l['phase']).startsWith('soak') ? { ...l, phase: 'nccl' } : l));

describe('the run signs its journal', { timeout: 60_000 }, () => {
  it('run-start names the signer; a signature line at each phase end and at the end; grade and report take it as signed', async () => {
    const dir = runDirs['steady-lane-qsfp56']!;
    const lines = linesOf(dir);
    expect(lines[0]!['journalSigner']).toEqual({ algorithm: 'Ed25519', fingerprint });
    const sigs = lines.filter((l) => l['type'] === 'journal-sig');
    expect(sigs.length).toBeGreaterThanOrEqual(lines.filter((l) => l['type'] === 'phase-end').length);
    expect(lines.at(-1)!['type']).toBe('journal-sig');
    expect(trustOf(readJournal(join(dir, 'journal.jsonl')), (await loadLabKey(env['CABLEQUAL_LAB_KEY']!))!.publicKeyPem)).toEqual({
      status: 'signed',
      signer: fingerprint,
      signatures: sigs.length,
    });
    const g = await runCli(['grade', dir, '--json'], { env });
    expect([g.code, (JSON.parse(g.out) as { journalSignatures: string }).journalSignatures, g.err]).toEqual([0, 'signed', '']);
    const r = await runCli(['report', dir], { env });
    expect(r.code, r.err).toBe(0);
    expect((JSON.parse(readFileSync(join(dir, 'setup-check.json'), 'utf8')) as { signature: unknown }).signature).toEqual(expect.any(String));
  });
});

describe('a journal edited without the lab key is never re-issued', { timeout: 60_000 }, () => {
  it('soak samples relabelled and re-chained: grade says MARGINAL and that the signatures do not hold; report refuses in one line, exit 2', async () => {
    const dir = forged(runDirs['steady-lane-qsfp56']!, relabelled(runDirs['steady-lane-qsfp56']!));
    const before = readFileSync(join(dir, 'setup-check.json'), 'utf8');
    const g = await runCli(['grade', dir, '--json'], { env });
    expect((JSON.parse(g.out) as { outcome: string }).outcome).toBe('MARGINAL');
    expect(g.err).toMatch(
      /^warning: .*journal\.jsonl: journal signatures do not hold \(the signature on line \d+ is not the lab key's signature of the lines before it\)/,
    );
    const r = await runCli(['report', dir], { env });
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/journal\.jsonl: its journal signatures do not hold \(.*\): refusing to re-issue its documents/);
    expect(readFileSync(join(dir, 'setup-check.json'), 'utf8')).toBe(before);
  });

  it('signature lines stripped: report refuses (they were stripped); marked as a run without a lab key as well: refused beside a signed document', async () => {
    const src = runDirs['steady-lane-qsfp56']!;
    const stripped = relabelled(src).filter((l) => l['type'] !== 'journal-sig');
    const r1 = await runCli(['report', forged(src, stripped)], { env });
    expect([r1.code, r1.err]).toEqual([
      2,
      expect.stringMatching(/run-start names the signer sha256:[0-9a-f]{64}, but no line carries a signature: they were stripped/),
    ]);
    const unsigned = stripped.map((l) => (l['type'] === 'run-start' ? { ...l, journalSigner: null } : l));
    const r2 = await runCli(['report', forged(src, unsigned)], { env });
    expect([r2.code, r2.err]).toEqual([2, expect.stringMatching(/written by a run without a lab key, yet .*setup-check\.json is signed/)]);
  });

  it('db import refuses the forged journal, naming it; the untouched run is imported', async () => {
    const dir = forged(runDirs['steady-lane-qsfp56']!, relabelled(runDirs['steady-lane-qsfp56']!));
    const r = await runCli(['db', 'import', dir, '--out', join(root, 'store-forged')], { env });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^warning: skipped .*: not imported: .*journal\.jsonl: journal signatures do not hold/m);
    const ok = await runCli(['db', 'import', runDirs['steady-lane-qsfp56']!, '--out', join(root, 'store-forged')], { env });
    expect([ok.code, ok.err]).toEqual([0, '']);
  });
});

async function storeRows(out: string) {
  const store = await openStore(chooseStore({ out }));
  try {
    return await store.db.all<{ run_id: string; run_dir: string; outcome: string }>('SELECT run_id, run_dir, outcome FROM runs ORDER BY run_dir');
  } finally {
    await store.close();
  }
}

describe('db import takes the journal`s verdict, and a run id from one run directory', { timeout: 60_000 }, () => {
  it('record.json edited FAIL -> PASS: the store holds FAIL, and a warning names the disagreement', async () => {
    const dir = join(mkdtempSync(join(root, 'edited-')), 'run');
    cpSync(runDirs['failing-clone']!, dir, { recursive: true });
    const rec = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as Record<string, unknown>;
    expect(rec['outcome']).toBe('FAIL');
    writeFileSync(join(dir, 'record.json'), JSON.stringify({ ...rec, outcome: 'PASS', reasons: [] }));
    const store = mkdtempSync(join(root, 'store-'));
    const r = await runCli(['db', 'import', dir, '--out', store], { env });
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/record\.json says PASS for run \S+, its journal grades FAIL for run \S+: the journal's is imported/);
    expect((await storeRows(store)).map((x) => x.outcome)).toEqual(['FAIL']);
  });

  it('compare reads the same trusted result: the edited record`s run is compared as the journal`s FAIL', async () => {
    const dir = join(mkdtempSync(join(root, 'edited-')), 'run');
    cpSync(runDirs['failing-clone']!, dir, { recursive: true });
    const rec = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'record.json'), JSON.stringify({ ...rec, outcome: 'PASS', reasons: [] }));
    const out = join(mkdtempSync(join(root, 'cmp-')), 'compare.csv');
    const r = await runCli(['compare', dir, '--out', out], { env });
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/record\.json says PASS .* its journal grades FAIL/);
    const row = readFileSync(out, 'utf8').trim().split('\n')[1]!;
    expect(row).toMatch(/(^|,)FAIL(,|$)/);
    expect(row).not.toMatch(/(^|,)PASS(,|$)/);
  });

  it('a copy of a run directory elsewhere carrying its run id: the second claimant is refused with both paths', async () => {
    const first = runDirs['failing-clone']!;
    const copy = join(mkdtempSync(join(root, 'claimant-')), 'run');
    cpSync(first, copy, { recursive: true });
    const store = mkdtempSync(join(root, 'store-'));
    expect((await runCli(['db', 'import', first, '--out', store], { env })).code).toBe(0);
    const r = await runCli(['db', 'import', copy, '--out', store], { env });
    expect(r.code).toBe(2);
    expect(r.err).toContain(`belongs to ${first}; ${copy} claims it too: not imported`);
    expect((await storeRows(store)).map((x) => x.run_dir)).toEqual([first]);
  });
});

describe('journals written before journals were signed', { timeout: 60_000 }, () => {
  it('report signs a re-issue only when a document signed by the lab key pins the journal; else unsigned, or refused beside a signed one', async () => {
    // An "old" journal: a run's lines without the signer field and signature lines (as rules version 4 wrote them).
    const src = runDirs['failing-clone']!;
    const old = linesOf(src)
      .filter((l) => l['type'] !== 'journal-sig')
      .map((l) => {
        const o = { ...l };
        delete o['journalSigner'];
        return o;
      });
    const dir = forged(src, old);
    expect(trustOf(readJournal(join(dir, 'journal.jsonl')), null).status).toBe('old');
    // Its signed certificate pins the original journal, not this one: refused.
    const r1 = await runCli(['report', dir], { env });
    expect([r1.code, r1.err]).toEqual([2, expect.stringMatching(/written before journals were signed, and .* does not pin its SHA-256/)]);
    // A certificate signed by the lab key over these very bytes (as an old run's was): re-issued, signed.
    const key = (await loadLabKey(env['CABLEQUAL_LAB_KEY']!))!;
    const record = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8'));
    await writeCertificateDocument(await certificateDocumentFor(record, dir, { labKey: key }), dir);
    const r2 = await runCli(['report', dir], { env });
    expect(r2.code, r2.err).toBe(0);
    // (The quick protocol is a set-up check: its document is setup-check.json.)
    expect((JSON.parse(readFileSync(join(dir, 'setup-check.json'), 'utf8')) as { signature: unknown }).signature).toEqual(expect.any(String));
    // No signed document at all: re-rendered unsigned, saying why.
    const bare = forged(src, old);
    for (const f of readdirSync(bare)) if (f.endsWith('.json') && f !== 'record.json') writeFileSync(join(bare, f), '{}');
    const r3 = await runCli(['report', bare], { env });
    expect(r3.code, r3.err).toBe(0);
    expect(r3.err).toMatch(/^note: the journal was written before journals were signed and no signed document pins it: re-issued unsigned$/m);
    expect((JSON.parse(readFileSync(join(bare, 'setup-check.json'), 'utf8')) as { signature: unknown }).signature).toBeNull();
  });
});
