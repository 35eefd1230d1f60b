// SshRunner against a real OpenSSH sshd started by the fixture (temp dir, loopback, random port).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { hashHost } from '../../src/transport/known-hosts.js';
import { acquireLock } from '../../src/transport/node-lock.js';
import { cleanupStale } from '../../src/transport/remote-process.js';
import { buildTickScript, splitTickScriptOutput } from '../../src/transport/tick-script.js';
import type { Gap, SshRunnerOptions } from '../../src/transport/ssh-runner.js';
import { SshRunner } from '../../src/transport/ssh-runner.js';
import { TransportError } from '../../src/transport/types.js';
import type { Sshd } from '../helpers/sshd.js';
import { freePort, sshdAvailable, sshdRunner, startSshd } from '../helpers/sshd.js';
import { serveRunnerOverSsh } from '../../src/sim/ssh-server.js';
import { missingProgram } from '../helpers/requires.js';

// Alive = exists and is not an unreaped zombie (this container's PID 1 does not reap orphans, so a killed
// process can linger as a zombie that `kill -0` still reports).
const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

describe.skipIf(!sshdAvailable)('SshRunner against OpenSSH sshd', { timeout: 120_000 }, () => {
  let sshd: Sshd;
  let kh: string;
  const runners: SshRunner[] = [];
  const make = (o: Partial<SshRunnerOptions> = {}) => {
    const r = sshdRunner(sshd, { homeDir: sshd.dir, knownHostsPath: kh, ...o });
    runners.push(r);
    return r;
  };

  beforeAll(async () => {
    sshd = await startSshd();
    kh = join(sshd.dir, 'known_hosts');
    writeFileSync(kh, `${sshd.knownHostsLine}\n`);
  });
  afterEach(async () => {
    for (const r of runners.splice(0)) await r.close();
  });
  afterAll(async () => {
    await sshd?.stop();
  });

  it('run: stdout, stderr, exit code, signal', async () => {
    const r = make();
    const a = await r.run(`echo hello; echo oops >&2; exit 7`);
    expect(a).toMatchObject({ stdout: 'hello\n', stderr: 'oops\n', exitCode: 7, signal: null });
    const b = await r.run('kill -TERM $$');
    expect(b).toMatchObject({ exitCode: null, signal: 'SIGTERM' });
    const c = await r.run('cat', { stdin: 'fed via stdin' });
    expect(c.stdout).toBe('fed via stdin');
  });

  it('run: timeout kills the channel and marks timedOut', async () => {
    const r = make();
    const res = await r.run('sleep 30', { timeoutMs: 300 });
    expect(res.timedOut).toBe(true);
    expect(res.exitCode).toBeNull();
    // the connection is still usable
    expect((await r.run('echo after')).stdout).toBe('after\n');
  });

  it('unknown host is refused and known_hosts left alone; accept-new appends the key', async () => {
    const empty = join(sshd.dir, 'kh-empty');
    writeFileSync(empty, '');
    const refused = make({ knownHostsPath: empty });
    const err = await refused.run('true').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as Error).message).toContain(`host key verification failed: 127.0.0.1:${sshd.port} (ssh-ed25519 SHA256:`);
    expect((err as Error).message).toContain(`is not in ${empty}`);
    expect(readFileSync(empty, 'utf8')).toBe('');

    const fresh = join(sshd.dir, 'kh-new');
    const accepting = make({ knownHostsPath: fresh, acceptNewHostKeys: true });
    expect((await accepting.run('echo in')).stdout).toBe('in\n');
    expect(readFileSync(fresh, 'utf8')).toBe(`${sshd.knownHostsLine}\n`);
    // and now a strict runner trusts it
    expect((await make({ knownHostsPath: fresh }).run('echo again')).stdout).toBe('again\n');
  });

  it('changed host key is refused with the line and the ssh-keygen -R command', async () => {
    const bad = join(sshd.dir, 'kh-bad');
    const other = readFileSync(`${sshd.clientKey}.pub`, 'utf8').split(' ').slice(0, 2).join(' '); // a different ed25519 key
    writeFileSync(bad, `# first line\n[127.0.0.1]:${sshd.port} ${other}\n`);
    const err = await make({ knownHostsPath: bad, acceptNewHostKeys: true })
      .run('true')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    const msg = (err as Error).message;
    expect(msg).toContain('REMOTE HOST IDENTIFICATION HAS CHANGED');
    expect(msg).toContain(`${bad}:2`);
    expect(msg).toContain(`ssh-keygen -R '[127.0.0.1]:${sshd.port}' -f ${bad}`);
    expect(readFileSync(bad, 'utf8').split('\n').length).toBe(3); // accept-new never overwrites a changed key
  });

  it('@revoked key is refused', async () => {
    const rev = join(sshd.dir, 'kh-rev');
    writeFileSync(rev, `@revoked * ${sshd.hostPublicKey}\n${sshd.knownHostsLine}\n`);
    await expect(make({ knownHostsPath: rev }).run('true')).rejects.toThrow(/marked @revoked in .*kh-rev:1/);
  });

  it('hashed known_hosts entry is accepted', async () => {
    const hashed = join(sshd.dir, 'kh-hashed');
    writeFileSync(hashed, `${hashHost(`[127.0.0.1]:${sshd.port}`)} ${sshd.hostPublicKey}\n`);
    expect((await make({ knownHostsPath: hashed }).run('echo hashed-ok')).stdout).toBe('hashed-ok\n');
  });

  it('ssh config alias: HostName, Port, User, IdentityFile with tokens; wrong key reports what was tried', async () => {
    mkdirSync(join(sshd.dir, '.ssh'), { recursive: true });
    const cfg = join(sshd.dir, '.ssh', 'config');
    writeFileSync(
      cfg,
      [
        'Host lab-node',
        '  HostName 127.0.0.1',
        `  Port ${sshd.port}`,
        `  User ${sshd.user}`,
        '  IdentityFile %d/client_ed25519',
        '  ServerAliveInterval 5',
        'Host lab-wrongkey',
        '  HostName 127.0.0.1',
        `  Port ${sshd.port}`,
        '  IdentityFile %d/host_ed25519',
      ].join('\n'),
    );
    const base = { homeDir: sshd.dir, configPath: cfg, knownHostsPath: kh, agentSock: null };
    const r = new SshRunner({ node: 'lab-node', ...base });
    runners.push(r);
    expect(r.resolved).toMatchObject({ hostName: '127.0.0.1', port: sshd.port, identityFiles: [`${sshd.dir}/client_ed25519`], serverAliveIntervalS: 5 });
    expect((await r.run('echo via-config')).stdout).toBe('via-config\n');
    const w = new SshRunner({ node: 'lab-wrongkey', ...base, localUser: sshd.user });
    runners.push(w);
    await expect(w.run('true')).rejects.toThrow(
      new RegExp(`authentication as ${sshd.user}@127.0.0.1:${sshd.port} failed \\(tried ${sshd.dir}/host_ed25519\\)`),
    );
  });

  it.skipIf(missingProgram('/usr/bin/ssh-agent', 'the ssh-agent authentication test', 'openssh-client'))(
    'authenticates through ssh-agent (SSH_AUTH_SOCK) with no identity file',
    async () => {
      const sock = join(sshd.dir, 'agent.sock');
      const agent = spawn('/usr/bin/ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
      try {
        for (let i = 0; i < 100 && !existsSync(sock); i++) await new Promise((res) => setTimeout(res, 20));
        execFileSync('/usr/bin/ssh-add', ['-q', sshd.clientKey], { env: { ...process.env, SSH_AUTH_SOCK: sock } });
        const r = make({ agentSock: sock, identityFiles: [] });
        expect((await r.run('echo via-agent')).stdout).toBe('via-agent\n');
        const none = make({ agentSock: null, identityFiles: [] });
        await expect(none.run('true')).rejects.toThrow(/failed \(tried no identity files\)/);
      } finally {
        agent.kill('SIGTERM');
      }
    },
  );

  it('openShell: one shell, framed stdout/stderr/exit code per command, stdin cannot eat the next command', async () => {
    const sh = await make().openShell();
    expect(await sh.run('echo one; echo two >&2')).toMatchObject({ stdout: 'one\n', stderr: 'two\n', exitCode: 0 });
    expect(await sh.run('printf no-newline; false')).toMatchObject({ stdout: 'no-newline', stderr: '', exitCode: 1 });
    expect(await sh.run('cat')).toMatchObject({ stdout: '', exitCode: 0 });
    await sh.run('X=kept');
    expect((await sh.run('echo $X $$')).stdout).toMatch(/^kept \d+\n$/); // same shell process
    const pid1 = (await sh.run('echo $$')).stdout;
    expect((await sh.run('echo $$')).stdout).toBe(pid1);
    const batch = await sh.run(
      buildTickScript([
        { id: 'a', command: 'echo A' },
        { id: 'b', command: 'echo B >&2; (exit 3)' },
      ]),
    );
    expect(splitTickScriptOutput(batch.stdout)).toEqual([
      { id: 'a', stdout: 'A\n', exitCode: 0 },
      { id: 'b', stdout: 'B\n', exitCode: 3 },
    ]);
    await expect(sh.run('echo a\necho b')).rejects.toThrow(UsageError);
    await sh.close();
  });

  it('start(): sleep 300 in its own process group; stop() leaves no live process', async () => {
    const r = make({ pollMs: 500 });
    const runDir = `${sshd.dir}/runs/run-ssh-1`;
    const p = await r.start('sleep 300', { runDir, name: 'sleeper' });
    expect(p.pid).toBeGreaterThan(1);
    const [pgidLine, ...memberLines] = (await r.run(`ps -o pgid= -p ${p.pid}; pgrep -g ${p.pid}`)).stdout.trim().split('\n');
    const pgid = Number(pgidLine);
    expect(pgid).toBe(p.pid);
    expect(readFileSync(`/proc/${p.pid}/environ`, 'utf8').split('\0')).toContain('CABLEQUAL_RUN=run-ssh-1');
    const members = memberLines.map(Number);
    expect(members.length).toBe(3); // sh wrapper, its ( ) subshell, sleep
    await p.stop(1000);
    const done = await p.done;
    expect(done.signal).toBe('SIGTERM');
    for (const pid of members) expect(isAlive(pid)).toBe(false);
    // kill -0 on the group from the node: only zombies (if any) remain, none running
    const left = await r.run(`ps -e -o pgid=,stat= | awk '$1==${pgid} && $2 !~ /^Z/' | wc -l`);
    expect(left.stdout.trim()).toBe('0');
  });

  it('injection in a process name is refused before anything runs', async () => {
    const r = make();
    const runDir = `${sshd.dir}/runs/run-inject`;
    for (const name of ['x;touch pwned', 'x$(id)', 'x`id`', 'x y']) {
      await expect(r.start('true', { runDir, name })).rejects.toThrow(UsageError);
    }
    await expect(r.start('true', { runDir: `${sshd.dir}/runs/r;id`, name: 'ok' })).rejects.toThrow(UsageError);
    expect(existsSync(runDir)).toBe(false);
  });

  it('ProxyJump: through sshd (forwardOut) to an ssh2 server behind it', async () => {
    const behindRunner = {
      node: 'behind',
      simulated: true,
      run: async (command: string) => ({ command, stdout: `behind answered ${command}\n`, stderr: '', exitCode: 0, signal: null, durationMs: 0 }),
      start: () => Promise.reject(new Error('unused')),
      openShell: () => Promise.reject(new Error('unused')),
      close: async () => undefined,
    };
    const behind = await serveRunnerOverSsh({ runner: behindRunner, authorizedKeys: readFileSync(`${sshd.clientKey}.pub`, 'utf8') });
    try {
      const khj = join(sshd.dir, 'kh-jump');
      writeFileSync(khj, `${sshd.knownHostsLine}\n[127.0.0.1]:${behind.port} ${behind.hostPublicKey}\n`);
      const cfg = join(sshd.dir, 'config-jump');
      const closed = await freePort();
      writeFileSync(
        cfg,
        [
          'Host jumpbox',
          '  HostName 127.0.0.1',
          `  Port ${sshd.port}`,
          `  User ${sshd.user}`,
          'Host deadjump',
          '  HostName 127.0.0.1',
          `  Port ${closed}`,
          'Host behind',
          '  ProxyJump jumpbox',
          'Host behind-dead',
          '  ProxyJump deadjump',
          'Host behind*',
          '  HostName 127.0.0.1',
          `  Port ${behind.port}`,
          '  User cablequal',
          'Host *',
          `  IdentityFile ${sshd.clientKey}`,
        ].join('\n'),
      );
      const base = { configPath: cfg, homeDir: sshd.dir, knownHostsPath: khj, agentSock: null };
      const r = new SshRunner({ node: 'behind', ...base });
      runners.push(r);
      expect(r.resolved.proxyJump).toEqual(['jumpbox']);
      expect((await r.run('hostname')).stdout).toBe('behind answered hostname\n');
      // the same target with a dead jump host fails at the jump: the hop is really used
      const d = new SshRunner({ node: 'behind-dead', ...base });
      runners.push(d);
      await expect(d.run('hostname')).rejects.toThrow(`cannot connect to 127.0.0.1:${closed}`);
    } finally {
      await behind.close();
    }
  });

  it('over SSH: lock contention between two controllers, and stale processes of an old run cleaned up', async () => {
    const root = `${sshd.dir}/cq`;
    const a = make({ pollMs: 500 });
    const b = make();
    const lock = await acquireLock(a, { runId: 'run-old', label: 'first', root, controllerHost: 'ctl-a' });
    await expect(acquireLock(b, { runId: 'run-new', label: 'second', root })).rejects.toThrow(/node is locked by run run-old "first" from ctl-a/);
    const p = await a.start('sleep 300', { runDir: `${root}/run-old`, name: 'gen' });
    await lock.release();
    const cleaned = await cleanupStale(b, { root, exceptRunId: 'run-new', graceMs: 1000 });
    expect(cleaned).toEqual([{ runId: 'run-old', name: 'gen', pid: p.pid, runDir: `${root}/run-old`, outcome: 'terminated' }]);
    expect(isAlive(p.pid!)).toBe(false);
  });
});

