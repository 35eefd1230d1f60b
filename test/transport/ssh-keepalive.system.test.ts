// A silent drop: the TCP connection stays open but the node stops answering (hung node, cable pulled on a switch).
// No 'close' ever arrives, so only the keepalives can notice. The server side of the connection is frozen with
// SIGSTOP on a private OpenSSH sshd; the runner must fail what is pending and reconnect, never hang.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Gap, SshRunner } from '../../src/transport/ssh-runner.js';
import { TransportError } from '../../src/transport/types.js';
import type { Sshd } from '../helpers/sshd.js';
import { descendants, sshdAvailable, sshdRunner, startSshd } from '../helpers/sshd.js';

const INTERVAL_MS = 200;
const COUNT_MAX = 3;
// ssh2 gives up on the (count+1)-th unanswered interval; the slack covers a loaded CI box, and is still far below
// "forever" (without keepalives the pending call would wait until the test times out).
const DETECT_BOUND_MS = INTERVAL_MS * (COUNT_MAX + 1) + 3000;
// How the runner explains a keepalive timeout to the operator.
const CAUSE = ` (the node stopped answering: ${COUNT_MAX} keepalives ${INTERVAL_MS} ms apart went unanswered (ServerAliveInterval, ServerAliveCountMax))`;

const signalAll = (pids: number[], sig: NodeJS.Signals) => {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
};

const commOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
};

async function waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(cond()).toBe(true);
}

// Settles with the error (or the value) and how long it took; a call still pending at twice the bound is reported
// as a hang right away instead of running into the test timeout.
async function timed<T>(p: Promise<T>): Promise<{ ms: number; error: unknown; value?: T }> {
  const t0 = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${2 * DETECT_BOUND_MS} ms: the silent drop was not detected`)), 2 * DETECT_BOUND_MS);
  });
  try {
    const value = await Promise.race([p, hang]);
    return { ms: Date.now() - t0, error: null, value };
  } catch (error) {
    return { ms: Date.now() - t0, error };
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(!sshdAvailable)('SshRunner on a silent drop (server frozen with SIGSTOP)', { timeout: 30_000 }, () => {
  let sshd: Sshd;
  let listenerPid: number;
  let runner: SshRunner;
  let gaps: Gap[];
  let frozen: number[];

  // Stop every process under this test's own sshd: that is the runner's one connection (and its shells).
  const freeze = () => {
    frozen = descendants(listenerPid);
    expect(frozen.length).toBeGreaterThan(0);
    signalAll(frozen, 'SIGSTOP');
  };
  const thaw = () => {
    signalAll(frozen, 'SIGCONT');
    signalAll(frozen, 'SIGKILL');
    frozen = [];
  };
  // The sshd session process serving the command (the parent of its shell): changes with the connection.
  const sessionPid = async () => Number((await runner.run('echo $PPID')).stdout.trim());

  beforeEach(async () => {
    sshd = await startSshd(); // its own server: freezing its sessions must not disturb other tests
    listenerPid = Number(readFileSync(join(sshd.dir, 'sshd.pid'), 'utf8').trim());
    gaps = [];
    frozen = [];
    runner = sshdRunner(sshd, {
      node: 'frozen-node',
      keepaliveIntervalMs: INTERVAL_MS,
      keepaliveCountMax: COUNT_MAX,
      reconnect: { initialDelayMs: 50, maxDelayMs: 400, maxWaitMs: 10_000 },
      onGap: (g) => gaps.push(g),
    });
  });
  afterEach(async () => {
    thaw(); // never leave a stopped process behind, whatever the test did
    await runner?.close();
    await sshd?.stop();
  });

  it('run: a command in flight and one started after the freeze fail with TransportError within the keepalive bound, then the runner reconnects and reports the gap', async () => {
    const before = await sessionPid();
    const inFlight = timed(runner.run('sleep 30'));
    await waitFor(() => descendants(listenerPid).some((pid) => commOf(pid) === 'sleep'));
    freeze();
    expect(frozen).toContain(before);
    const frozenAt = Date.now();
    const started = await timed(runner.run('echo after-freeze'));
    expect(started.error).toBeInstanceOf(TransportError);
    expect((started.error as Error).message).toBe(`frozen-node: cannot open exec channel: No response from server${CAUSE}`);
    expect(started.ms).toBeLessThan(DETECT_BOUND_MS);
    const running = await inFlight;
    expect(running.error).toBeInstanceOf(TransportError);
    expect((running.error as Error).message).toBe(`frozen-node: connection dropped while running \`sleep 30\`${CAUSE}`);
    expect(Date.now() - frozenAt).toBeLessThan(DETECT_BOUND_MS);

    // Reconnected on a fresh connection while the old session is still frozen (a new session process).
    const after = await sessionPid();
    expect(after).not.toBe(before);
    expect(frozen).not.toContain(after);
    expect(gaps).toHaveLength(1);
    expect(gaps[0]).toMatchObject({ node: 'frozen-node', reason: 'Keepalive timeout' });
    expect(gaps[0]!.fromMs).toBeGreaterThanOrEqual(frozenAt);
    expect(gaps[0]!.toMs).toBeGreaterThanOrEqual(gaps[0]!.fromMs);

    // Killing the frozen session leaves the new connection alone.
    thaw();
    expect((await runner.run('echo still-up')).stdout).toBe('still-up\n');
    expect(gaps).toHaveLength(1);
  });

  it('openShell: a round trip pending when the keepalive fails rejects with TransportError; the next one opens a new shell', async () => {
    const sh = await runner.openShell();
    const shellPid = (await sh.run('echo $$')).stdout;
    freeze();
    expect(frozen).toContain(Number(shellPid.trim()));
    const r = await timed(sh.run('echo pending'));
    expect(r.error).toBeInstanceOf(TransportError);
    expect((r.error as Error).message).toBe('frozen-node: shell channel closed while running `echo pending`');
    expect(r.ms).toBeLessThan(DETECT_BOUND_MS);

    const again = await sh.run('echo $$');
    expect(again.exitCode).toBe(0);
    expect(again.stdout).not.toBe(shellPid);
    expect(frozen).not.toContain(Number(again.stdout.trim()));
    expect(gaps).toHaveLength(1);
    expect(gaps[0]!.reason).toBe('Keepalive timeout');
    await sh.close();
  });
});
