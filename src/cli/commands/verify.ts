import { defineCommand } from './define.js';

// `cablequal verify <certificate>`: signature, journal hash and the verdict re-graded.
export const verifySpec = defineCommand({
  command: 'verify <certificate>',
  describe: 'check a certificate.json: signature, journal hash, and the verdict re-graded from the journal',
  builder: (y) =>
    y
      .positional('certificate', { type: 'string', describe: 'the certificate.json to check' })
      .option('public-key', { type: 'string', describe: 'trusted lab public key (PEM) to pin the signer' }),
  run: async (args, { io }) => {
    const { verifyCommand } = await import('../report-commands.js');
    return verifyCommand({ certificate: args.certificate!, ...(args.publicKey !== undefined ? { publicKey: args.publicKey } : {}) }, io);
  },
});
