// `cablequal db import <run dirs or globs...> [--out reports] [--db URL]`: (re)build the store's index from journals.
import { hostname } from 'node:os';
import { UsageError } from '../domain/errors.js';
import { importRuns } from './import.js';
import { chooseStore, openStore, StoreOpenError, type StoreChoice } from './open-store.js';
import type { ResultsStore } from './store.js';

export interface DbIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export async function dbImportCommand(args: { paths: string[]; out: string; db?: string }, io: DbIo): Promise<number> {
  if (!args.paths.length) throw new UsageError("db import: give run directories, reports directories or globs (e.g. 'reports/*/*')");
  if (args.db === 'off') throw new UsageError('db import: --db off writes no store');
  // $CABLEQUAL_DB=off means off, as the flag does (it made a SQLite file named "off").
  if (args.db === undefined && io.env['CABLEQUAL_DB'] === 'off')
    throw new UsageError('db import: $CABLEQUAL_DB=off writes no store; give --db to import anyway');
  const store = await openStoreOrSay(chooseStore({ out: args.out, db: args.db, env: io.env, cwd: io.cwd }), io);
  if (!store) return 3;
  try {
    // The journals' signatures are checked against the lab's trusted key, when this machine has one.
    const { trustedLabPublicKey } = await import('../report/sign.js');
    const trustedPem = (await trustedLabPublicKey(io.env))?.pem ?? null;
    const res = await importRuns(store, args.paths, { cwd: io.cwd, controller: hostname(), trustedPem });
    for (const s of res.skipped) io.stderr(`warning: skipped ${s}\n`);
    for (const w of res.warnings) io.stderr(`warning: ${w}\n`);
    const counts = await store.counts();
    io.stdout(
      `${res.runDirs} run director${res.runDirs === 1 ? 'y' : 'ies'}: ${res.inserted} added, ${res.updated} updated, ${res.unchanged} unchanged${res.skipped.length ? `, ${res.skipped.length} skipped` : ''}${res.batches ? `; ${res.batches} batch(es)` : ''}\n`,
    );
    io.stdout(`store ${store.where}: ${counts['runs']} runs, ${counts['cables']} cables, ${counts['parts']} parts, ${counts['batches']} batches\n`);
    return res.skipped.length && !res.inserted && !res.updated && !res.unchanged ? 2 : 0;
  } finally {
    await store.close();
  }
}

// Open the store, or print the one-line reason (unreachable server, unreadable file) and give null (exit 3).
export async function openStoreOrSay(choice: StoreChoice, io: Pick<DbIo, 'stderr'>): Promise<ResultsStore | null> {
  try {
    return await openStore(choice);
  } catch (e) {
    if (!(e instanceof StoreOpenError)) throw e;
    io.stderr(`cablequal: ERROR: ${e.message}\n`);
    return null;
  }
}
