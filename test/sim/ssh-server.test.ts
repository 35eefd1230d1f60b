// The ssh2 server in front of a small fake CommandRunner, driven by SshRunner over a real SSH connection.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTickScript, formatTickScriptOutput, parseTickScript, splitTickScriptOutput } from '../../src/transport/tick-script.js';
import { buildStatus, parseStatusReply } from '../../src/transport/remote-process.js';
import type { ServedRunner } from '../../src/sim/ssh-server.js';
import { serveRunnerOverSsh } from '../../src/sim/ssh-server.js';
import type { Gap } from '../../src/transport/ssh-runner.js';
import { SshRunner } from '../../src/transport/ssh-runner.js';
import type { CommandResult, CommandRunner, RemoteProcess, RunOptions, StartOptions } from '../../src/transport/types.js';
import { TransportError } from '../../src/transport/types.js';
import { generateEd25519 } from '../../src/transport/ssh-keys.js';

// A scripted runner: a few fixed commands, recognises batch scripts, native start()/stop() with recorded calls.
class FakeRunner implements CommandRunner {
  readonly node = 'fake-a';
  readonly simulated = true;
  calls: string[] = [];
  started: Array<{ command: string; opts: StartOptions; stops: number[]; finish: (r: Partial<CommandResult>) => void }> = [];
  unreachable = false;

  async run(command: string, opts: RunOptions = {}): Promise<CommandResult> {
    this.calls.push(command);
    if (this.unreachable) throw new TransportError(this.node, 'simulated ssh-drop');
    const res = (stdout: string, stderr = '', exitCode = 0): CommandResult => ({ command, stdout, stderr, exitCode, signal: null, durationMs: 1 });
    const batch = parseTickScript(command);
    if (batch) return res(formatTickScriptOutput(batch.map((b) => ({ id: b.id, ...this.one(b.command) }))));
    if (command === 'wait-for-signal') {
      return new Promise((resolve) => opts.signal?.addEventListener('abort', () => resolve({ ...res(''), exitCode: null, signal: 'SIGKILL' }), { once: true }));
    }
    const o = this.one(command);
    return res(o.stdout, o.stderr, o.exitCode);
  }

  private one(command: string): { stdout: string; stderr: string; exitCode: number } {
    if (command === 'hostname') return { stdout: 'fake-a\n', stderr: '', exitCode: 0 };
    if (command === 'fail') return { stdout: 'partial', stderr: 'fail: no such device\n', exitCode: 3 };
    return { stdout: '', stderr: `sh: ${command.split(' ')[0]}: not found\n`, exitCode: 127 };
  }

  async start(command: string, opts: StartOptions): Promise<RemoteProcess> {
    let finish!: (r: Partial<CommandResult>) => void;
    const done = new Promise<CommandResult>((resolve) => {
      finish = (r) => resolve({ command, stdout: 'row 1\n', stderr: '', exitCode: null, signal: null, durationMs: 5, ...r });
    });
    const entry = { command, opts, stops: [] as number[], finish };
    this.started.push(entry);
    return {
      name: opts.name,
      pid: 4000 + this.started.length,
      done,
      output: async () => ({ stdout: 'row 1\n', stderr: 'warn\n' }),
      stop: async (graceMs = 0) => {
        entry.stops.push(graceMs);
        finish({ signal: 'SIGTERM' });
      },
    };
  }

  openShell(): Promise<never> {
    return Promise.reject(new Error('not used by the server'));
  }
  async close(): Promise<void> {}
}