describe.skipIf(!sshdAvailable)('SshRunner when the node stays away', { timeout: 120_000 }, () => {
  it('connection dropped server-side: reconnects and reports the gap', async () => {
    const sshd = await startSshd(); // its own server: dropping sessions must not disturb other tests
    const gaps: Gap[] = [];
    const r = sshdRunner(sshd, {
      reconnect: { initialDelayMs: 50, maxDelayMs: 400, maxWaitMs: 30_000 },
      onGap: (g) => gaps.push(g),
      keepaliveIntervalMs: 1000,
    });
    try {
      expect((await r.run('echo before')).stdout).toBe('before\n');
      sshd.dropSessions();
      await new Promise((res) => setTimeout(res, 150));
      expect((await r.run('echo after')).stdout).toBe('after\n');
      expect(gaps).toHaveLength(1);
      expect(gaps[0]!.node).toBe('test-node');
      expect(gaps[0]!.toMs).toBeGreaterThanOrEqual(gaps[0]!.fromMs);
      expect(typeof gaps[0]!.reason).toBe('string');
    } finally {
      await r.close();
      await sshd.stop();
    }
  });

  it('a run during the outage waits up to the bound, then TransportError', async () => {
    const sshd = await startSshd();
    const gaps: Gap[] = [];
    const r = sshdRunner(sshd, {
      node: 'gone-node',
      reconnect: { initialDelayMs: 50, maxDelayMs: 100, maxWaitMs: 500 },
      onGap: (g) => gaps.push(g),
    });
    try {
      expect((await r.run('echo up')).stdout).toBe('up\n');
      await sshd.stop(); // listener and sessions gone
      await new Promise((res) => setTimeout(res, 100));
      const err = await r.run('echo never').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransportError);
      expect((err as Error).message).toMatch(/^gone-node: connection lost at .* not back after 500 ms/);
      expect(gaps).toEqual([]);
    } finally {
      await r.close();
    }
  });
});
