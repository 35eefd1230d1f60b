import { defineCommand } from './define.js';
import { ACCEPT_NEW_HOST_KEYS, SSH_CONFIG } from './shared-options.js';

// `cablequal cleanup`: free the nodes of a run whose controller died.
export const cleanupSpec = defineCommand({
  command: 'cleanup',
  describe: "after a controller died: stop its run's processes on the nodes (found by their run marker) and release its node locks",
  examples: [
    ['$0 cleanup --nodes spark-a,spark-b', "stop a dead controller's loads on both nodes and release its locks"],
    ['$0 cleanup --nodes spark-a,spark-b --ssh-config .cablequal-sim/config', 'the same on nodes served by `cablequal sim serve`'],
  ],
  builder: (y) =>
    y
      .option('nodes', { type: 'string', demandOption: true, describe: 'the nodes to clean: a,b (or a:0,b:1 as run --nodes takes)' })
      .option('ssh-config', SSH_CONFIG)
      .option('accept-new-host-keys', ACCEPT_NEW_HOST_KEYS),
  run: async (args, { io }) => {
    const { cleanupCommand } = await import('../cleanup-command.js');
    return cleanupCommand({ nodes: args.nodes, ...(args.sshConfig ? { sshConfig: args.sshConfig } : {}), acceptNewHostKeys: args.acceptNewHostKeys }, io);
  },
});
