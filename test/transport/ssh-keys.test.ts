import ssh2 from 'ssh2';
import { describe, expect, it } from 'vitest';
import { generateEd25519 } from '../../src/transport/ssh-keys.js';

const { utils } = ssh2;

describe('generateEd25519', () => {
  it('every pair reads back, public and private (ssh2 alone writes an unreadable pair about once in 430)', () => {
    let unreadable = 0;
    for (let i = 0; i < 1500; i++) {
      const k = generateEd25519({ comment: `k${i}` }); // GENERATED test keys
      const pub = utils.parseKey(k.public);
      const priv = utils.parseKey(k.private);
      if (pub instanceof Error || priv instanceof Error) unreadable++;
      else expect((Array.isArray(pub) ? pub[0]! : pub).getPublicSSH().length).toBe(51); // 4+11 type, 4+32 key
    }
    expect(unreadable).toBe(0);
  });
});
