import { intArg } from '../options.js';
import { defineCommand } from './define.js';
import { ACCEPT_NEW_HOST_KEYS, PROTOCOL_HELP, SSH_CONFIG, seedOption } from './shared-options.js';

// `cablequal watch`: the cables of a cluster in service, read-only, until --for has passed or Ctrl-C.
export const watchSpec = defineCommand({
  command: 'watch',
  describe: 'watch every cabled port of running nodes in service with the qualification rules (read-only): alarms, link drops with snapshots, status',
  examples: [
    ['$0 watch --nodes spark-a,spark-b', 'watch the cable(s) between two Sparks until Ctrl-C; events on the terminal, the journal in reports/watch/'],
    ['$0 watch --nodes s1,s2,s3 --json --for 7d', 'a triangle of three Sparks for a week, one JSON line per event (for a log shipper)'],
    ['$0 watch --sim in-service-clone --for 24h --json', "a day of the failing clone in service in seconds: the lane alarm, then each drop's snapshot"],
    ['$0 watch --sim in-service-good --sim-fault node-reboot@43200s:spark-a', 'a good cable, one node rebooted at noon: the drop is the node’s, no alarm'],
  ],
  simOptions: ['sim', 'sim-fault', 'seed'],
  builder: (y) =>
    y.options({
      nodes: { type: 'string', describe: 'the nodes, as ssh hosts or aliases: a,b[,c...]; every cable between two of them is watched' },
      for: { type: 'string', describe: 'stop after this long: 90s, 30m, 24h, 7d (default: until Ctrl-C; with --sim 24h)' },
      interval: { type: 'string', describe: "seconds between samples (default: the protocol's watch.intervalS, 10)", coerce: intArg('interval', 1, 600) },
      json: { type: 'boolean', describe: 'one JSON object per event on stdout (JSON lines)', default: false },
      out: {
        type: 'string',
        describe: 'reports directory: the journal goes to <out>/watch/watch.jsonl (a watch started again there resumes it)',
        default: 'reports',
      },
      protocol: { type: 'string', describe: `${PROTOCOL_HELP}: its limits and watch section`, default: 'spark-burnin' },
      db: { type: 'string', describe: 'results store: postgres://... (default <out>/cablequal.db, or $CABLEQUAL_DB; off: none)' },
      'metrics-port': {
        type: 'string',
        describe: 'serve the watch metrics (Prometheus/OpenMetrics, an allowlist of series) on this port (/metrics)',
        coerce: intArg('metrics-port', 0, 65535),
      },
      'metrics-host': { type: 'string', describe: 'address for --metrics-port', default: '127.0.0.1' },
      'accept-new-host-keys': ACCEPT_NEW_HOST_KEYS,
      'ssh-config': SSH_CONFIG,
      sim: { type: 'string', describe: 'watch the built-in simulated lab in service, in virtual time (in-service-clone, in-service-good)' },
      'sim-fault': { type: 'string', array: true, describe: 'inject a fault into the simulated lab, e.g. node-reboot@43200s:spark-a, ssh-drop@3600s' },
      seed: seedOption('simulator seed, a whole number'),
    }),
  run: async (args, { io, signal }) => {
    const { watchCommand } = await import('../watch-command.js');
    return watchCommand(
      {
        ...(args.nodes !== undefined ? { nodes: args.nodes } : {}),
        ...(args.for !== undefined ? { for: args.for } : {}),
        ...(args.interval !== undefined ? { intervalS: args.interval } : {}),
        json: args.json,
        out: args.out,
        protocol: args.protocol,
        ...(args.db !== undefined ? { db: args.db } : {}),
        ...(args.metricsPort !== undefined ? { metricsPort: args.metricsPort } : {}),
        metricsHost: args.metricsHost,
        acceptNewHostKeys: args.acceptNewHostKeys,
        ...(args.sshConfig ? { sshConfig: args.sshConfig } : {}),
        ...(args.sim !== undefined ? { sim: args.sim } : {}),
        ...(args.simFault ? { simFault: args.simFault.map(String) } : {}),
        ...(args.seed !== undefined ? { seed: args.seed } : {}),
      },
      io,
      signal,
    );
  },
});
