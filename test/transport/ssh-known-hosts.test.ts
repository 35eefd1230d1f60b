import { createHmac } from 'node:crypto';
import ssh2 from 'ssh2';
const { utils } = ssh2;
import { describe, expect, it } from 'vitest';
import {
  checkHostKey,
  entryMatches,
  hashHost,
  hostToken,
  keyTypeOf,
  knownHostLine,
  knownKeyTypes,
  mismatchMessage,
  parseKnownHosts,
} from '../../src/transport/known-hosts.js';
import { generateEd25519 } from '../../src/transport/ssh-keys.js';

// Generated test keys (ssh2 keygen), not recorded from any machine.
const pub = (k: string) => {
  const p = utils.parseKey(k);
  if (p instanceof Error || Array.isArray(p)) throw new Error('bad key');
  return p.getPublicSSH();
};
const keyA = pub(generateEd25519().public);
const keyB = pub(generateEd25519().public);
const keyE = pub(utils.generateKeyPairSync('ecdsa', { bits: 256 }).public);
const b64 = (b: Buffer) => b.toString('base64');

describe('known_hosts', () => {
  it('host tokens and key type of a wire blob', () => {
    expect(hostToken('spark-a', 22)).toBe('spark-a');
    expect(hostToken('127.0.0.1', 2222)).toBe('[127.0.0.1]:2222');
    expect(keyTypeOf(keyA)).toBe('ssh-ed25519');
    expect(keyTypeOf(keyE)).toBe('ecdsa-sha2-nistp256');
  });

  it('plain entry: ok on the same key, mismatch names the line', () => {
    const text = `# comment\nother ssh-ed25519 ${b64(keyB)}\nspark-a,10.0.0.1 ssh-ed25519 ${b64(keyA)}\n`;
    expect(checkHostKey(text, 'spark-a', 22, keyA)).toEqual({ status: 'ok', line: 3 });
    expect(checkHostKey(text, '10.0.0.1', 22, keyB)).toEqual({ status: 'mismatch', line: 3, expectedType: 'ssh-ed25519' });
    // port 2222 is a different token: unknown, not a mismatch
    expect(checkHostKey(text, 'spark-a', 2222, keyA)).toMatchObject({ status: 'unknown' });
  });

  it('hashed |1|salt|hash entries match by HMAC-SHA1 of the token', () => {
    const salt = Buffer.alloc(20, 7);
    const hashed = hashHost('[127.0.0.1]:2222', salt);
    const expected = createHmac('sha1', salt).update('[127.0.0.1]:2222').digest('base64');
    expect(hashed).toBe(`|1|${salt.toString('base64')}|${expected}`);
    const text = `${hashed} ssh-ed25519 ${b64(keyA)}\n`;
    expect(checkHostKey(text, '127.0.0.1', 2222, keyA)).toEqual({ status: 'ok', line: 1 });
    expect(checkHostKey(text, '127.0.0.1', 2223, keyA).status).toBe('unknown');
    expect(checkHostKey(text, '127.0.0.1', 2222, keyB)).toMatchObject({ status: 'mismatch', line: 1 });
  });

  it('a hashed line written by ssh-keygen -H format (fixed salt) matches', () => {
    // |1|<base64 salt>|<base64 HMAC-SHA1(salt, "spark-a")> computed independently here
    const salt = Buffer.from('0123456789abcdefghij');
    const mac = createHmac('sha1', salt).update('spark-a').digest('base64');
    const e = parseKnownHosts(`|1|${salt.toString('base64')}|${mac} ssh-ed25519 ${b64(keyA)}`).entries[0]!;
    expect(entryMatches(e, 'spark-a', 22)).toBe(true);
    expect(entryMatches(e, 'spark-b', 22)).toBe(false);
  });

  it('@revoked refuses the key; @cert-authority is ignored and reported', () => {
    const text = `@revoked * ssh-ed25519 ${b64(keyA)}\n@cert-authority *.lab ssh-ed25519 ${b64(keyB)}\nspark-a ssh-ed25519 ${b64(keyA)}\n`;
    expect(checkHostKey(text, 'spark-a', 22, keyA)).toEqual({ status: 'revoked', line: 1 });
    expect(checkHostKey(text, 'n1.lab', 22, keyB)).toEqual({ status: 'unknown', certAuthorityLines: [2], otherTypeLines: [] });
  });

  it('only another key type known: unknown, with the other lines listed; those types are preferred', () => {
    const text = `spark-a ecdsa-sha2-nistp256 ${b64(keyE)}\n`;
    expect(checkHostKey(text, 'spark-a', 22, keyA)).toEqual({ status: 'unknown', certAuthorityLines: [], otherTypeLines: [1] });
    expect(knownKeyTypes(text, 'spark-a', 22)).toEqual(['ecdsa-sha2-nistp256']);
  });

  it('negated and wildcard host patterns', () => {
    const text = `*.lab,!evil.lab ssh-ed25519 ${b64(keyA)}\n`;
    expect(checkHostKey(text, 'n1.lab', 22, keyA).status).toBe('ok');
    expect(checkHostKey(text, 'evil.lab', 22, keyA).status).toBe('unknown');
  });

  it('malformed lines are skipped with their numbers', () => {
    const r = parseKnownHosts(`garbage\nspark-a ssh-ed25519 ${b64(keyA)}\n@bogus x y z\nh t not*base64\n`);
    expect(r.entries.map((e) => e.line)).toEqual([2]);
    expect(r.skipped).toEqual([1, 3, 4]);
  });

  it('appended line and the mismatch message', () => {
    expect(knownHostLine('127.0.0.1', 2200, keyA)).toBe(`[127.0.0.1]:2200 ssh-ed25519 ${b64(keyA)}`);
    expect(knownHostLine('127.0.0.1', 2200, keyA, true)).toMatch(/^\|1\|[A-Za-z0-9+/=]+\|[A-Za-z0-9+/=]+ ssh-ed25519 /);
    const m = mismatchMessage('127.0.0.1', 2200, '/tmp/kh', 3, 'SHA256:abc');
    expect(m).toContain('REMOTE HOST IDENTIFICATION HAS CHANGED');
    expect(m).toContain('/tmp/kh:3');
    expect(m).toContain("ssh-keygen -R '[127.0.0.1]:2200' -f /tmp/kh");
  });
});
