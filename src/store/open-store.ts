// Which store a command writes to: `--db URL`, else $CABLEQUAL_DB, else the embedded file <out>/cablequal.db.
import { resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { openPostgres, openSqlite, redactUrl, type SqlDb } from './sql.js';
import { openSqliteWriter } from './sqlite-writer.js';
import { ResultsStore } from './store.js';

export const STORE_FILE = 'cablequal.db';

// The embedded store's files in a reports directory (the database, and SQLite's WAL, shared-memory and journal files):
// commands that take run directories from `reports/*` pass over them.
export function isStoreFile(path: string): boolean {
  return /(^|[/\\])cablequal\.db(-wal|-shm|-journal)?$/.test(path);
}

export interface StoreChoice {
  engine: 'sqlite' | 'postgres';
  target: string; // file path or URL
}

// `--db postgres://...` (or postgresql://) is a shared PostgreSQL store; `--db sqlite:FILE` or a path is a SQLite file.
export function chooseStore(o: { out: string; db?: string | undefined; env?: NodeJS.ProcessEnv; cwd?: string }): StoreChoice {
  const db = o.db ?? o.env?.['CABLEQUAL_DB'] ?? '';
  // "off" is no store, whether --db or $CABLEQUAL_DB says it: never a SQLite file named off.
  if (db === 'off') throw new UsageError(`${o.db === 'off' ? '--db off' : '$CABLEQUAL_DB=off'}: no results store is used here`);
  const cwd = o.cwd ?? process.cwd();
  if (db === '') return { engine: 'sqlite', target: resolve(cwd, o.out, STORE_FILE) };
  if (/^postgres(ql)?:\/\//i.test(db)) return { engine: 'postgres', target: db };
  if (/^sqlite:/i.test(db)) return { engine: 'sqlite', target: resolve(cwd, db.slice('sqlite:'.length)) };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(db))
    throw new UsageError(`--db ${redactUrl(db)}: not a store cablequal knows: give postgres://user@host/db or a SQLite file path`);
  return { engine: 'sqlite', target: resolve(cwd, db) };
}

// How long a run's writer waits for the store at most: for a busy SQLite file (another process holding it), for
// PostgreSQL to connect, and for each query, statement and lock there. Then the write fails (and the run's recorder
// gives the store up: recorder.ts).
export const WRITER_WAIT_MS = 5000;

// Open the store and run its migrations; a store that cannot be opened is a one-line error naming it. `writer`: the
// connection a run writes through, whose waits are all bounded (WRITER_WAIT_MS) and whose SQLite file is written from
// a worker thread (sqlite-writer.ts), so that nothing the store does holds up the run's thread.
export async function openStore(choice: StoreChoice, opts: { readonly?: boolean; writer?: boolean } = {}): Promise<ResultsStore> {
  const where = whereOf(choice);
  let db: SqlDb;
  try {
    if (choice.engine === 'postgres') db = openPostgres(choice.target, opts.writer ? { waitMs: WRITER_WAIT_MS } : {});
    else db = opts.writer ? openSqliteWriter(choice.target, { waitMs: WRITER_WAIT_MS }) : openSqlite(choice.target, opts);
  } catch (e) {
    throw new StoreOpenError(where, e);
  }
  const store = new ResultsStore(db, where);
  try {
    await store.migrate();
  } catch (e) {
    await db.close().catch(() => undefined);
    throw new StoreOpenError(where, e);
  }
  return store;
}

// The store as messages name it: its file, or its URL without the password.
export function whereOf(choice: StoreChoice): string {
  return choice.engine === 'postgres' ? redactUrl(choice.target) : choice.target;
}

// The store could not be opened or migrated: says which, and why.
export class StoreOpenError extends Error {
  readonly why: string;
  constructor(
    readonly where: string,
    cause: unknown,
  ) {
    const why = storeErrorText(cause);
    super(`results store ${where}: ${why}`);
    this.why = why;
  }
}

// What went wrong with the store, in one line: the engine's message and its code (SQLITE_BUSY, ECONNREFUSED, 57014).
export function storeErrorText(e: unknown): string {
  if (e instanceof StoreOpenError) return e.why;
  const code = (e as { code?: string } | null)?.code;
  return `${(e as Error | null)?.message || String(e)}${code ? ` (${code})` : ''}`;
}
