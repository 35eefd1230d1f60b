import { defineCommand } from './define.js';
import { ACCEPT_NEW_HOST_KEYS, SSH_CONFIG, seedOption } from './shared-options.js';

// `cablequal cabling`: which cage of which node meets which, and what is wrong with it (read-only).
export const cablingSpec = defineCommand({
  command: 'cabling',
  describe: 'map the cabling of 2-8 Sparks (which cage meets which, each cable by its serial) and check the wiring rules; changes nothing',
  examples: [
    ['$0 cabling --nodes spark-a,spark-b,spark-c', 'map a triangle of three Sparks and name any miswire with its fix'],
    ['$0 cabling --sim triangle-miswired', 'the simulated triangle cabled port 0 to port 0: exit 1, the fix printed'],
    ['$0 cabling --nodes spark-a,spark-b --json', 'the map as JSON (exit 0 right, 1 a problem, 3 a node unreadable)'],
  ],
  simOptions: ['sim', 'sim-fault', 'seed'],
  builder: (y) =>
    y.options({
      nodes: { type: 'string', describe: 'the nodes, as ssh hosts or aliases: a,b,c[,...] (2 to 8)' },
      json: { type: 'boolean', describe: 'print the map as one JSON object {topology, nodes, links, problems}', default: false },
      'accept-new-host-keys': ACCEPT_NEW_HOST_KEYS,
      'ssh-config': SSH_CONFIG,
      sim: { type: 'string', describe: 'map the simulated lab of this scenario instead (e.g. triangle, ring4, switch4)' },
      'sim-fault': { type: 'string', array: true, describe: 'inject a fault into the simulated lab, e.g. ssh-drop@0s:spark-b (as run --sim-fault)' },
      seed: seedOption('simulator seed, a whole number'),
    }),
  run: async (args, { io, signal }) => {
    const { cablingCommand } = await import('../cabling-command.js');
    return cablingCommand(
      {
        ...(args.nodes !== undefined ? { nodes: args.nodes } : {}),
        ...(args.sim !== undefined ? { sim: args.sim } : {}),
        ...(args.seed !== undefined ? { seed: args.seed } : {}),
        ...(args.simFault ? { simFault: args.simFault.map(String) } : {}),
        ...(args.sshConfig ? { sshConfig: args.sshConfig } : {}),
        json: args.json,
        acceptNewHostKeys: args.acceptNewHostKeys,
      },
      io,
      signal,
    );
  },
});
