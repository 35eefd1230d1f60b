// The embedded store as a run writes it: better-sqlite3 in a worker thread, so that a file another process holds
// (a backup tool's `BEGIN EXCLUSIVE`, a second controller, `db import`) or a slow disk stalls that thread, never the
// run's sampling. The main thread keeps the store's logic (store.ts over SqlDb); each statement is a message.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { immediateTransaction, sqlitePragmas, SQLITE_BUSY_CODE, type Row, type SqlDb, type SqlTx, type SqlValue } from './sql.js';

// The worker's program, plain JavaScript run as source (Node 20 cannot load this TypeScript module in a thread of its
// own). It opens the file on the first statement, caches statements, and retries a statement that finds the file busy
// for `waitMs` in steps of `stepMs` (SQLite's busy handler sleeps inside a step), then answers with the error. Between
// steps it looks at `closing`: once set, a waiting statement gives up at once. (The thread is never terminated inside
// a statement: better-sqlite3 aborts the whole process when its thread is stopped in the middle of one.)
const WORKER_JS = String.raw`'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const { path, waitMs, stepMs, pragmas } = workerData;
const busyCode = new RegExp(workerData.busyCode);
const closing = new Int32Array(workerData.closing);
const pause = new Int32Array(new SharedArrayBuffer(4));
const statements = new Map();
let db = null;
function open() {
  if (db) return db;
  const d = new Database(path, { timeout: stepMs });
  try {
    for (const p of pragmas) d.pragma(p);
  } catch (e) {
    d.close();
    throw e;
  }
  return (db = d);
}
function execute(m) {
  const d = open();
  if (m.mode === 'exec') return void d.exec(m.sql);
  let s = statements.get(m.sql);
  if (!s) {
    s = d.prepare(m.sql);
    if (statements.size > 200) statements.clear();
    statements.set(m.sql, s);
  }
  return m.mode === 'all' ? s.all(...m.params) : s.run(...m.params).changes;
}
parentPort.on('message', (m) => {
  if (m.mode === 'close') {
    if (db) db.close();
    db = null;
    return parentPort.postMessage({ id: m.id });
  }
  const until = Date.now() + waitMs;
  for (;;) {
    if (Atomics.load(closing, 0) === 1) return parentPort.postMessage({ id: m.id, error: { message: 'the store was closed while this statement waited' } });
    try {
      return parentPort.postMessage({ id: m.id, out: execute(m) });
    } catch (e) {
      const code = e && typeof e.code === 'string' ? e.code : undefined;
      if (code && busyCode.test(code) && Date.now() < until) {
        Atomics.wait(pause, 0, 0, 10);
        continue;
      }
      return parentPort.postMessage({ id: m.id, error: { message: String((e && e.message) || e), code } });
    }
  }
});
`;

type Mode = 'all' | 'run' | 'exec' | 'close';
interface Reply {
  id: number;
  out?: unknown;
  error?: { message: string; code?: string };
}

// SQLite behind a worker thread. A statement that finds the file busy is retried there for `waitMs`, then fails with
// SQLITE_BUSY; close() cuts a statement still waiting short (within a step) and ends the thread.
export function openSqliteWriter(path: string, opts: { waitMs: number; stepMs?: number }): SqlDb {
  mkdirSync(dirname(path), { recursive: true });
  const closing = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(WORKER_JS, {
    eval: true,
    workerData: {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      path,
      waitMs: opts.waitMs,
      stepMs: opts.stepMs ?? 100,
      pragmas: sqlitePragmas(false),
      busyCode: SQLITE_BUSY_CODE.source,
      closing: closing.buffer,
    },
  });
  // The thread keeps the process alive only while a statement is waiting for its answer (so that the process never
  // ends with the thread inside one).
  worker.unref();
  const waiting = new Map<number, { resolve: (out: unknown) => void; reject: (e: Error) => void }>();
  let next = 0;
  let ended: Error | null = null;
  const endAll = (e: Error) => {
    ended ??= e;
    for (const w of waiting.values()) w.reject(ended);
    waiting.clear();
  };
  worker.on('message', (m: Reply) => {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (waiting.size === 0) worker.unref();
    if (m.error) w.reject(Object.assign(new Error(m.error.message), m.error.code ? { code: m.error.code } : {}));
    else w.resolve(m.out);
  });
  worker.on('error', endAll);
  worker.on('exit', (code) => endAll(new Error(`the store's writer thread ended (exit code ${code})`)));
  const call = (mode: Mode, sql = '', params: SqlValue[] = []) =>
    new Promise<unknown>((resolve, reject) => {
      if (ended) return reject(ended);
      const id = next++;
      waiting.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, mode, sql, params });
    });
  const tx: SqlTx = {
    engine: 'sqlite',
    all: async <T extends Row>(sql: string, params?: SqlValue[]) => (await call('all', sql, params)) as T[],
    run: async (sql: string, params?: SqlValue[]) => (await call('run', sql, params)) as number,
  };
  // One unit at a time on the one connection: a statement never lands inside another caller's transaction.
  let turn: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = turn.then(fn, fn);
    turn = p.catch(() => undefined);
    return p;
  };
  return {
    engine: 'sqlite',
    all: <T extends Row>(sql: string, params?: SqlValue[]) => serial(() => tx.all<T>(sql, params)),
    run: (sql: string, params?: SqlValue[]) => serial(() => tx.run(sql, params)),
    // The thread has waited out a busy file already: no retry here.
    transaction: <T>(fn: (t: SqlTx) => Promise<T>) =>
      serial(() =>
        immediateTransaction(
          (sql) => call('exec', sql),
          () => fn(tx),
          0,
        ),
      ),
    async close() {
      Atomics.store(closing, 0, 1);
      // Answered once the statement in hand (if any) has given up: the thread is then idle, and safe to end.
      await call('close').catch(() => undefined);
      await worker.terminate();
    },
  };
}
