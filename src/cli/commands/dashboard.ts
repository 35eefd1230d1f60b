import { intArg } from '../options.js';
import { defineCommand } from './define.js';

// `cablequal dashboard`: the lab's pages and JSON API over the results store.
export const dashboardSpec = defineCommand({
  command: 'dashboard',
  describe: "serve the lab's dashboard and JSON API (read-only) from the results store",
  builder: (y) =>
    y
      .option('out', { type: 'string', describe: 'reports directory (its cablequal.db, and the certificates served)', default: 'reports' })
      .option('db', { type: 'string', describe: 'postgres://... (or $CABLEQUAL_DB) instead of <out>/cablequal.db' })
      .option('port', { type: 'string', describe: 'TCP port (0 = a free one)', default: '8080', coerce: intArg('port', 0, 65535) })
      .option('host', {
        type: 'string',
        describe: 'address to bind (the dashboard has no login: keep it on loopback unless the network is trusted)',
        default: '127.0.0.1',
      })
      .option('serve-journals', {
        type: 'boolean',
        describe: "also serve each run's journal.jsonl (certificates, run reports and CSVs are always served; the store never)",
        default: false,
      }),
  run: async (args, { io, signal }) => {
    const { dashboardCommand } = await import('../../dashboard/dashboard-command.js');
    return dashboardCommand(
      { out: args.out, ...(args.db !== undefined ? { db: args.db } : {}), port: args.port ?? 8080, host: args.host, serveJournals: args.serveJournals },
      io,
      signal,
    );
  },
});
