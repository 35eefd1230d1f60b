// #22 item 7: the connections a run writes its store through never hold up the run's thread and never wait without
// end. SQLite from a worker thread against a file another connection holds (`BEGIN EXCLUSIVE`); PostgreSQL against a
// server that never answers, and one that answers the connection and then nothing.
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteWriter } from '../../src/store/sqlite-writer.js';
import { openPostgres } from '../../src/store/sql.js';
import { ResultsStore } from '../../src/store/store.js';
import { tempRoot } from '../fixtures/records/run-dir.js';

const STATUS = { phase: 'soak', elapsedS: 1, phaseRemainingS: 59, runRemainingS: 59 };

// A migrated store file, a writer on it (statements wait `waitMs` for a busy file), and another connection to hold it.
async function lockedStore(waitMs: number) {
  const file = join(tempRoot('cq-writer-'), 'cablequal.db');
  const store = new ResultsStore(openSqliteWriter(file, { waitMs }), file);
  await store.migrate();
  const other = new Database(file);
  other.exec('BEGIN EXCLUSIVE');
  return { store, other };
}

// Whether `p` is still waiting once the thread has run everything else that was ready (one turn of the event loop).
async function stillWaiting(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setImmediate(r));
  return !settled;
}

describe("SQLite through the run's writer thread", () => {
  it('a file another connection holds: the write waits in the thread (the caller goes on), then fails with SQLITE_BUSY', async () => {
    const { store, other } = await lockedStore(300);
    const write = store.runLive('run1', 1, '2026-06-01T00:00:00.000Z', STATUS);
    expect(await stillWaiting(write)).toBe(true);
    await expect(write).rejects.toMatchObject({ code: 'SQLITE_BUSY', message: 'database is locked' });
    other.exec('ROLLBACK');
    other.close();
    await store.close();
  });

  it('released within the wait: the write goes through', async () => {
    const { store, other } = await lockedStore(10_000);
    const write = store.runLive('run1', 1, '2026-06-01T00:00:00.000Z', STATUS);
    expect(await stillWaiting(write)).toBe(true);
    other.exec('COMMIT');
    await write;
    expect(other.prepare('SELECT run_id, phase FROM live').all()).toEqual([{ run_id: 'run1', phase: 'soak' }]);
    other.close();
    await store.close();
  });

  it('closed while a statement waits: the wait is cut short, not waited out, and the thread ends', async () => {
    const { store, other } = await lockedStore(600_000);
    const write = store.runLive('run1', 1, '2026-06-01T00:00:00.000Z', STATUS);
    expect(await stillWaiting(write)).toBe(true);
    await store.close();
    await expect(write).rejects.toThrow('the store was closed while this statement waited');
    await expect(store.runLive('run1', 2, '2026-06-01T00:00:01.000Z', STATUS)).rejects.toThrow(/the store's writer thread ended/);
    other.exec('ROLLBACK');
    other.close();
  });
});

// A loopback server speaking as much of PostgreSQL's protocol as `answer` says: nothing at all, or the connection's
// start (AuthenticationOk, ReadyForQuery) and then nothing.
async function mutePostgres(answer: 'nothing' | 'startup-only'): Promise<{ url: string; server: Server }> {
  const sockets: Socket[] = [];
  const server = createServer((s) => {
    sockets.push(s);
    s.once('data', () => {
      if (answer !== 'startup-only') return;
      const auth = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0]); // 'R', length 8, AuthenticationOk
      const ready = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]); // 'Z', length 5, idle
      s.write(Buffer.concat([auth, ready]));
    });
  });
  server.on('close', () => sockets.forEach((s) => s.destroy()));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return { url: `postgres://lab@127.0.0.1:${port}/cablequal`, server };
}

describe("PostgreSQL through the run's bounded connection", () => {
  const servers: Server[] = [];
  afterAll(() => servers.forEach((s) => s.close()));

  it('a server that never answers: connecting fails after the wait', async () => {
    const { url, server } = await mutePostgres('nothing');
    servers.push(server);
    const db = openPostgres(url, { waitMs: 200 });
    await expect(new ResultsStore(db, url).migrate()).rejects.toThrow(/timeout/i);
    await db.close();
  });

  it('a server that stops answering after the connection: the query fails (client timeout), the pool closes', async () => {
    const { url, server } = await mutePostgres('startup-only');
    servers.push(server);
    const db = openPostgres(url, { waitMs: 200 });
    await expect(new ResultsStore(db, url).runLive('run1', 1, '2026-06-01T00:00:00.000Z', STATUS)).rejects.toThrow('Query read timeout');
    await expect(db.transaction((tx) => tx.run('SELECT 1'))).rejects.toThrow('Query read timeout');
    await db.close();
  });
});
