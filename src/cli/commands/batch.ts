import type { HangupMode } from '../io.js';
import { intArg } from '../options.js';
import { defineCommand } from './define.js';
import { ACCEPT_NEW_HOST_KEYS, liveOptions, PORT_BOTH_HELP, PROTOCOL_HELP, seedOption, SSH_CONFIG } from './shared-options.js';

// `cablequal batch`: a box of cables, one after another, per node pair.
export const batchSpec = defineCommand({
  command: 'batch',
  describe: 'qualify a box of cables one after another (one queue per node pair); resumable; batch.csv and batch.html',
  examples: [
    ['$0 batch --manifest box17.csv --nodes spark-a:1,spark-b:1', 'the box on one bench, cage 1: plug each cable when told, Enter'],
    ['$0 batch --manifest box17.csv --nodes spark-a:1,spark-b:1 --resume', 'continue an interrupted batch with its next untested cable'],
    ['$0 batch --manifest box17.csv --pair a:1,b:1 --pair c:1,d:1 --auto-detect', 'two benches at once, unattended'],
    ['$0 batch --manifest box.csv --sim manifest --protocol quick', "the box on the simulated lab (the manifest's scenario column)"],
  ],
  simOptions: ['sim', 'seed', 'sim-swap', 'sim-reboot'],
  builder: (y) =>
    y.options({
      manifest: { type: 'string', demandOption: true, describe: 'CSV: label[,pn][,serial][,scenario] (docs/operator-guide.md §7)' },
      nodes: { type: 'string', describe: 'the two nodes of the bench: a,b or a:0,b:1' },
      pair: { type: 'string', array: true, describe: 'one bench per --pair (a:0,b:1); several run concurrently' },
      port: { type: 'string', describe: PORT_BOTH_HELP },
      protocol: { type: 'string', default: 'spark-burnin', describe: PROTOCOL_HELP },
      golden: { type: 'string', describe: 'EEPROM serial of the reference cable: runs first and last; drift marks the batch ERROR' },
      'golden-protocol': { type: 'string', describe: 'protocol of the golden runs (e.g. quick)' },
      'auto-detect': { type: 'boolean', default: false, describe: 'unattended: poll for the cable swap, no keyboard' },
      reboot: {
        type: 'string',
        choices: ['auto', 'manual'],
        default: 'auto',
        describe:
          'after each swap the nodes need a reboot with the cable in: auto (sudo systemctl reboot --no-block) or manual (you are told when; the batch waits for both boot ids to change)',
      },
      resume: { type: 'boolean', default: false, describe: 'continue the batch in --out with the next untested cable' },
      sim: { type: 'string', describe: 'simulated box: comma list or file of scenario[=SERIAL], or "manifest" for its scenario column' },
      seed: seedOption('simulator seed, a whole number'),
      'sim-swap': {
        type: 'number',
        describe: "with --sim: seconds the simulated lab's operator takes to swap one cable (pull the old one, plug the next; default 60)",
        coerce: intArg('sim-swap', 3, 3600),
      },
      'sim-reboot': {
        type: 'number',
        describe: "with --sim: seconds a simulated node takes to reboot (default: the scenario's rebootS, 90 s)",
        coerce: intArg('sim-reboot', 1, 3600),
      },
      out: { type: 'string', describe: 'batch directory (default reports/batch-<manifest name>)' },
      'accept-new-host-keys': ACCEPT_NEW_HOST_KEYS,
      'dry-run': {
        type: 'boolean',
        default: false,
        describe: "print, per pair, every command one cable's run executes on each node; nothing runs but read-only discovery",
      },
      'ssh-config': SSH_CONFIG,
      ...liveOptions({
        db: 'results store: postgres://... (default cablequal.db beside the batch directory, or $CABLEQUAL_DB; off: none)',
        hangup: 'when the terminal or SSH session closes (SIGHUP): continue or abort',
      }),
    }),
  run: async (args, { io, signal }) => {
    const { batchCommand } = await import('../batch-command.js');
    return batchCommand(
      {
        ...(args.db !== undefined ? { db: args.db } : {}),
        ...(args.metricsPort !== undefined ? { metricsPort: args.metricsPort } : {}),
        ...(args.metricsLinger !== undefined ? { metricsLingerS: args.metricsLinger } : {}),
        metricsHost: args.metricsHost,
        manifest: args.manifest,
        ...(args.nodes !== undefined ? { nodes: args.nodes } : {}),
        ...(args.pair ? { pair: args.pair.map(String) } : {}),
        ...(args.port !== undefined ? { port: String(args.port) } : {}),
        protocol: args.protocol,
        ...(args.goldenProtocol ? { goldenProtocol: args.goldenProtocol } : {}),
        ...(args.golden ? { golden: args.golden } : {}),
        autoDetect: args.autoDetect,
        reboot: args.reboot as 'auto' | 'manual',
        resume: args.resume,
        ...(args.sim !== undefined ? { sim: args.sim } : {}),
        ...(args.seed !== undefined ? { seed: args.seed } : {}),
        ...(args.simSwap !== undefined ? { simSwapS: args.simSwap } : {}),
        ...(args.simReboot !== undefined ? { simRebootS: args.simReboot } : {}),
        ...(args.out ? { out: args.out } : {}),
        acceptNewHostKeys: args.acceptNewHostKeys,
        dryRun: args.dryRun,
        ...(args.sshConfig ? { sshConfig: args.sshConfig } : {}),
        onHangup: args.onHangup as HangupMode,
      },
      io,
      signal,
    );
  },
});
