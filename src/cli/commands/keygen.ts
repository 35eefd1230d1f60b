import { defineCommand } from './define.js';

// `cablequal keygen [dir]`: the lab's signing key.
export const keygenSpec = defineCommand({
  command: 'keygen [dir]',
  describe: "create the lab's Ed25519 key that signs certificates (default ~/.config/cablequal/lab-key.pem or $CABLEQUAL_LAB_KEY)",
  examples: [
    ['$0 keygen', 'the lab key at ~/.config/cablequal/lab-key.pem, where runs look for it'],
    ['$0 keygen /secure/lab-keys', 'elsewhere; then export CABLEQUAL_LAB_KEY=/secure/lab-keys/lab-key.pem'],
  ],
  builder: (y) => y.positional('dir', { type: 'string', describe: 'directory for lab-key.pem and lab-key.pub.pem' }),
  run: async (args, { io }) => {
    const { keygenCommand } = await import('../report-commands.js');
    return keygenCommand({ ...(args.dir ? { dir: args.dir } : {}) }, io);
  },
});
