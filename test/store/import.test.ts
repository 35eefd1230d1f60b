// `cablequal db import` and the store's hooks in `run`: quoted globs expanded by cablequal, a reports tree walked,
// a killed run (journal only) imported as the record builder grades it, bad directories skipped with a warning,
// bad arguments a one-line usage error, and a store that cannot be reached never failing a run.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseStore, openStore } from '../../src/store/open-store.js';
import { expandPaths } from '../../src/store/import.js';
import { rowsOfRecord } from '../../src/store/run-row.js';
import { runCli } from '../helpers/cli.js';
import { tempRoot } from '../fixtures/records/run-dir.js';

const env = { CABLEQUAL_LAB_KEY: '/nonexistent/key.pem' };
let root: string;
const runs: { runDir: string; outcome: string }[] = [];

beforeAll(async () => {
  root = tempRoot('cq-import-');
  for (const scenario of ['good-qsfp112', 'crc-errors']) {
    const r = await runCli(['run', '--sim', scenario, '--protocol', 'quick', '--out', 'made', '--db', 'off', '--json'], { cwd: root, env });
    const j = JSON.parse(r.out) as { runDir: string; outcome: string };
    runs.push({ runDir: j.runDir, outcome: j.outcome });
  }
}, 60_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function rows(out: string) {
  const store = await openStore(chooseStore({ out }));
  try {
    return await store.db.all<{ run_id: string; outcome: string; state: string; certificate_file: string | null; certificate_sha256: string | null }>(
      'SELECT run_id, outcome, state, certificate_file, certificate_sha256 FROM runs ORDER BY run_id',
    );
  } finally {
    await store.close();
  }
}

describe('cablequal db import', () => {
  it('--db off wrote no store; a quoted glob is expanded by cablequal; a second import changes nothing', async () => {
    expect(existsSync(join(root, 'made', 'cablequal.db'))).toBe(false);
    const first = await runCli(['db', 'import', 'made/*/*', '--out', 'store1'], { cwd: root, env });
    expect(first.code, first.err).toBe(0);
    expect(first.out).toMatch(/^2 run directories: 2 added, 0 updated, 0 unchanged/m);
    const before = await rows(join(root, 'store1'));
    expect(before.map((r) => r.outcome).sort()).toEqual(runs.map((r) => r.outcome).sort());
    expect(before.every((r) => r.state === 'finished' && r.certificate_file === 'setup-check.html' && /^[0-9a-f]{64}$/.test(r.certificate_sha256 ?? ''))).toBe(
      true,
    );
    const second = await runCli(['db', 'import', 'made', '--out', 'store1'], { cwd: root, env });
    expect(second.out).toMatch(/^2 run directories: 0 added, 0 updated, 2 unchanged/m);
    expect(await rows(join(root, 'store1'))).toEqual(before);
  });

  it('a run killed before its record (journal only) is imported as the record builder grades it: ABORTED', async () => {
    const copy = join(root, 'killed', 'cable', 'run-killed');
    mkdirSync(join(root, 'killed', 'cable'), { recursive: true });
    cpSync(runs[0]!.runDir, copy, { recursive: true });
    unlinkSync(join(copy, 'record.json'));
    const r = await runCli(['db', 'import', 'killed', '--out', 'store2'], { cwd: root, env });
    expect(r.code, r.err).toBe(0);
    const [row] = await rows(join(root, 'store2'));
    // The journal has a run-end line (the copy was taken after the run ended): its own verdict, rebuilt.
    expect(row!.outcome).toBe(runs[0]!.outcome);
  });

  it('each row says what it was checked against: a re-graded unsigned journal, or a record.json alone (unchecked, never a qualified cable)', async () => {
    const alone = join(root, 'alone', 'cable', 'run-alone');
    mkdirSync(join(root, 'alone', 'cable'), { recursive: true });
    cpSync(runs[0]!.runDir, alone, { recursive: true });
    unlinkSync(join(alone, 'journal.jsonl'));
    cpSync(runs[1]!.runDir, join(root, 'alone', 'cable', 'run-journal'), { recursive: true });
    const r = await runCli(['db', 'import', 'alone', '--out', 'store5'], { cwd: root, env });
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/run-alone: no cablequal journal beside record\.json: taken from the record alone, unchecked \(stored as journal_check record-only/);
    const store = await openStore(chooseStore({ out: join(root, 'store5') }));
    try {
      const got = await store.db.all<{ run_dir: string; journal_check: string; qualifies: number }>(
        'SELECT run_dir, journal_check, qualifies FROM runs ORDER BY run_dir',
      );
      // The runs were made without a lab key (CABLEQUAL_LAB_KEY names no file): their journals are unsigned.
      expect(got.map((x) => [x.run_dir.split('/').at(-1), x.journal_check, Number(x.qualifies)])).toEqual([
        ['run-alone', 'record-only', 0],
        ['run-journal', 'unsigned', 0],
      ]);
    } finally {
      await store.close();
    }
  });

  it("a run's own row ('run'), imported again from its directory: unchanged, still 'run'; an edited one is taken again", async () => {
    const made = await runCli(['run', '--sim', 'good-qsfp112', '--protocol', 'quick', '--out', 'own', '--json'], { cwd: root, env });
    const { runDir } = JSON.parse(made.out) as { runDir: string };
    const checks = async () => {
      const store = await openStore(chooseStore({ out: join(root, 'own') }));
      try {
        return (await store.db.all<{ journal_check: string }>('SELECT journal_check FROM runs')).map((r) => r.journal_check);
      } finally {
        await store.close();
      }
    };
    expect(await checks()).toEqual(['run']);
    const again = await runCli(['db', 'import', 'own', '--out', 'own'], { cwd: root, env });
    expect(again.code, again.err).toBe(0);
    expect(again.out).toMatch(/^1 run directory: 0 added, 0 updated, 1 unchanged/m);
    expect(await checks()).toEqual(['run']);
    // Its journal gone and its record.json edited: no longer what the run wrote: taken again, as it is now.
    unlinkSync(join(runDir, 'journal.jsonl'));
    const record = JSON.parse(readFileSync(join(runDir, 'record.json'), 'utf8')) as { label?: string };
    writeFileSync(join(runDir, 'record.json'), JSON.stringify({ ...record, label: 'edited' }));
    const alone = await runCli(['db', 'import', 'own', '--out', 'own'], { cwd: root, env });
    expect(alone.out).toMatch(/^1 run directory: 0 added, 1 updated, 0 unchanged/m);
    expect(await checks()).toEqual(['record-only']);
  });

  it('a qualified PASS from a record alone counts as no qualified cable; checked against its journal it does', () => {
    const record: unknown = JSON.parse(readFileSync('test/fixtures/journals-v5/good-qsfp56-spark-burnin/record.json', 'utf8'));
    const row = (journalCheck: 'record-only' | 'signed' | 'run') => rowsOfRecord(record, { runDir: 'x', controller: null, journalCheck }).run;
    expect([row('record-only'), row('signed'), row('run')].map((r) => [r.outcome, r.journal_check, r.qualifies])).toEqual([
      ['PASS', 'record-only', 0],
      ['PASS', 'signed', 1],
      ['PASS', 'run', 1],
    ]);
  });

  it('a damaged record is skipped with a warning naming it; the others are imported', async () => {
    const bad = join(root, 'mixed', 'cable', 'run-bad');
    mkdirSync(bad, { recursive: true });
    writeFileSync(join(bad, 'record.json'), '{"schema": "cablequal.run/1", "runId": ');
    cpSync(runs[1]!.runDir, join(root, 'mixed', 'cable', 'run-good'), { recursive: true });
    const r = await runCli(['db', 'import', 'mixed/*/*', '--out', 'store3'], { cwd: root, env });
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/^warning: skipped mixed\/cable\/run-bad: .*record\.json: not valid JSON/m);
    expect(r.out).toMatch(/^2 run directories: 1 added, 0 updated, 0 unchanged, 1 skipped/m);
  });

  it('bad arguments are one-line usage errors (exit 2)', async () => {
    const none = await runCli(['db', 'import', 'nowhere/*/*', '--out', 'store4'], { cwd: root, env });
    expect(none).toMatchObject({ code: 2, err: 'cablequal: nowhere/*/*: matches nothing\n' });
    const missing = await runCli(['db', 'import', 'missing-dir', '--out', 'store4'], { cwd: root, env });
    expect(missing).toMatchObject({ code: 2, err: 'cablequal: missing-dir: no such file or directory\n' });
    const scheme = await runCli(['db', 'import', 'made', '--db', 'mysql://u:pw@h/db'], { cwd: root, env });
    expect(scheme.code).toBe(2);
    expect(scheme.err).toBe('cablequal: --db mysql://u:***@h/db: not a store cablequal knows: give postgres://user@host/db or a SQLite file path\n');
  });

  it('an unreachable PostgreSQL is one line, exit 3, its password not printed', async () => {
    const r = await runCli(['db', 'import', 'made', '--db', 'postgres://lab:hunter2@127.0.0.1:1/cablequal'], { cwd: root, env });
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/^cablequal: ERROR: results store postgres:\/\/lab:\*\*\*@127\.0\.0\.1:1\/cablequal: .*ECONNREFUSED.*\n$/);
    expect(r.err).not.toContain('hunter2');
  });

  it('globs: *, ? and [...] per path component, hidden names only by a literal dot, sorted', () => {
    const base = join(root, 'globs');
    for (const d of ['a1/x', 'a2/x', 'b1/x', '.hidden/x']) mkdirSync(join(base, d), { recursive: true });
    expect(expandPaths(['globs/a?/x'], root)).toEqual([join(base, 'a1/x'), join(base, 'a2/x')]);
    expect(expandPaths(['globs/[ab]1/*'], root)).toEqual([join(base, 'a1/x'), join(base, 'b1/x')]);
    expect(expandPaths(['globs/*'], root)).toEqual(['a1', 'a2', 'b1'].map((d) => join(base, d)));
    expect(expandPaths([join(base, '.h*')], '/')).toEqual([join(base, '.hidden')]);
  });
});

