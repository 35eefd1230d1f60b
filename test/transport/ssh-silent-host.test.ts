// A host that accepts TCP but never speaks SSH (a firewall, a wrong port, a hung sshd), and one that answers with
// garbage: a clean TransportError naming the host and what to check, and never an unhandled ssh2 'error' event
// afterwards (that used to crash the CLI after the ERROR was printed, before the run report was written).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshRunner } from '../../src/transport/ssh-runner.js';
import { TransportError } from '../../src/transport/types.js';
import { startQuietHosts } from './quiet-hosts.js';

describe('hosts that accept TCP but do not speak SSH', { timeout: 60_000 }, () => {
  let hosts: Awaited<ReturnType<typeof startQuietHosts>>;
  const dir = mkdtempSync(join(tmpdir(), 'cq-silent-'));
  beforeAll(async () => {
    hosts = await startQuietHosts();
  });
  afterAll(async () => {
    await hosts?.close();
  });

  // Errors ssh2 emits after the first one must be heard by the runner: collect any that reach the process.
  async function connectExpectingError(port: number): Promise<TransportError> {
    const stray: unknown[] = [];
    const onStray = (e: unknown) => stray.push(e);
    process.on('uncaughtException', onStray);
    try {
      const r = new SshRunner({
        node: 'quiet',
        host: '127.0.0.1',
        port,
        user: 'x',
        homeDir: dir,
        configPath: null,
        agentSock: null,
        identityFiles: [],
        connectTimeoutMs: 700,
        reconnect: { enabled: false },
      });
      const err = await r.connect().then(
        () => null,
        (e: unknown) => e,
      );
      await new Promise((res) => setTimeout(res, 1500)); // the socket closing after the timeout emits again
      await r.close();
      expect(stray).toEqual([]);
      expect(err).toBeInstanceOf(TransportError);
      return err as TransportError;
    } finally {
      process.off('uncaughtException', onStray);
    }
  }

  it('silent host: a TransportError that says SSH never answered, then nothing unhandled', async () => {
    const e = await connectExpectingError(hosts.silent.port);
    expect(e.message).toBe(
      `quiet: cannot connect to 127.0.0.1:${hosts.silent.port}: no SSH handshake within 700 ms (ConnectTimeout): the host accepted the TCP connection but did not speak SSH; check the host and port`,
    );
  });

  it('garbage host: a TransportError, printable, then nothing unhandled', async () => {
    const e = await connectExpectingError(hosts.garbage.port);
    expect(e.message).toMatch(new RegExp(`^quiet: cannot connect to 127\\.0\\.0\\.1:${hosts.garbage.port}: `));
    expect(e.message).not.toMatch(/[\u0000-\u001f]/);
  });
});
