import { defineCommand } from './define.js';

// `cablequal verify <certificate>`: signature, journal hash and the verdict re-graded.
export const verifySpec = defineCommand({
  command: 'verify <certificate>',
  describe: 'check a certificate.json: signature, journal hash, and the verdict re-graded from the journal',
  examples: [
    ['$0 verify <run dir>/certificate.json --public-key lab-key.pub.pem', "signature against the lab's key, journal hash, verdict re-graded"],
    ['$0 verify <run dir>/setup-check.json', "a set-up check alike (on the lab's controller the key beside the lab key is pinned)"],
  ],
  builder: (y) =>
    y
      .positional('certificate', { type: 'string', describe: 'the certificate.json to check' })
      .option('public-key', { type: 'string', describe: 'trusted lab public key (PEM) to pin the signer' }),
  run: async (args, { io }) => {
    const { verifyCommand } = await import('../report-commands.js');
    return verifyCommand({ certificate: args.certificate!, ...(args.publicKey !== undefined ? { publicKey: args.publicKey } : {}) }, io);
  },
});
