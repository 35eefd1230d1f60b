import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import {
  buildFindStale,
  buildReadOutput,
  buildStart,
  buildStatus,
  buildStop,
  cleanupStale,
  findStale,
  parseFindStale,
  parseFindStaleReply,
  parseReadOutput,
  parseStart,
  parseStatus,
  parseStatusReply,
  parseStop,
  parseStopReply,
  startWrapped,
} from '../../src/transport/remote-process.js';
import type { CommandResult, CommandRunner } from '../../src/transport/types.js';

// Minimal runner over the local `sh` (the wrappers only need run()).
function shRunner(): CommandRunner {
  return {
    node: 'local',
    simulated: false,
    run: (command) =>
      new Promise<CommandResult>((resolve) => {
        const t0 = Date.now();
        execFile('sh', ['-c', command], (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
          resolve({ command, stdout, stderr, exitCode: code, signal: null, durationMs: Date.now() - t0 });
        });
      }),
    start: () => Promise.reject(new Error('not used')),
    openShell: () => Promise.reject(new Error('not used')),
    close: async () => undefined,
  };
}

const isAlive = (pid: number) => {
  // alive = exists and is not an unreaped zombie (this container's PID 1 does not reap orphans)
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
};
const groupMembers = (pgid: number): Promise<string> =>
  new Promise((resolve) =>
    execFile('sh', ['-c', `ps -e -o pgid=,stat=,pid= | awk -v g=${pgid} '$1==g && $2 !~ /^Z/ {print $3}'`], (_e, out) => resolve(out.trim())),
  );

// The group's members once at least `n` are there (the shell forks its children a moment after it starts), else as found after 5 s.
async function groupOf(pgid: number, n: number): Promise<string[]> {
  let members: string[] = [];
  for (let i = 0; i < 100 && members.length < n; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 50));
    members = (await groupMembers(pgid)).split('\n').filter(Boolean);
  }
  return members;
}