describe('the store never fails a run', () => {
  it("run --db on an unreachable server: one warning, the run's own verdict and exit code, its record on disk", async () => {
    const r = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--out', 'nostore', '--db', 'postgres://lab:pw@127.0.0.1:1/x', '--json'], {
      cwd: root,
      env,
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ outcome: 'PASS' });
    const warnings = r.err.split('\n').filter((l) => l.includes('results store'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^cablequal: warning: results store postgres:\/\/lab:\*\*\*@127\.0\.0\.1:1\/x: .*ECONNREFUSED.*; runs go on without the store \(journals and records are on disk: `cablequal db import \/\S+\/nostore --db 'postgres:\/\/lab:\*\*\*@127\.0\.0\.1:1\/x'` adds them afterwards\)$/,
    );
    const imported = await runCli(['db', 'import', 'nostore', '--out', 'nostore'], { cwd: root, env });
    expect(imported.out).toMatch(/^1 run directory: 1 added/m);
    // `compare reports/*` as a shell expands it names the store's file too: passed over, not an error.
    const names = readdirSync(join(root, 'nostore')).map((d) => join('nostore', d));
    expect(names).toContain(join('nostore', 'cablequal.db'));
    const compared = await runCli(['compare', ...names, '--out', 'cmp.csv'], { cwd: root, env });
    expect(compared.code, compared.err).toBe(0);
    expect(compared.out).toMatch(/^1 run\(s\) compared/);
  });

  it('a store this cablequal cannot use (its schema from a newer version) is one warning; the run finishes', async () => {
    const out = join(root, 'broken');
    mkdirSync(out, { recursive: true });
    // A store file whose schema is from a newer cablequal: opening it fails, the run goes on.
    const store = await openStore(chooseStore({ out }));
    await store.db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 'x')");
    await store.close();
    const r = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--out', 'broken', '--json'], { cwd: root, env });
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/warning: results store .*cablequal\.db: the store's schema is version 99, this cablequal knows up to \d+: upgrade cablequal/);
  });
});
