import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { authMethods, planAuth } from '../../src/transport/ssh-auth.js';
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
