import { intArg, renamedOption, SPEED, speedArg } from '../options.js';
import { defineCommand, type CommandGroup } from './define.js';
import { seedOption } from './shared-options.js';

// `cablequal sim scenarios`: what the simulated lab can play.
const scenariosSpec = defineCommand({
  command: 'scenarios',
  describe: "list the simulated lab's scenarios and their expected outcomes",
  examples: [
    ['$0 sim scenarios', 'every scenario with its expected outcome'],
    ['$0 run --sim good-qsfp56', 'then run one of them'],
  ],
  builder: (y) => y,
  run: async (_args, { io }) => {
    const { scenariosCommand } = await import('../sim-command.js');
    return scenariosCommand(io);
  },
});

// `cablequal sim serve`: both simulated nodes behind real SSH servers.
const serveSpec = defineCommand({
  command: 'serve',
  describe: 'serve both simulated nodes over real SSH on 127.0.0.1, in real time (optionally sped up)',
  examples: [
    ['$0 sim serve --scenario failing-clone --speed 20 --seed 7', 'both nodes over SSH on loopback, 20 times real time'],
    ['$0 run --nodes spark-a,spark-b --ssh-config .cablequal-sim/config', 'then qualify their cable over real SSH (with the same --speed)'],
  ],
  builder: (y) =>
    y
      .option('scenario', { type: 'string', demandOption: true, describe: 'the scenario to serve (see `cablequal sim scenarios`)' })
      .option('sim-fault', { type: 'string', array: true, describe: 'inject a fault, e.g. ssh-drop@900s (as run --sim-fault)' })
      .option('listen', {
        type: 'number',
        describe: 'first TCP port the SSH servers listen on (0 = a free one, the default; the second node gets the next one)',
        coerce: intArg('listen', 0, 65534),
      })
      .option('port', { type: 'number', hidden: true, deprecated: 'use --listen', coerce: intArg('port', 0, 65534) })
      .option('speed', {
        type: 'number',
        describe: `speed-up factor of simulated time, from ${SPEED.min} to ${SPEED.max} (give the same --speed to \`cablequal run\`)`,
        default: 1,
        coerce: speedArg(),
      })
      .option('seed', seedOption('simulator seed, a whole number (the same scenario and seed as `run --sim` give the same verdict)'))
      .option('dir', { type: 'string', describe: 'where to write keys, known_hosts and ssh config', default: '.cablequal-sim' }),
  run: async (args, { io }) => {
    const { simServeCommand } = await import('../sim-serve-command.js');
    return simServeCommand(
      {
        scenario: args.scenario,
        faults: (args.simFault ?? []).map(String),
        port: renamedOption({ name: 'port', value: args.port }, { name: 'listen', value: args.listen }, io.stderr) ?? 0,
        speed: args.speed ?? 1,
        dir: args.dir,
        ...(args.seed !== undefined ? { seed: args.seed } : {}),
      },
      io,
    );
  },
});

// `cablequal sim ...`: the simulated lab.
export const simGroup: CommandGroup = {
  command: 'sim',
  describe: 'the simulated lab',
  subcommands: [scenariosSpec, serveSpec],
  demand: 'name a sim command: scenarios or serve',
  examples: [
    ['$0 sim scenarios', "the lab's scenarios"],
    ['$0 sim serve --scenario failing-clone --speed 20', 'both simulated nodes over real SSH'],
  ],
};
