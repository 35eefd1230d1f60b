import { intArg, renamedOption } from '../options.js';
import { defineCommand } from './define.js';

// `cablequal dashboard`: the lab's pages and JSON API over the results store.
export const dashboardSpec = defineCommand({
  command: 'dashboard',
  describe: "serve the lab's dashboard and JSON API (read-only) from the results store",
  examples: [
    ['$0 dashboard', 'every run in reports/ at http://127.0.0.1:8080/'],
    ['$0 dashboard --out /lab/reports --listen 9000', 'another reports directory, on port 9000'],
    ['$0 dashboard --db postgres://cablequal@dbhost/cablequal', 'the shared store of several controllers'],
  ],
  builder: (y) =>
    y
      .option('out', { type: 'string', describe: 'reports directory (its cablequal.db, and the certificates served)', default: 'reports' })
      .option('db', { type: 'string', describe: 'postgres://... (or $CABLEQUAL_DB) instead of <out>/cablequal.db' })
      .option('listen', { type: 'number', describe: 'TCP port to listen on (0 = a free one; default 8080)', coerce: intArg('listen', 0, 65535) })
      .option('port', { type: 'number', hidden: true, deprecated: 'use --listen', coerce: intArg('port', 0, 65535) })
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
      {
        out: args.out,
        ...(args.db !== undefined ? { db: args.db } : {}),
        port: renamedOption({ name: 'port', value: args.port }, { name: 'listen', value: args.listen }, io.stderr) ?? 8080,
        host: args.host,
        serveJournals: args.serveJournals,
      },
      io,
      signal,
    );
  },
});
