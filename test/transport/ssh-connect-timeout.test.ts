import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { SshRunner } from '../../src/transport/ssh-runner.js';
import { TransportError } from '../../src/transport/types.js';

// A host that never answers the TCP connect (SYNs dropped): the attempt fails at ConnectTimeout, not after the
// kernel's ~2 minutes of SYN retries. This network answers every connect, so the socket is injected: it never connects.
describe('SshRunner connecting to a host that never answers', () => {
  it('fails at ConnectTimeout with what to check, and frees the socket', async () => {
    const sockets: InstanceType<typeof PassThrough>[] = [];
    const r = new SshRunner({
      node: 'silent-node',
      host: '127.0.0.1',
      port: 22,
      user: 'nvidia',
      configPath: null,
      agentSock: null,
      identityFiles: [],
      connectTimeoutMs: 200,
      reconnect: { enabled: false },
      openSocket: () => {
        const s = new PassThrough();
        sockets.push(s);
        return s;
      },
    });
    const t0 = Date.now();
    const e = await r.run('true').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TransportError);
    expect((e as Error).message).toMatch(/silent-node: cannot connect to 127\.0\.0\.1:22: no answer within 200 ms \(ConnectTimeout\); check the host is up/);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(sockets).toHaveLength(1);
    expect(sockets[0]!.destroyed).toBe(true);
    await r.close();
  });
});
