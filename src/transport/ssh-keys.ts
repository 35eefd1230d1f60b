// Generated SSH keys (the simulated lab's client key, the test server's host key).
import ssh2 from 'ssh2';

const { utils } = ssh2; // ssh2 is CommonJS: named ESM imports fail under plain node

type KeyGenOptions = Parameters<typeof utils.generateKeyPairSync>[1];

// ssh2's ed25519 generation drops a leading zero byte of the public key about once in 430 pairs (measured: 7 in
// 3,000), writing a pair that neither ssh2 nor OpenSSH can read back; a pair is kept only once both halves parse.
export function generateEd25519(opts: KeyGenOptions = {}): { private: string; public: string } {
  for (let attempt = 0; attempt < 50; attempt++) {
    const pair = utils.generateKeyPairSync('ed25519', opts);
    const pub = utils.parseKey(pair.public);
    const priv = utils.parseKey(pair.private, (opts as { passphrase?: string }).passphrase);
    if (!(pub instanceof Error) && !(priv instanceof Error)) return pair;
  }
  throw new Error('could not generate a readable ed25519 key pair in 50 attempts');
}
