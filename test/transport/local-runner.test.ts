import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalRunner, processGroupMembers } from '../../src/transport/local-runner.js';
import { cleanupStale, findStale } from '../../src/transport/remote-process.js';
import { TransportError } from '../../src/transport/types.js';

let dir: string;
let runner: LocalRunner;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cq-local-'));
  runner = new LocalRunner({ node: 'spark-a' });
});

afterEach(async () => {
  await runner.close();
  await rm(dir, { recursive: true, force: true });
});

const until = async (ok: () => Promise<boolean>) => {
  for (let i = 0; i < 200; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition not reached');
};

// A process that exists and is not a zombie (nobody may reap orphans in a container).
const isLive = async (pid: number) => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat !== null && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
};

describe('LocalRunner.run', () => {
  it('returns stdout, stderr and the exit code, output kept byte for byte', async () => {
    const r = await runner.run("printf 'a\\nb'; echo oops >&2; exit 3");
    expect(r).toMatchObject({ stdout: 'a\nb', stderr: 'oops\n', exitCode: 3, signal: null });
    expect(r.timedOut).toBeUndefined();
    expect(runner.node).toBe('spark-a');
    expect(runner.simulated).toBe(false);
  });

  it('feeds stdin', async () => {
    const r = await runner.run('tr a-z A-Z', { stdin: 'ethtool\n' });
    expect(r.stdout).toBe('ETHTOOL\n');
    expect(r.exitCode).toBe(0);
  });

  it('a timeout kills the whole group, grandchildren included, and says so', async () => {
    // The background sleep holds stdout open: without a group kill the call would hang for 30 s.
    const r = await runner.run(`sleep 30 & echo $! > ${dir}/gc; echo started; wait`, { timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.signal).toBe('SIGKILL');
    expect(r.stdout).toBe('started\n');
    const gc = Number(await readFile(join(dir, 'gc'), 'utf8'));
    await until(async () => !(await isLive(gc)));
  });

  it('an abort signal kills the command', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const r = await runner.run('sleep 30', { signal: ac.signal });
    expect(r.signal).toBe('SIGKILL');
    expect(r.timedOut).toBeUndefined();
  });
});

describe('LocalRunner.start', () => {
  it('writes pid and output files and resolves done with the exit status', async () => {
    const p = await runner.start('echo out; echo err >&2; echo $CABLEQUAL_RUN; exit 4', { runDir: dir, name: 'gen-1' });
    const res = await p.done;
    expect(res).toMatchObject({ stdout: `out\n${dir.split('/').pop()}\n`, stderr: 'err\n', exitCode: 4, signal: null });
    expect(Number(await readFile(join(dir, 'gen-1.pid'), 'utf8'))).toBe(p.pid);
    expect(await readFile(join(dir, 'gen-1.rc'), 'utf8')).toBe('4\n');
    expect(await p.output()).toEqual({ stdout: res.stdout, stderr: 'err\n' });
  });

  it('stop() terminates the whole process group (a child that spawns grandchildren) and is idempotent', async () => {
    const p = await runner.start('sh -c "sleep 300 & sleep 300 & wait" & sleep 300 & echo up; wait', {
      runDir: dir,
      name: 'load',
    });
    await until(async () => (await processGroupMembers(p.pid!)).length >= 4);
    expect((await p.output()).stdout).toBe('up\n');
    await Promise.all([p.stop(2000), p.stop(2000)]);
    await p.stop();
    expect(await processGroupMembers(p.pid!)).toEqual([]);
    const res = await p.done;
    expect(res.signal).toBe('SIGTERM');
    expect(await readFile(join(dir, 'load.rc'), 'utf8')).toBe('143\n'); // 128 + SIGTERM, like the shell's $?
    expect(res.exitCode).toBeNull();
  });

  it('stop() after the leader exited still kills what it left in the group, then is a no-op', async () => {
    const p = await runner.start('sleep 300 >/dev/null 2>&1 & exit 0', { runDir: dir, name: 'leaver' });
    expect((await p.done).exitCode).toBe(0);
    expect((await processGroupMembers(p.pid!)).length).toBe(1); // the orphaned sleep
    await p.stop(1000);
    expect(await processGroupMembers(p.pid!)).toEqual([]);
    await p.stop(1000);
  });

  it('escalates to SIGKILL when TERM is ignored', async () => {
    const p = await runner.start("trap '' TERM; echo ready; while :; do sleep 1; done", { runDir: dir, name: 'stubborn' });
    await until(async () => (await p.output()).stdout === 'ready\n');
    await p.stop(200);
    expect(await processGroupMembers(p.pid!)).toEqual([]);
    expect((await p.done).signal).toBe('SIGKILL');
  });

  it('leaves the same pid file and CABLEQUAL_RUN marker as the remote wrapper, so stale cleanup finds it', async () => {
    const p = await runner.start('sleep 300', { runDir: `${dir}/run-7`, name: 'load-a' });
    await until(async () => (await processGroupMembers(p.pid!)).length >= 1);
    expect(await findStale(runner, { root: dir })).toEqual([{ runId: 'run-7', name: 'load-a', pid: p.pid, runDir: `${dir}/run-7` }]);
    expect(await findStale(runner, { root: dir, exceptRunId: 'run-7' })).toEqual([]);
    const cleaned = await cleanupStale(runner, { root: dir, graceMs: 500 });
    expect(cleaned.map((c) => c.outcome)).toEqual(['terminated']);
    expect((await p.done).signal).toBe('SIGTERM');
  });

  it('refuses names and directories that could carry shell syntax', async () => {
    await expect(runner.start('true', { runDir: dir, name: 'a;rm' })).rejects.toThrow(/refusing process name/);
    await expect(runner.start('true', { runDir: `${dir}/$(x)`, name: 'a' })).rejects.toThrow(/refusing path/);
  });
});

