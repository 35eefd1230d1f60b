// #22 item 7: a run never waits on its results store. A real-time run against `sim serve` while another process holds
// the store: the embedded SQLite file under `BEGIN EXCLUSIVE` from a child process (what a backup tool or a long
// transaction does), and PostgreSQL's run tables under `LOCK TABLE ... ACCESS EXCLUSIVE` from another session until
// the run has returned. Sampling goes on at its interval through the lock (it stood still for the whole lock before:
// BENCHMARKS.md §8), the soak keeps its length, the store is given up with one warning naming `cablequal db import`,
// and that import afterwards adds the run.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseStore, openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/cli.js';
import { pgSkip, startPostgres, type TestPg } from '../helpers/postgres.js';
import { runWithStoreLocked, type LockedRun } from '../helpers/store-lock.js';

const SOAK_S = 40;

let pgServer: TestPg | null = null;
afterAll(async () => {
  await pgServer?.stop();
});

// What a run that did not wait on its store shows, whichever store held it up.
async function expectUnheld(r: LockedRun, db: string | undefined): Promise<void> {
  expect(r.code, r.err).toBe(0);
  expect(r.outcome).toBe('PASS');
  // Sampling went on through the lock at its 1 s interval: a few seconds at worst on a loaded machine, never the lock.
  expect(r.longestTickMs).toBeLessThan(5000);
  expect(r.ticksDuringLock).toBeGreaterThan(r.lockS * 0.5);
  expect(r.soakS).toBeLessThan(SOAK_S + 5);
  expect(r.gaps.filter((g) => g.toS - g.fromS > 5)).toEqual([]);
  expect(r.storeWarnings).toHaveLength(1);
  const command =
    /^cablequal: warning: results store .*; runs go on without the store \(journals and records are on disk: `cablequal (db import .*)` adds them afterwards\)$/.exec(
      r.storeWarnings[0]!,
    )?.[1];
  expect(command).toBe(db ? `db import ${r.out} --db ${db}` : `db import ${r.out} --out ${r.out}`);
  // Afterwards (the lock gone) that command brings the run's row (written at its start, before the lock) up to date.
  const imported = await runCli(command!.split(' '));
  expect(imported.out, imported.err).toMatch(/^1 run directory: 0 added, 1 updated, 0 unchanged$/m);
  const store = await openStore(chooseStore({ out: r.out, db }));
  try {
    expect(await store.db.all('SELECT outcome, state FROM runs')).toEqual([{ outcome: 'PASS', state: 'finished' }]);
  } finally {
    await store.close();
  }
}

describe('a store held by another process never holds up a run', () => {
  it('SQLite under BEGIN EXCLUSIVE for 20 s from the soak start: sampling goes on, one warning, db import afterwards', { timeout: 180_000 }, async () => {
    const r = await runWithStoreLocked(mkdtempSync(join(tmpdir(), 'cq-busy-sqlite-')), { soakS: SOAK_S, lock: { engine: 'sqlite', holdS: 20 } });
    expect(r.lockS).toBeGreaterThanOrEqual(20);
    expect(r.storeWarnings[0]).toMatch(/: database is locked \(SQLITE_BUSY\); /);
    await expectUnheld(r, undefined);
  });

  it.skipIf(pgSkip)(
    'PostgreSQL with its run tables locked from the soak start until the run returned: the run ends on time, one warning',
    { timeout: 180_000 },
    async () => {
      pgServer ??= await startPostgres();
      const url = await pgServer.newDatabase();
      const r = await runWithStoreLocked(mkdtempSync(join(tmpdir(), 'cq-busy-pg-')), { soakS: SOAK_S, lock: { engine: 'postgres', url } });
      // The lock outlived the run: the run ended without it (its last write gave up), not when it was released.
      expect(r.lockS).toBeGreaterThan(SOAK_S);
      expect(r.storeWarnings[0]).toMatch(/: canceling statement due to lock timeout \(55P03\); /);
      await expectUnheld(r, url);
    },
  );
});
