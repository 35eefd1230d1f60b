// A host that accepts TCP but never speaks SSH (a firewall, a wrong port, a hung sshd), and one that answers with
// garbage: a clean TransportError naming the host and what to check, and never an unhandled ssh2 'error' event
// afterwards (that used to crash the CLI after the ERROR was printed, before the run report was written).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshRunner } from '../../src/transport/ssh-runner.js';
import { TransportError } from '../../src/transport/types.js';

const BIN = join(process.cwd(), 'bin', 'cablequal.js');

// A TCP server on 127.0.0.1 that accepts and then stays silent, or writes `greeting` and stays open.
function listen(greeting: string | null): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
    if (greeting !== null) s.write(greeting);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port, sockets })));
}

const GARBAGE = `HTTP/1.1 400 Bad Request\r\n\r\n${'\u0000\u00ff'.repeat(300)}\r\nSSH-1.0-not-really\r\n`;

describe('hosts that accept TCP but do not speak SSH', { timeout: 60_000 }, () => {
  const servers: Array<{ server: Server; port: number; sockets: Set<Socket> }> = [];
  let silent: (typeof servers)[number];
  let garbage: (typeof servers)[number];
  const dir = mkdtempSync(join(tmpdir(), 'cq-silent-'));
  beforeAll(async () => {
    silent = await listen(null);
    garbage = await listen(GARBAGE);
    servers.push(silent, garbage);
  });
  afterAll(async () => {
    for (const s of servers) {
      for (const c of s.sockets) c.destroy();
      await new Promise((r) => s.server.close(r));
    }
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
    const e = await connectExpectingError(silent.port);
    expect(e.message).toBe(
      `quiet: cannot connect to 127.0.0.1:${silent.port}: no SSH handshake within 700 ms (ConnectTimeout): the host accepted the TCP connection but did not speak SSH; check the host and port`,
    );
  });

  it('garbage host: a TransportError, printable, then nothing unhandled', async () => {
    const e = await connectExpectingError(garbage.port);
    expect(e.message).toMatch(new RegExp(`^quiet: cannot connect to 127\\.0\\.0\\.1:${garbage.port}: `));
    expect(e.message).not.toMatch(/[\u0000-\u001f]/);
  });

  it('the real CLI: `run` against both ends ERROR [transport] with its run report written, exit 3, no crash', () => {
    const cfg = join(dir, 'ssh_config');
    writeFileSync(
      cfg,
      `Host sa\n  HostName 127.0.0.1\n  Port ${silent.port}\n  ConnectTimeout 1\nHost sb\n  HostName 127.0.0.1\n  Port ${garbage.port}\n  ConnectTimeout 1\n`,
    );
    const out = join(dir, 'reports');
    const r = spawnSync(process.execPath, [BIN, 'run', '--nodes', 'sa,sb', '--ssh-config', cfg, '--protocol', 'quick', '--label', 'silent', '--out', out], {
      encoding: 'utf8',
      timeout: 45_000,
      env: { ...process.env, HOME: dir },
    });
    expect(r.signal).toBeNull();
    expect(r.stderr).not.toMatch(/Unhandled 'error' event|\n\s+at |internal error/);
    expect(r.status).toBe(3);
    expect(r.stdout).toMatch(/^ERROR: .*\n {2}- \[transport\] s[ab]: cannot connect to 127\.0\.0\.1:\d+: /);
    const runDir = join(out, 'silent', readdirSync(join(out, 'silent'))[0]!);
    expect(JSON.parse(readFileSync(join(runDir, 'record.json'), 'utf8')).outcome).toBe('ERROR');
    expect(existsSync(join(runDir, 'run-report.html'))).toBe(true);
  });
});
