import { SPEED_MAX, SPEED_MIN } from '../../domain/speed.js';
import { intArg, speedArg } from '../options.js';
import { defineCommand, type CommandGroup } from './define.js';
import { seedOption } from './shared-options.js';

// `cablequal sim scenarios`: what the simulated lab can play.
const scenariosSpec = defineCommand({
  command: 'scenarios',
  describe: "list the simulated lab's scenarios and their expected outcomes",
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
  builder: (y) =>
    y
      .option('scenario', { type: 'string', demandOption: true, describe: 'the scenario to serve (see `cablequal sim scenarios`)' })
      .option('sim-fault', { type: 'string', array: true, describe: 'inject a fault, e.g. ssh-drop@900s (as run --sim-fault)' })
      .option('port', {
        type: 'string',
        describe: 'first SSH port (0 = random; the second node gets the next one)',
        default: '0',
        coerce: intArg('port', 0, 65534),
      })
      .option('speed', {
        type: 'string',
        describe: `speed-up factor of simulated time, from ${SPEED_MIN} (real time) to ${SPEED_MAX} (give the same --speed to \`cablequal run\`)`,
        default: '1',
        coerce: speedArg,
      })
      .option('seed', seedOption('simulator seed, a whole number (the same scenario and seed as `run --sim` give the same verdict)'))
      .option('dir', { type: 'string', describe: 'where to write keys, known_hosts and ssh config', default: '.cablequal-sim' }),
  run: async (args, { io }) => {
    const { simServeCommand } = await import('../sim-serve-command.js');
    return simServeCommand(
      {
        scenario: args.scenario,
        faults: (args.simFault ?? []).map(String),
        port: args.port ?? 0,
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
};