describe('LocalRunner.openShell', () => {
  it('keeps shell state between round trips (cd, variables) and frames stdout, stderr and exit codes', async () => {
    const sh = await runner.openShell();
    expect((await sh.run(`cd ${dir}; X=42`)).exitCode).toBe(0);
    expect((await sh.run('pwd')).stdout).toBe(`${dir}\n`);
    expect((await sh.run('printf %s "$X"')).stdout).toBe('42');
    const r = await sh.run("echo to-out; echo to-err >&2; printf 'no newline'; false");
    expect(r).toMatchObject({ stdout: 'to-out\nno newline', stderr: 'to-err\n', exitCode: 1 });
    expect((await sh.run('exit_code_7() { return 7; }; exit_code_7')).exitCode).toBe(7);
    await sh.close();
  });

  it('survives a syntax error and output that looks like a marker', async () => {
    const sh = await runner.openShell();
    const bad = await sh.run('if then');
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/[Ss]yntax error/);
    expect((await sh.run("echo '@@cq-end-0000 0'; echo after")).stdout).toBe('@@cq-end-0000 0\nafter\n');
    expect((await sh.run('cat', { stdin: 'line1\nline2' })).stdout).toBe('line1\nline2\n');
    // The command's stdin is /dev/null, never the script stream.
    expect((await sh.run('cat')).stdout).toBe('');
    await sh.close();
  });

  it('runs concurrent calls one after the other', async () => {
    const sh = await runner.openShell();
    const rs = await Promise.all([1, 2, 3, 4].map((i) => sh.run(`echo ${i}`)));
    expect(rs.map((r) => r.stdout)).toEqual(['1\n', '2\n', '3\n', '4\n']);
    await sh.close();
  });

  it('a timeout kills the session; later calls are a TransportError', async () => {
    const sh = await runner.openShell();
    const r = await sh.run('echo partial; sleep 30', { timeoutMs: 200 });
    expect(r).toMatchObject({ timedOut: true, exitCode: null, stdout: 'partial\n' });
    await expect(sh.run('echo again')).rejects.toBeInstanceOf(TransportError);
    await sh.close();
  });

  it('`exit` in a command ends the session with a TransportError', async () => {
    const sh = await runner.openShell();
    await expect(sh.run('exit 5')).rejects.toThrow(/spark-a: shell session closed/);
    await sh.close();
  });
});

describe('LocalRunner.close', () => {
  it('kills shells, their background leftovers and started processes', async () => {
    const sh = await runner.openShell();
    const shellPid = (sh as unknown as { pid: number }).pid;
    await sh.run('sleep 300 >/dev/null 2>&1 &');
    const p = await runner.start('sleep 300', { runDir: dir, name: 'bg' });
    await until(async () => (await processGroupMembers(shellPid)).length === 2);
    await runner.close();
    expect(await processGroupMembers(shellPid)).toEqual([]);
    expect(await processGroupMembers(p.pid!)).toEqual([]);
    expect((await p.done).signal).not.toBeNull();
  });
});
