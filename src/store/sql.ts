// The one seam between the results store and its two engines: SQLite (better-sqlite3, embedded, a file in the
// reports directory) and PostgreSQL (pg, shared by several controllers). Statements are written once with `?`
// placeholders in SQL both engines accept; PostgreSQL gets them numbered ($1, $2, ...).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';

export type Engine = 'sqlite' | 'postgres';
export type SqlValue = string | number | null;
export type Row = Record<string, unknown>;

// What the store needs from an engine: queries, statements, and a transaction that retries on contention.
export interface SqlDb {
  readonly engine: Engine;
  all<T extends Row = Row>(sql: string, params?: SqlValue[]): Promise<T[]>;
  run(sql: string, params?: SqlValue[]): Promise<number>; // rows changed
  // fn runs inside one transaction on one connection; retried (whole) on a deadlock, serialization failure or busy file.
  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export type SqlTx = Pick<SqlDb, 'all' | 'run' | 'engine'>;

const RETRIES = 8;

// `?` placeholders numbered for PostgreSQL ($1...). The store's SQL has no `?` inside string literals.
export function numberPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

// SQLite in WAL mode with a busy timeout: several processes on one controller (a batch, an import and the dashboard)
// share the file; a writer waits up to `busyMs` for another's transaction instead of failing.
export function openSqlite(path: string, opts: { busyMs?: number; readonly?: boolean } = {}): SqlDb {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { ...(opts.readonly ? { readonly: true } : {}), timeout: opts.busyMs ?? 15_000 });
  if (!opts.readonly) db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  const cache = new Map<string, Database.Statement>();
  const stmt = (sql: string) => {
    let s = cache.get(sql);
    if (!s) {
      s = db.prepare(sql);
      if (cache.size > 200) cache.clear();
      cache.set(sql, s);
    }
    return s;
  };
  const tx: SqlTx = {
    engine: 'sqlite',
    all: async <T extends Row>(sql: string, params: SqlValue[] = []) => stmt(sql).all(...params) as T[],
    run: async (sql: string, params: SqlValue[] = []) => stmt(sql).run(...params).changes,
  };
  let depth = 0;
  return {
    ...tx,
    async transaction<T>(fn: (t: SqlTx) => Promise<T>): Promise<T> {
      // better-sqlite3 is synchronous, so no other statement of this process interleaves unless fn awaits I/O;
      // BEGIN IMMEDIATE takes the write lock up front (no upgrade deadlock between two processes).
      if (depth > 0) return fn(tx);
      for (let attempt = 0; ; attempt++) {
        try {
          db.exec('BEGIN IMMEDIATE');
        } catch (e) {
          if (isBusy(e) && attempt < RETRIES) continue;
          throw e;
        }
        depth++;
        try {
          const out = await fn(tx);
          db.exec('COMMIT');
          return out;
        } catch (e) {
          if (db.inTransaction) db.exec('ROLLBACK');
          if (isBusy(e) && attempt < RETRIES) continue;
          throw e;
        } finally {
          depth--;
        }
      }
    },
    async close() {
      db.close();
    },
  };
}

function isBusy(e: unknown): boolean {
  const code = (e as { code?: string }).code ?? '';
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || code.startsWith('SQLITE_BUSY_');
}

// PostgreSQL through a small pool. pg hands BIGINT and NUMERIC back as strings; the store's numeric columns are
// DOUBLE PRECISION and INTEGER, which pg parses itself.
export function openPostgres(url: string, opts: { max?: number } = {}): SqlDb {
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 4, connectionTimeoutMillis: 10_000, idleTimeoutMillis: 10_000 });
  // An idle client losing its server must not crash the process: the next query reconnects or fails with a message.
  pool.on('error', () => undefined);
  const on = (c: pg.Pool | pg.PoolClient): SqlTx => ({
    engine: 'postgres',
    all: async <T extends Row>(sql: string, params: SqlValue[] = []) => (await c.query(numberPlaceholders(sql), params)).rows as T[],
    run: async (sql: string, params: SqlValue[] = []) => (await c.query(numberPlaceholders(sql), params)).rowCount ?? 0,
  });
  return {
    ...on(pool),
    async transaction<T>(fn: (t: SqlTx) => Promise<T>): Promise<T> {
      for (let attempt = 0; ; attempt++) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const out = await fn(on(client));
          await client.query('COMMIT');
          return out;
        } catch (e) {
          await client.query('ROLLBACK').catch(() => undefined);
          // 40P01 deadlock, 40001 serialization failure, 23505 a unique race the upsert lost: the whole unit again.
          const code = (e as { code?: string }).code;
          if ((code === '40P01' || code === '40001' || code === '23505') && attempt < RETRIES) {
            await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (attempt + 1)));
            continue;
          }
          throw e;
        } finally {
          client.release();
        }
      }
    },
    async close() {
      await pool.end();
    },
  };
}

// A connection URL as it may be printed: the password replaced.
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/:[^:@/]*@/, ':***@');
  }
}
