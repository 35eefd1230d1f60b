import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, utimesSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { acquireLock, buildAcquire, parseAcquireReply } from '../../src/transport/node-lock.js';
import { startWrapped } from '../../src/transport/remote-process.js';
import type { CommandResult, CommandRunner } from '../../src/transport/types.js';
import { TransportError } from '../../src/transport/types.js';

// Minimal runner over the local `sh`; counts commands so "refused before anything runs" can be checked.
function shRunner(): CommandRunner & { count: number } {
  const r = {
    node: 'spark-t',
    simulated: false,
    count: 0,
    run: (command: string) =>
      new Promise<CommandResult>((resolve) => {
        r.count++;
        execFile('sh', ['-c', command], (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
          resolve({ command, stdout, stderr, exitCode: code, signal: null, durationMs: 0 });
        });
      }),
    start: () => Promise.reject(new Error('not used')),
    openShell: () => Promise.reject(new Error('not used')),
    close: async () => undefined,
  };
  return r;
}

const dir = mkdtempSync(join(tmpdir(), 'cqlock'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('per-node lock', { timeout: 60_000 }, () => {
  it('first run takes it with an owner file; a second run is refused naming the first; release frees it', async () => {
    const root = join(dir, 'a');
    const runner = shRunner();
    const lock = await acquireLock(runner, { runId: 'run-1', label: 'cable SN123', root, controllerHost: 'ctl', pid: 42, now: () => Date.UTC(2026, 0, 2) });
    expect(readFileSync(join(root, 'lock', 'owner'), 'utf8')).toBe('run=run-1\nlabel=cable SN123\nhost=ctl\npid=42\nstarted=2026-01-02T00:00:00.000Z\n');
    const err = await acquireLock(runner, { runId: 'run-2', label: 'other', root }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as Error).message).toMatch(
      /^spark-t: node is locked by run run-1 "cable SN123" from ctl pid 42, started 2026-01-02T00:00:00.000Z; last heartbeat \d+ s ago, 0 process\(es\) of that run alive/,
    );
    await lock.heartbeat();
    await lock.release();
    expect(existsSync(join(root, 'lock'))).toBe(false);
    const again = await acquireLock(runner, { runId: 'run-2', label: 'other', root });
    expect(again.owner.run).toBe('run-2');
  });

  it('release by another run never removes the lock', async () => {
    const root = join(dir, 'b');
    const runner = shRunner();
    const mine = await acquireLock(runner, { runId: 'run-a', label: '', root });
    const fake = { ...mine, owner: { ...mine.owner, run: 'run-b' } };
    // a run that is not the owner: heartbeat says lost, lock stays
    const { buildRelease } = await import('../../src/transport/node-lock.js');
    expect((await runner.run(buildRelease(root, fake.owner.run))).stdout).toBe('cq-unlock not-owner\n');
    expect(existsSync(join(root, 'lock', 'owner'))).toBe(true);
  });

  it('stale lock (old heartbeat, no process of its run): named, with how to clear it; --break-lock takes it', async () => {
    const root = join(dir, 'c');
    const runner = shRunner();
    // Processes are found by their run marker machine-wide: a run id no other test (or test run) uses.
    const oldRun = `crashed-${process.pid}`;
    await acquireLock(runner, { runId: oldRun, label: 'crashed', root });
    const old = new Date(Date.now() - 3600_000);
    utimesSync(join(root, 'lock', 'owner'), old, old);
    const err = await acquireLock(runner, { runId: 'new-run', label: 'x', root, staleAfterMs: 600_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    const msg = (err as Error).message;
    expect(msg).toContain('stale lock');
    expect(msg).toContain(`run ${oldRun} "crashed"`);
    expect(msg).toContain('--break-lock');
    expect(msg).toContain(`rm -r ${root}/lock`);
    const taken = await acquireLock(runner, { runId: 'new-run', label: 'x', root, staleAfterMs: 600_000, breakLock: true });
    expect(taken.owner.run).toBe('new-run');
    expect(readFileSync(join(root, 'lock', 'owner'), 'utf8')).toMatch(/^run=new-run\n/);
  });

  it('an old heartbeat is not stale while a process of that run is alive; --break-lock does not break it', async () => {
    const root = join(dir, 'd');
    const runner = shRunner();
    const busyRun = `busy-${process.pid}`; // found by its marker machine-wide: no other test run uses it
    await acquireLock(runner, { runId: busyRun, label: '', root });
    const p = await startWrapped(runner, 'sleep 300', { runDir: join(dir, 'procs', busyRun), name: 'load', pollMs: 200 });
    try {
      const old = new Date(Date.now() - 3600_000);
      utimesSync(join(root, 'lock', 'owner'), old, old);
      const err = await acquireLock(runner, { runId: 'next', label: '', root, staleAfterMs: 1000, breakLock: true }).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(new RegExp(`node is locked by run ${busyRun} .* 3 process\\(es\\) of that run alive`)); // sh wrapper, its subshell, sleep
      expect(readFileSync(join(root, 'lock', 'owner'), 'utf8')).toMatch(new RegExp(`^run=${busyRun}\n`));
    } finally {
      await p.stop(500);
    }
  });

  it('bad run ids and labels are UsageErrors before anything runs', async () => {
    const runner = shRunner();
    for (const runId of ['a;b', 'a$(id)', 'a`id`', 'a b']) {
      await expect(acquireLock(runner, { runId, label: '', root: join(dir, 'e') })).rejects.toThrow(UsageError);
    }
    await expect(acquireLock(runner, { runId: 'ok', label: "it's $(bad)", root: join(dir, 'e') })).rejects.toThrow(UsageError);
    expect(runner.count).toBe(0);
  });

  it('reply parser', () => {
    expect(parseAcquireReply('cq-lock acquired\n')).toEqual({ state: 'acquired' });
    expect(parseAcquireReply('cq-lock held\nrun=r1\nlabel=l\nhost=h\npid=7\nstarted=2026-01-01T00:00:00.000Z\ncq-lock-age 12\ncq-lock-live 2\n')).toEqual({
      state: 'held',
      owner: { run: 'r1', label: 'l', host: 'h', pid: 7, started: '2026-01-01T00:00:00.000Z' },
      ageS: 12,
      liveProcesses: 2,
    });
    expect(parseAcquireReply('permission denied')).toBeNull();
    expect(buildAcquire('/tmp/cablequal', { run: 'r', label: 'l', host: 'h', pid: 1, started: '2026-01-01T00:00:00.000Z' })).toContain(
      'mkdir /tmp/cablequal/lock',
    );
  });
});

describe('parseLockScript (the simulated SSH server keeps the lock in memory)', () => {
  it('recognises acquire, release and heartbeat scripts with their owner fields', async () => {
    const { buildAcquire, buildRelease, buildHeartbeat, parseLockScript } = await import('../../src/transport/node-lock.js');
    const owner = { run: '20261130T034850Z-567aa4', label: 'box 2 cable 3', host: 'ctl', pid: 42, started: '2026-11-30T03:48:50.000Z' };
    expect(parseLockScript(buildAcquire('/tmp/cablequal', owner))).toEqual({ op: 'acquire', root: '/tmp/cablequal', owner });
    expect(parseLockScript(buildRelease('/tmp/cablequal', owner.run))).toEqual({ op: 'release', root: '/tmp/cablequal', run: owner.run });
    expect(parseLockScript(buildHeartbeat('/tmp/cablequal', owner.run))).toEqual({ op: 'heartbeat', root: '/tmp/cablequal', run: owner.run });
    expect(parseLockScript('mkdir -p /tmp/x; rm -rf /')).toBeNull();
  });
});
