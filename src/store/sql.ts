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
// share the file; a writer waits up to `busyMs` for another's transaction instead of failing. This connection runs on
// the calling thread: a run writes through openSqliteWriter (sqlite-writer.ts), never through this.
export function openSqlite(path: string, opts: { busyMs?: number; readonly?: boolean } = {}): SqlDb {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { ...(opts.readonly ? { readonly: true } : {}), timeout: opts.busyMs ?? 15_000 });
  for (const p of sqlitePragmas(opts.readonly === true)) db.pragma(p);
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
      // better-sqlite3 is synchronous, so no other statement of this process interleaves unless fn awaits I/O.
      if (depth > 0) return fn(tx);
      depth++;
      try {
        return await immediateTransaction(
          (sql) => db.exec(sql),
          () => fn(tx),
          RETRIES,
        );
      } finally {
        depth--;
      }
    },
    async close() {
      db.close();
    },
  };
}

// The pragmas every SQLite connection of the store sets (a read-only one cannot switch the journal mode).
export function sqlitePragmas(readonly: boolean): string[] {
  return [...(readonly ? [] : ['journal_mode = WAL']), 'synchronous = NORMAL', 'foreign_keys = ON'];
}

// BEGIN IMMEDIATE (the write lock up front: no upgrade deadlock between two processes), fn, COMMIT; on a failure
// ROLLBACK, and the whole unit again while the file was busy and `retries` are left.
export async function immediateTransaction<T>(exec: (sql: string) => unknown, fn: () => Promise<T>, retries: number): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      await exec('BEGIN IMMEDIATE');
    } catch (e) {
      if (isBusy(e) && attempt < retries) continue;
      throw e;
    }
    try {
      const out = await fn();
      await exec('COMMIT');
      return out;
    } catch (e) {
      // SQLite may have rolled back already (then ROLLBACK says there is no transaction: nothing to undo).
      await Promise.resolve()
        .then(() => exec('ROLLBACK'))
        .catch(() => undefined);
      if (isBusy(e) && attempt < retries) continue;
      throw e;
    }
  }
}

// The codes of a file another connection holds (SQLITE_BUSY and its extended codes, SQLITE_LOCKED).
export const SQLITE_BUSY_CODE = /^SQLITE_(BUSY(_[A-Z]+)?|LOCKED)$/;

function isBusy(e: unknown): boolean {
  return SQLITE_BUSY_CODE.test((e as { code?: string }).code ?? '');
}

// PostgreSQL through a small pool. pg hands BIGINT and NUMERIC back as strings; the store's numeric columns are
// DOUBLE PRECISION and INTEGER, which pg parses itself. `waitMs` bounds every wait (a run's writer gives it): the
// connection and each lock at the server; a statement is cancelled by the server a fifth later, and another fifth
// later the client gives up on a server that does not answer at all (the first of these to end says why).
export function openPostgres(url: string, opts: { max?: number; waitMs?: number } = {}): SqlDb {
  const w = opts.waitMs;
  const bounded = w === undefined ? {} : { lock_timeout: w, statement_timeout: Math.round(w * 1.2), query_timeout: Math.round(w * 1.4) };
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 4, connectionTimeoutMillis: w ?? 10_000, idleTimeoutMillis: 10_000, ...bounded });
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
        let broken: Error | undefined;
        try {
          await client.query('BEGIN');
          const out = await fn(on(client));
          await client.query('COMMIT');
          return out;
        } catch (e) {
          // The server said no: the connection is fine, roll back and keep it. Anything else (a query that timed out, a
          // server gone) closes the connection, and the server rolls back a closed session's transaction; a ROLLBACK
          // would queue behind the query that timed out and wait as long again.
          if (e instanceof pg.DatabaseError) await client.query('ROLLBACK').catch(() => undefined);
          else broken = e as Error;
          // 40P01 deadlock, 40001 serialization failure, 23505 a unique race the upsert lost: the whole unit again.
          const code = (e as { code?: string }).code;
          if ((code === '40P01' || code === '40001' || code === '23505') && attempt < RETRIES) {
            await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (attempt + 1)));
            continue;
          }
          throw e;
        } finally {
          client.release(broken);
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
