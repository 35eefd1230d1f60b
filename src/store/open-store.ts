// Which store a command writes to: `--db URL`, else $CABLEQUAL_DB, else the embedded file <out>/cablequal.db.
import { resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { openPostgres, openSqlite, redactUrl, type SqlDb } from './sql.js';
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
  const cwd = o.cwd ?? process.cwd();
  if (db === '') return { engine: 'sqlite', target: resolve(cwd, o.out, STORE_FILE) };
  if (/^postgres(ql)?:\/\//i.test(db)) return { engine: 'postgres', target: db };
  if (/^sqlite:/i.test(db)) return { engine: 'sqlite', target: resolve(cwd, db.slice('sqlite:'.length)) };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(db))
    throw new UsageError(`--db ${redactUrl(db)}: not a store cablequal knows: give postgres://user@host/db or a SQLite file path`);
  return { engine: 'sqlite', target: resolve(cwd, db) };
}

// Open the store and run its migrations; a store that cannot be opened is a one-line error naming it.
export async function openStore(choice: StoreChoice, opts: { readonly?: boolean } = {}): Promise<ResultsStore> {
  const where = choice.engine === 'postgres' ? redactUrl(choice.target) : choice.target;
  let db: SqlDb;
  try {
    db = choice.engine === 'postgres' ? openPostgres(choice.target) : openSqlite(choice.target, opts);
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

// The store could not be opened or migrated: says which, and why.
export class StoreOpenError extends Error {
  constructor(
    readonly where: string,
    cause: unknown,
  ) {
    const code = (cause as { code?: string }).code;
    super(`results store ${where}: ${(cause as Error).message || String(cause)}${code ? ` (${code})` : ''}`);
  }
}