describe('serveRunnerOverSsh with a fake runner', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cqsrv'));
  const fake = new FakeRunner();
  const clientKey = generateEd25519();
  const otherKey = generateEd25519();
  let served: ServedRunner;
  const runners: SshRunner[] = [];
  const connect = (o: { key?: string; user?: string; gaps?: Gap[] } = {}) => {
    const keyPath = join(dir, `key-${runners.length}`);
    writeFileSync(keyPath, o.key ?? clientKey.private, { mode: 0o600 });
    const r = new SshRunner({
      node: 'fake-a',
      host: '127.0.0.1',
      port: served.port,
      user: o.user ?? 'cablequal',
      configPath: null,
      knownHostsPath: join(dir, 'known_hosts'),
      agentSock: null,
      identityFiles: [keyPath],
      pollMs: 20,
      reconnect: { initialDelayMs: 100, maxDelayMs: 300, maxWaitMs: 10_000 },
      onGap: (g) => o.gaps?.push(g),
    });
    runners.push(r);
    return r;
  };

  beforeAll(async () => {
    served = await serveRunnerOverSsh({ runner: fake, authorizedKeys: `# test key\n${clientKey.public}\n`, user: 'cablequal' });
    writeFileSync(join(dir, 'known_hosts'), `[127.0.0.1]:${served.port} ${served.hostPublicKey}\n`);
  });
  afterAll(async () => {
    for (const r of runners) await r.close();
    await served.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exec: stdout, stderr on the extended channel, exit codes', async () => {
    const r = connect();
    expect(await r.run('hostname')).toMatchObject({ stdout: 'fake-a\n', stderr: '', exitCode: 0 });
    expect(await r.run('fail')).toMatchObject({ stdout: 'partial', stderr: 'fail: no such device\n', exitCode: 3 });
    expect(await r.run('nosuch --x')).toMatchObject({ stderr: 'sh: nosuch: not found\n', exitCode: 127 });
    expect(fake.calls).toEqual(['hostname', 'fail', 'nosuch --x']);
  });

  it('a client timeout sends a signal that aborts the runner call', async () => {
    const r = connect();
    const res = await r.run('wait-for-signal', { timeoutMs: 200 });
    expect(res.timedOut).toBe(true);
  });

  it('persistent shell: framed round trips, batch scripts reach the runner as one command', async () => {
    const sh = await connect().openShell();
    expect(await sh.run('hostname')).toMatchObject({ stdout: 'fake-a\n', stderr: '', exitCode: 0 });
    expect(await sh.run('fail')).toMatchObject({ stdout: 'partial', stderr: 'fail: no such device\n', exitCode: 3 });
    const before = fake.calls.length;
    const script = buildTickScript([
      { id: 'h', command: 'hostname' },
      { id: 'f', command: 'fail' },
    ]);
    const b = await sh.run(script);
    expect(fake.calls.slice(before)).toEqual([script]);
    expect(splitTickScriptOutput(b.stdout)).toEqual([
      { id: 'h', stdout: 'fake-a\n', exitCode: 0 },
      { id: 'f', stdout: 'partial\n', exitCode: 3 },
    ]);
    await sh.close();
  });

  it('persistent shell: a timed-out command closes that shell, the next call opens a fresh one', async () => {
    const sh = await connect().openShell();
    const t = await sh.run('wait-for-signal', { timeoutMs: 200 });
    expect(t).toMatchObject({ timedOut: true, exitCode: null, stdout: '', stderr: '' });
    expect(await sh.run('hostname')).toMatchObject({ stdout: 'fake-a\n', exitCode: 0 });
    await sh.close();
  });

  it('remote-process wrappers map onto the runner native start()/stop()', async () => {
    const r = connect();
    const p = await r.start('ib_write_bw -d rocep1s0f1 --report_gbits', { runDir: '/tmp/cablequal/run-7', name: 'bw-server' });
    const entry = fake.started.at(-1)!;
    expect(entry.command).toBe('ib_write_bw -d rocep1s0f1 --report_gbits');
    expect(entry.opts).toEqual({ runDir: '/tmp/cablequal/run-7', name: 'bw-server' });
    expect(p.pid).toBe(4000 + fake.started.length);
    const st = await r.run(buildStatus({ runDir: '/tmp/cablequal/run-7', name: 'bw-server', runId: 'run-7' }));
    expect(parseStatusReply(st.stdout)).toEqual({ state: 'running', pid: p.pid });
    expect(await p.output()).toEqual({ stdout: 'row 1\n', stderr: 'warn\n' });
    await p.stop(1500);
    expect(entry.stops).toEqual([1500]);
    const done = await p.done;
    expect(done).toMatchObject({ exitCode: null, signal: 'SIGTERM', stdout: 'row 1\n' });
    // a process ending by itself reports its exit code
    const q = await r.start('sleep 1', { runDir: '/tmp/cablequal/run-7', name: 'short' });
    fake.started.at(-1)!.finish({ exitCode: 0 });
    expect((await q.done).exitCode).toBe(0);
  });

  it('publickey auth: an unknown key and a wrong user are refused', async () => {
    await expect(connect({ key: otherKey.private }).run('hostname')).rejects.toThrow(/authentication as cablequal@127.0.0.1:\d+ failed/);
    await expect(connect({ user: 'root' }).run('hostname')).rejects.toThrow(/authentication as root@127.0.0.1/);
  });

  it('the runner going unreachable drops the connection; the client reconnects and reports the gap', async () => {
    const gaps: Gap[] = [];
    const r = connect({ gaps });
    expect((await r.run('hostname')).stdout).toBe('fake-a\n');
    fake.unreachable = true;
    const err = await r.run('hostname').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as Error).message).toMatch(/connection dropped while running `hostname`/);
    setTimeout(() => (fake.unreachable = false), 300);
    await new Promise((res) => setTimeout(res, 400));
    expect((await r.run('hostname')).stdout).toBe('fake-a\n');
    expect(gaps).toHaveLength(1);
    expect(gaps[0]!.node).toBe('fake-a');
    expect(gaps[0]!.toMs - gaps[0]!.fromMs).toBeGreaterThanOrEqual(0);
  });
});
