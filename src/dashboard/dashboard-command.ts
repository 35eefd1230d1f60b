// `cablequal dashboard [--out reports] [--db URL] [--port 8080] [--host 127.0.0.1] [--serve-journals]`: serve until
// Ctrl-C or SIGTERM.
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { openStoreOrSay, type DbIo } from '../store/db-command.js';
import { chooseStore, STORE_FILE } from '../store/open-store.js';
import { startDashboard } from './server.js';

// The command's options as parsed by the CLI.
export interface DashboardArgs {
  out: string;
  db?: string;
  port: number;
  host: string;
  serveJournals?: boolean;
}

// The reports directory holding the batch directory `dir` (batch-state.json, no store of its own), when the embedded
// store is the one read; else null.
function batchReports(dir: string, db: string | undefined): string | null {
  if (db !== undefined || existsSync(join(dir, STORE_FILE)) || !existsSync(join(dir, 'batch-state.json'))) return null;
  return dirname(dir);
}

// io.onStop (when the CLI offers it) sets what Ctrl-C / SIGTERM print: the dashboard stops serving, no load runs.
export async function dashboardCommand(args: DashboardArgs, io: DbIo & { onStop?: (say: string) => void }, signal: AbortSignal): Promise<number> {
  if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535) throw new UsageError(`--port: 0..65535, got ${args.port}`);
  if (args.db === 'off') throw new UsageError('dashboard: --db off: there is no store to show');
  if (args.db === undefined && io.env['CABLEQUAL_DB'] === 'off') throw new UsageError('dashboard: $CABLEQUAL_DB=off: there is no store to show; give --db');
  // A batch directory (`batch --out X`) keeps its runs' store beside it, in the reports directory holding it: the
  // dashboard of X is that directory's (the same store the batch wrote, and X's certificates served below it).
  const out = batchReports(resolve(io.cwd, args.out), args.db ?? io.env.CABLEQUAL_DB);
  if (out !== null) io.stderr(`cablequal: note: --out ${args.out} is a batch directory: showing its reports directory ${out} (the store the batch wrote)\n`);
  const choice = chooseStore({ out: out ?? args.out, db: args.db, env: io.env, cwd: io.cwd });
  const outDir = out ?? resolve(io.cwd, args.out);
  const outIsDir = existsSync(outDir) && statSync(outDir).isDirectory();
  // A file named as the reports directory is bad usage (it was exit 3, the store's mkdir failing under it).
  if (existsSync(outDir) && !outIsDir) throw new UsageError(`--out ${args.out}: not a directory; give the reports directory (the --out of cablequal run)`);
  // The embedded store lives in --out: a folder that is not there is a typo, not a lab with no runs yet.
  if (choice.engine === 'sqlite' && !existsSync(resolve(choice.target, '..'))) {
    const viaOut = choice.target === resolve(outDir, STORE_FILE);
    throw new UsageError(
      viaOut
        ? `dashboard: --out ${args.out}: no such folder (${outDir}); give the reports directory that holds ${STORE_FILE}, or --db`
        : `dashboard: store ${choice.target}: its folder does not exist; give an existing SQLite file or postgres://...`,
    );
  }
  if (choice.engine === 'postgres' && !outIsDir)
    io.stderr(`cablequal: warning: --out ${args.out}: no such folder: certificates and CSVs will not be served (the store is ${choice.engine})\n`);
  const store = await openStoreOrSay(choice, io);
  if (!store) return 3;
  try {
    let dash;
    try {
      dash = await startDashboard({ store, outDir, port: args.port, host: args.host, serveJournals: args.serveJournals === true });
    } catch (e) {
      throw new UsageError(`dashboard: cannot listen on ${args.host}:${args.port} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    io.onStop?.('stopping the dashboard');
    io.stdout(`dashboard of ${store.where} at ${dash.url} (read-only; Ctrl-C stops it)\n`);
    if (args.host !== '127.0.0.1' && args.host !== 'localhost' && args.host !== '::1')
      io.stderr(`cablequal: warning: the dashboard has no login and listens on ${args.host}: anyone who reaches it sees every run\n`);
    if (args.serveJournals) io.stderr('cablequal: note: --serve-journals: every run journal under --out is served to whoever reaches the dashboard\n');
    await new Promise<void>((done) => (signal.aborted ? done() : signal.addEventListener('abort', () => done(), { once: true })));
    await dash.close();
    return 0;
  } finally {
    await store.close();
  }
}
