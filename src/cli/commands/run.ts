import { SPEED, speedArg } from '../options.js';
import type { HangupMode } from '../io.js';
import { defineCommand } from './define.js';
import { liveOptions, nodeOptions, PORT_BOTH_HELP, seedOption } from './shared-options.js';

// `cablequal run`: one cable, on two nodes over SSH or on the simulated lab.
export const runSpec = defineCommand({
  command: 'run',
  describe: 'qualify one cable: benchmarks and the burn-in on two nodes (or on the simulated lab with --sim)',
  examples: [
    ['$0 run --nodes spark-a,spark-b --dry-run', 'every command the run would execute on each node, nothing run'],
    ['$0 run --nodes spark-a,spark-b --port 1', 'qualify the cable in cage 1 (75 minutes; exit 0 PASS/MARGINAL, 1 FAIL)'],
    ['$0 run --nodes spark-a,spark-b --protocol quick', 'a 5-minute set-up check of the nodes and the cable (not a qualification)'],
    ['$0 run --sim failing-clone', 'the whole procedure on the simulated lab, in seconds (it FAILs: exit 1)'],
  ],
  simOptions: ['sim', 'sim-fault', 'seed', 'speed'],
  builder: (y) =>
    y.options({
      ...nodeOptions(
        'the two nodes, as ssh hosts or aliases: a,b or a:0,b:1 (cage per node); with --sim, names the simulated nodes and their cages',
        PORT_BOTH_HELP,
      ),
      label: { type: 'string', describe: 'label of the cable (else its EEPROM serial names the report folder)' },
      cluster: {
        type: 'boolean',
        describe: 'qualify every cable of a direct-cabled cluster of 2-8 nodes (--nodes a,b,c,...) in place, from its cabling map (see cablequal cabling)',
        default: false,
      },
      'break-lock': {
        type: 'boolean',
        describe: 'take over a STALE node lock left by a dead run (a live lock is never broken; see cablequal cleanup)',
        default: false,
      },
      'dry-run': {
        type: 'boolean',
        describe: 'print every command the run would execute on each node, in order (sudo marked); only read-only discovery runs on real nodes',
        default: false,
      },
      ...liveOptions({
        db: 'results store: postgres://... shared by several controllers (default <out>/cablequal.db, or $CABLEQUAL_DB; off: none)',
        hangup: 'when the terminal or SSH session closes (SIGHUP): continue (find the run again with cablequal status) or abort (stop cleanly, ABORTED)',
      }),
      sim: { type: 'string', describe: 'run on the built-in simulated lab with this scenario (see `cablequal sim scenarios`)' },
      'sim-fault': {
        type: 'string',
        array: true,
        describe: 'inject a fault into the simulated lab, e.g. ssh-drop@900s, node-reboot@1200s, garbage-output@300s',
      },
      seed: seedOption('simulator seed, a whole number (same seed, same journal)'),
      speed: {
        type: 'number',
        describe: `time speed-up: with --sim, run the simulated lab at N times real time, at most ${SPEED.simMax} (to watch it; without --speed, --sim runs in virtual time); with --nodes, against \`cablequal sim serve --speed N\` nodes (the same N; refused against real nodes)`,
        coerce: speedArg(),
      },
    }),
  run: async (args, { io, signal }) => {
    const { runCommand } = await import('../run-command.js');
    return runCommand(
      {
        ...(args.db !== undefined ? { db: args.db } : {}),
        ...(args.metricsPort !== undefined ? { metricsPort: args.metricsPort } : {}),
        ...(args.metricsLinger !== undefined ? { metricsLingerS: args.metricsLinger } : {}),
        metricsHost: args.metricsHost,
        ...(args.speed !== undefined ? { speed: args.speed } : {}),
        ...(args.sshConfig ? { sshConfig: args.sshConfig } : {}),
        breakLock: args.breakLock,
        ...(args.cluster ? { cluster: true } : {}),
        dryRun: args.dryRun,
        onHangup: args.onHangup as HangupMode,
        ...(args.sim !== undefined ? { sim: args.sim } : {}),
        ...(args.simFault ? { simFault: args.simFault.map(String) } : {}),
        ...(args.seed !== undefined ? { seed: args.seed } : {}),
        ...(args.nodes !== undefined ? { nodes: args.nodes } : {}),
        ...(args.port !== undefined ? { port: String(args.port) } : {}),
        protocol: args.protocol,
        ...(args.label !== undefined ? { label: args.label } : {}),
        out: args.out,
        json: args.json,
        acceptNewHostKeys: args.acceptNewHostKeys,
      },
      io,
      signal,
    );
  },
});