const root = mkdtempSync(join(tmpdir(), 'cqrp'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('wrapper templates', () => {
  const spec = { runDir: '/tmp/cablequal/run-1', name: 'load-a', runId: 'run-1' };

  it('parse*() recognises exactly what build*() wrote', () => {
    const command = `ib_write_bw -d rocep1s0f1 --report_gbits -D 30 'x y' "$(echo no)"`;
    expect(parseStart(buildStart({ ...spec, command }))).toEqual({ ...spec, command });
    expect(parseStatus(buildStatus(spec))).toEqual(spec);
    expect(parseStop(buildStop({ ...spec, graceMs: 1500 }))).toEqual({ ...spec, graceMs: 1500 });
    expect(parseReadOutput(buildReadOutput(spec))).toEqual({ runDir: spec.runDir, name: spec.name });
    expect(parseFindStale(buildFindStale('/tmp/cablequal'))).toEqual({ root: '/tmp/cablequal' });
  });

  it('the start script carries setsid, the env marker and the pid/out/err/rc files', () => {
    const s = buildStart({ ...spec, command: 'sleep 300' });
    expect(s).toContain('CABLEQUAL_RUN=run-1 setsid sh -c');
    expect(s).toContain('> load-a.out 2> load-a.err');
    expect(s).toContain('echo $! > load-a.pid');
    expect(s).toContain('/tmp/cablequal/run-1/load-a.rc');
  });

  it('parsers refuse other text', () => {
    expect(parseStart('echo hi')).toBeNull();
    expect(parseStatus(buildStop({ ...spec, graceMs: 0 }))).toBeNull();
    // a tampered start line (extra command appended) is not recognised
    expect(parseStart(`${buildStart({ ...spec, command: 'true' })}; rm -rf /`)).toBeNull();
  });

  it('injection attempts are UsageErrors before anything runs', () => {
    for (const name of ['a;b', 'a$(id)', 'a`id`', 'a b', '../x', 'A']) {
      expect(() => buildStart({ ...spec, name, command: 'true' })).toThrow(UsageError);
    }
    for (const runId of ['r;1', 'r$(id)', 'r`id`', 'r 1', '..']) {
      expect(() => buildStatus({ ...spec, runId })).toThrow(UsageError);
    }
    expect(() => buildStop({ ...spec, runDir: '/tmp/x;rm', graceMs: 0 })).toThrow(UsageError);
    expect(() => buildStart({ ...spec, command: 'a\nb' })).toThrow(UsageError);
  });

  it('replies', () => {
    expect(parseStatusReply('cq-status running 4242\n')).toEqual({ state: 'running', pid: 4242 });
    expect(parseStatusReply('cq-status exited 4242 3\n')).toEqual({ state: 'exited', pid: 4242, exitCode: 3 });
    expect(parseStatusReply('cq-status gone 4242\n')).toEqual({ state: 'gone', pid: 4242 });
    expect(parseStatusReply('cq-status missing\n')).toEqual({ state: 'missing' });
    expect(parseStatusReply('garbage')).toBeNull();
    expect(parseStopReply('cq-stop killed 12\n')).toBe('killed');
    expect(parseFindStaleReply('cq-stale r1 load 12\nnoise\n', '/x')).toEqual([{ runId: 'r1', name: 'load', pid: 12, runDir: '/x/r1' }]);
  });
});

describe('wrappers on a real shell', () => {
  const runner = shRunner();

  it('start -> stop: TERM reaches the whole process group, done reports the signal', async () => {
    const runDir = join(root, 'run-a');
    const p = await startWrapped(runner, 'sleep 300 & sleep 301; wait', { runDir, name: 'load', pollMs: 50 });
    expect(p.pid).toBeGreaterThan(1);
    expect(readFileSync(join(runDir, 'load.pid'), 'utf8').trim()).toBe(String(p.pid));
    const env = readFileSync(`/proc/${p.pid}/environ`, 'utf8').split('\0');
    expect(env).toContain('CABLEQUAL_RUN=run-a');
    expect((await groupOf(p.pid!, 3)).length).toBeGreaterThanOrEqual(3); // sh + two sleeps
    await p.stop(2000);
    await p.stop(2000); // safe twice
    const r = await p.done;
    expect(r.exitCode).toBeNull();
    expect(r.signal).toBe('SIGTERM');
    expect(await groupMembers(p.pid!)).toBe('');
    expect(isAlive(p.pid!)).toBe(false);
  });

  it('a command that ends on its own: exit code, stdout and stderr from the files', async () => {
    const p = await startWrapped(runner, `echo out-line; echo "err line" >&2; exit 3`, { runDir: join(root, 'run-b'), name: 'short', pollMs: 20 });
    const r = await p.done;
    expect(r).toMatchObject({ exitCode: 3, signal: null, stdout: 'out-line\n', stderr: 'err line\n' });
    expect(readFileSync(join(root, 'run-b', 'short.rc'), 'utf8').trim()).toBe('3');
  });

  it('stale processes are found by marker, a reused pid is never touched', async () => {
    const old = await startWrapped(runner, 'sleep 300', { runDir: join(root, 'old-run'), name: 'gen', pollMs: 50 });
    // a pid file pointing at a live process without the marker (this test process): must be ignored
    mkdirSync(join(root, 'reused'), { recursive: true });
    writeFileSync(join(root, 'reused', 'gen.pid'), `${process.pid}\n`);
    const found = await findStale(runner, { root, exceptRunId: 'new-run' });
    expect(found).toEqual([{ runId: 'old-run', name: 'gen', pid: old.pid, runDir: `${root}/old-run` }]);
    const cleaned = await cleanupStale(runner, { root, exceptRunId: 'new-run', graceMs: 1000 });
    expect(cleaned.map((c) => c.outcome)).toEqual(['terminated']);
    expect(isAlive(old.pid!)).toBe(false);
    expect(isAlive(process.pid)).toBe(true);
    expect(await findStale(runner, { root })).toEqual([]);
    expect((await old.done).signal).toBe('SIGTERM');
    expect(existsSync(join(root, 'old-run', 'gen.rc'))).toBe(false);
  });

  it('KILL after the grace period when TERM is ignored', async () => {
    const p = await startWrapped(runner, `trap '' TERM; sleep 300 & trap '' TERM; wait`, { runDir: join(root, 'run-c'), name: 'stubborn', pollMs: 50 });
    await new Promise((r) => setTimeout(r, 100));
    const reply = await runner.run(buildStop({ runDir: join(root, 'run-c'), name: 'stubborn', runId: 'run-c', graceMs: 300 }));
    expect(parseStopReply(reply.stdout)).toBe('killed');
    expect(await groupMembers(p.pid!)).toBe('');
  });
});
