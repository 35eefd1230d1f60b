import { defineCommand } from './define.js';
import { nodeOptions } from './shared-options.js';

// `cablequal preflight`: are both nodes ready, without loading anything.
export const preflightSpec = defineCommand({
  command: 'preflight',
  describe: 'check both nodes are ready (tools, rails Up at 200G, RS-FEC, addresses, sudo for ethtool -m) without loading anything',
  examples: [
    ['$0 preflight --nodes spark-a,spark-b', 'tools, rails Up at 200G, RS-FEC, sudo and SSH of both nodes, cage found by itself'],
    ['$0 preflight --nodes spark-a,spark-b --port 0', 'check the cable in cage 0'],
    ['$0 preflight --sim good-qsfp56', 'the same checks on the simulated lab'],
  ],
  simOptions: ['sim'],
  builder: (y) => y.options({ ...nodeOptions('the two nodes: a,b or a:0,b:1'), sim: { type: 'string', describe: 'check the simulated lab instead' } }),
  run: async (args, { io, signal }) => {
    const { preflightCommand } = await import('../run-command.js');
    return preflightCommand(
      {
        ...(args.sshConfig ? { sshConfig: args.sshConfig } : {}),
        ...(args.sim !== undefined ? { sim: args.sim } : {}),
        ...(args.nodes !== undefined ? { nodes: args.nodes } : {}),
        ...(args.port !== undefined ? { port: String(args.port) } : {}),
        protocol: args.protocol,
        out: args.out,
        json: args.json,
        acceptNewHostKeys: args.acceptNewHostKeys,
      },
      io,
      signal,
    );
  },
});
