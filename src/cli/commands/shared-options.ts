import type { Options } from 'yargs';
import { HANGUP_MODES } from '../io.js';
import { intArg } from '../options.js';

// The built-in protocols and what `--protocol` takes.
export const PROTOCOL_HELP = 'built-in protocol name (spark-burnin, quick) or a protocol file';

// --accept-new-host-keys, as every command that reaches nodes over SSH takes it.
export const ACCEPT_NEW_HOST_KEYS = {
  type: 'boolean',
  describe: 'trust unknown SSH host keys on first use (StrictHostKeyChecking=accept-new)',
  default: false,
} as const satisfies Options;

// --ssh-config, as every command that reaches nodes over SSH takes it.
export const SSH_CONFIG = {
  type: 'string',
  describe: 'ssh config file to read instead of ~/.ssh/config (e.g. the one `sim serve` writes)',
} as const satisfies Options;

// --seed of the simulated lab.
export function seedOption(describe: string) {
  return { type: 'number', describe, coerce: intArg('seed', 0, 2 ** 32 - 1) } as const satisfies Options;
}

// What --port takes where one cable is qualified (`preflight`), and where two at once may be (`run`, `batch`): --port
// is always the QSFP cage; a TCP port is --listen (dashboard, sim serve) or --metrics-port.
const PORT_HELP = 'cage (QSFP port) of the cable: 0, 1 or auto (the cage whose two rails are Up)';
export const PORT_BOTH_HELP = `${PORT_HELP}; both: the cables in cage 0 and cage 1 at once, each with its own verdict (each soak carries half the payload per cable)`;

// The options `run` and `preflight` share: the nodes, the protocol, the output.
export function nodeOptions(nodes: string, port = PORT_HELP) {
  return {
    nodes: { type: 'string', describe: nodes },
    port: { type: 'string', describe: port },
    protocol: { type: 'string', describe: PROTOCOL_HELP, default: 'spark-burnin' },
    out: { type: 'string', describe: 'reports directory', default: 'reports' },
    json: { type: 'boolean', describe: 'print one JSON object on stdout', default: false },
    'accept-new-host-keys': ACCEPT_NEW_HOST_KEYS,
    'ssh-config': SSH_CONFIG,
  } as const satisfies Record<string, Options>;
}

// The options of a long-running qualification (`run`, `batch`): a closed terminal, the results store, live metrics.
export function liveOptions(what: { db: string; hangup: string }) {
  return {
    'on-hangup': { type: 'string', choices: HANGUP_MODES, default: 'continue', describe: what.hangup },
    db: { type: 'string', describe: what.db },
    'metrics-port': {
      type: 'number',
      describe: 'serve live Prometheus/OpenMetrics metrics on this TCP port (/metrics)',
      coerce: intArg('metrics-port', 0, 65535),
    },
    'metrics-host': { type: 'string', describe: 'address for --metrics-port', default: '127.0.0.1' },
    'metrics-linger': {
      type: 'number',
      describe: 'seconds --metrics-port stays up after the end, so a scrape sees the outcome (0: none; Ctrl-C ends it)',
      default: 60,
      coerce: intArg('metrics-linger', 0, 86_400),
    },
  } as const satisfies Record<string, Options>;
}
