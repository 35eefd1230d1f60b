// `cablequal dashboard [--out reports] [--db URL] [--port 8080] [--host 127.0.0.1]`: serve until Ctrl-C.
import { resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { openStoreOrSay, type DbIo } from '../store/db-command.js';
import { chooseStore } from '../store/open-store.js';
import { startDashboard } from './server.js';

export async function dashboardCommand(args: { out: string; db?: string; port: number; host: string }, io: DbIo, signal: AbortSignal): Promise<number> {
  if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535) throw new UsageError(`--port: 0..65535, got ${args.port}`);
  if (args.db === 'off') throw new UsageError('dashboard: --db off: there is no store to show');
  const store = await openStoreOrSay(chooseStore({ out: args.out, db: args.db, env: io.env, cwd: io.cwd }), io);
  if (!store) return 3;
  try {
    let dash;
    try {
      dash = await startDashboard({ store, outDir: resolve(io.cwd, args.out), port: args.port, host: args.host });
    } catch (e) {
      throw new UsageError(`dashboard: cannot listen on ${args.host}:${args.port} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    io.stdout(`dashboard of ${store.where} at ${dash.url} (read-only; Ctrl-C stops it)\n`);
    if (args.host !== '127.0.0.1' && args.host !== 'localhost' && args.host !== '::1')
      io.stderr(`cablequal: warning: the dashboard has no login and listens on ${args.host}: anyone who reaches it sees every run\n`);
    await new Promise<void>((done) => (signal.aborted ? done() : signal.addEventListener('abort', () => done(), { once: true })));
    await dash.close();
    return 0;
  } finally {
    await store.close();
  }
}
