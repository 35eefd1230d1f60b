import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { authMethods, checkSudo, planAuth, sudoAdvice } from '../../src/transport/ssh-auth.js';
import { TransportError } from '../../src/transport/types.js';
import { generateEd25519 } from '../../src/transport/ssh-keys.js';

const dir = mkdtempSync(join(tmpdir(), 'cqauth'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('planAuth', () => {
  it('agent first, then readable identity files in order; missing files skipped, encrypted ones noted', () => {
    const plain = generateEd25519();
    const locked = generateEd25519({ passphrase: 'secret', cipher: 'aes256-ctr', rounds: 4 });
    writeFileSync(join(dir, 'id_ed25519'), plain.private);
    writeFileSync(join(dir, 'id_locked'), locked.private);
    const plan = planAuth({
      username: 'nvidia',
      identityFiles: [join(dir, 'missing'), join(dir, 'id_locked'), join(dir, 'id_ed25519')],
      agentSock: '/run/agent.sock',
    });
    expect(plan.keys.map((k) => k.path)).toEqual([join(dir, 'id_ed25519')]);
    expect(plan.notes).toEqual([`${join(dir, 'id_locked')}: passphrase-protected; add it to ssh-agent`]);
    expect(authMethods(plan).map((m) => m.type)).toEqual(['agent', 'publickey']);
    expect(authMethods({ ...plan, agent: null }).map((m) => m.type)).toEqual(['publickey']);
  });
});

describe('sudo refusal', () => {
  // Results built here with sudo's standard refusal wording (not a recording).
  const result = (stderr: string) => ({ command: 'sudo -n ethtool -m enp1s0f1np1', stdout: '', stderr, exitCode: 1, signal: null, durationMs: 3 });

  it('names the command and gives the sudoers line to add', () => {
    for (const msg of [
      'sudo: a password is required\n',
      'sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper\n',
    ]) {
      const e = (() => {
        try {
          checkSudo('spark-a', 'nvidia', result(msg));
        } catch (err) {
          return err;
        }
        return null;
      })();
      expect(e).toBeInstanceOf(TransportError);
      expect((e as Error).message).toContain('spark-a: sudo refused `sudo -n ethtool -m enp1s0f1np1`: sudo: a ');
      expect((e as Error).message).toContain('nvidia ALL=(root) NOPASSWD: /usr/sbin/ethtool -m *');
    }
  });

  it('other failures pass through untouched', () => {
    expect(() => checkSudo('spark-a', 'nvidia', result('netlink error: Operation not supported\n'))).not.toThrow();
    expect(sudoAdvice('op')).toBe('add to sudoers with visudo -f /etc/sudoers.d/cablequal: op ALL=(root) NOPASSWD: /usr/sbin/ethtool -m *');
  });
});
