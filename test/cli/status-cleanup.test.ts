// Finding a run again (`cablequal status`) and freeing the nodes of a dead one (`cablequal cleanup`): how "alive"
// is judged, what is printed, and, against `sim serve` nodes over SSH, a dead controller's orphaned load found by its
// run marker and stopped, its lock released, while a live run's lock is refused.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeOwner } from '../../src/cli/cleanup-command.js';
import { judgeLive } from '../../src/cli/status-command.js';
import type { LiveState } from '../../src/run/live-state.js';
import { serveSimLab, type SimServe } from '../../src/sim/serve.js';
import { acquireLock, buildLockInfo, controllerHost, parseLockInfoReply } from '../../src/transport/node-lock.js';
import { SshRunner } from '../../src/transport/ssh-runner.js';
import { runCli } from '../helpers/cli.js';

// The pid of a process that has exited (not reused within a test).
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

const live = (over: Partial<LiveState>): LiveState => ({
  schema: 'cablequal.live/1',
  runId: 'r1',
  label: null,
  pid: process.pid,
  controller: hostname(),
  startedAt: '2026-06-01T00:00:00.000Z',
  updatedAt: new Date(Date.UTC(2026, 5, 1, 0, 10)).toISOString(),
  phase: 'soak-loaded',
  elapsedS: 600,
  remainingS: 3900,
  nodes: [{ name: 'spark-a', host: 'spark-a', cage: 1 }],
  runDir: '/x',
  protocol: 'spark-burnin',
  simulated: false,
  ...over,
});

describe('how alive a run is', () => {
  const now = Date.UTC(2026, 5, 1, 0, 10, 5);
  it('status: on this controller by its pid and the age of live.json; on another by the age only', () => {
    expect(judgeLive(live({}), now, hostname(), () => true)).toEqual({ verdict: 'running', why: `pid ${process.pid}`, ageS: 5 });
    expect(judgeLive(live({}), now, hostname(), () => false).verdict).toBe('died');
    expect(judgeLive(live({ updatedAt: '2026-06-01T00:00:00.000Z' }), now, hostname(), () => true)).toMatchObject({ verdict: 'not-updating', ageS: 605 });
    expect(judgeLive(live({ controller: 'elsewhere' }), now, hostname(), () => false)).toMatchObject({
      verdict: 'running',
      why: `pid ${process.pid} on controller elsewhere`,
    });
    expect(judgeLive(live({ controller: 'elsewhere', updatedAt: '2026-06-01T00:00:00.000Z' }), now, hostname(), () => false).verdict).toBe('unknown');
  });

  it('cleanup: the lock owner on this controller by its pid and command line; on another by the lock heartbeat', () => {
    const owner = { run: 'r1', host: 'ctl', pid: 42 };
    const probe = (alive: boolean, cmd: string | null) => ({ alive: () => alive, cmdline: () => cmd });
    expect(judgeOwner(owner, 5, 'ctl', probe(false, null))).toEqual({ alive: false, why: 'its controller process (pid 42 on this host, ctl) is gone' });
    expect(judgeOwner(owner, 5, 'ctl', probe(true, 'node /usr/bin/cablequal run --nodes a,b')).alive).toBe(true);
    expect(judgeOwner(owner, 5, 'ctl', probe(true, 'vim notes.txt'))).toMatchObject({
      alive: false,
      why: expect.stringContaining('is now another program (vim notes.txt)'),
    });
    expect(judgeOwner(owner, 5, 'ctl', probe(true, null)).alive).toBe(true); // no /proc: the pid alone decides
    expect(judgeOwner(owner, 120, 'other', probe(false, null)).alive).toBe(true); // refreshed 2 min ago: alive
    expect(judgeOwner(owner, 600, 'other', probe(true, null))).toEqual({
      alive: false,
      why: 'the lock has not been refreshed for 600 s (a live run refreshes it every 60 s; its controller ctl cannot be checked from here)',
    });
  });
});

describe('cablequal status lists a run that died without a run-end', () => {
  it('DIED, with its phase and what to do next', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cq-status-'));
    const runDir = join(out, 'APF24150032K7N', 'run-killed');
    cpSync(join(process.cwd(), 'test', 'fixtures', 'journals-v1', 'killed-quick'), runDir, { recursive: true });
    writeFileSync(join(runDir, 'journal.jsonl'), gunzipSync(readFileSync(join(runDir, 'journal.jsonl.gz'))));
    rmSync(join(runDir, 'record.json'));
    writeFileSync(
      join(runDir, 'live.json'),
      JSON.stringify(live({ runId: 'run-killed', pid: deadPid(), updatedAt: new Date(Date.now() - 600_000).toISOString(), runDir })),
    );
    const r = await runCli(['status', '--out', out], { cwd: out });
    expect(r.code).toBe(0);
    expect(r.out.split('\n')).toEqual([
      'DIED  run-killed',
      expect.stringMatching(
        /^ {2}phase soak-loaded, elapsed 10:00, remaining 1:05:00 \(as of 60\d s ago\); nodes spark-a:1; pid \d+ is gone and the run never ended \(no run-end\)$/,
      ),
      '  run directory: APF24150032K7N/run-killed',
      '  grade it: cablequal grade APF24150032K7N/run-killed; free its nodes: cablequal cleanup --nodes spark-a',
      '',
    ]);
  });
});

describe('cablequal cleanup against sim serve nodes (real SSH)', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cq-cleanup-'));
  let lab: SimServe;
  const keep: ChildProcess[] = [];
  beforeAll(async () => {
    lab = await serveSimLab({ scenario: 'good-qsfp56', speed: 1, seed: 7, dir: join(dir, 'keys') });
  });
  afterAll(async () => {
    for (const c of keep) c.kill('SIGKILL');
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const runner = (node: string) => new SshRunner({ node, configPath: lab.files.config, homeDir: dir, agentSock: null, pollMs: 100 });
  const cli = (argv: string[]) => runCli([...argv, '--ssh-config', lab.files.config], { cwd: dir, env: { HOME: dir } });
  const lockOf = async (node: string) => {
    const r = runner(node);
    try {
      return parseLockInfoReply((await r.run(buildLockInfo('/tmp/cablequal'))).stdout);
    } finally {
      await r.close();
    }
  };

  it("a dead controller's orphaned load keeps spark-a locked (--break-lock refuses, naming cleanup); cleanup stops it and frees the lock", async () => {
    const a = runner('spark-a');
    try {
      await acquireLock(a, { runId: 'dead-run-1', label: 'crashed controller', pid: deadPid() });
      await a.start('ib_write_bw -d rocep1s0f1 -p 18601 -F --report_gbits -s 65536 -b --run_infinitely', {
        runDir: '/tmp/cablequal/dead-run-1',
        name: 'soak-idle-server-0',
      });
    } finally {
      await a.close();
    }
    expect(lab.lab.processes('spark-a')).toHaveLength(1);

    const refused = await cli(['run', '--nodes', 'spark-a,spark-b', '--protocol', 'quick', '--break-lock', '--out', 'reports', '--label', 'next']);
    expect(refused.code).toBe(3);
    expect(refused.out).toMatch(
      /\[transport\] spark-a: node is locked by run dead-run-1 "crashed controller" from \S+ pid \d+, started \S+; last heartbeat \d+ s ago, 1 process\(es\) of that run alive/,
    );
    expect(refused.out).toContain("if its controller died, `cablequal cleanup --nodes spark-a` stops that run's processes and releases the lock");

    const r = await cli(['cleanup', '--nodes', 'spark-a,spark-b']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out.split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^spark-a: locked by run dead-run-1 "crashed controller" from ${controllerHost()} pid \\d+, started \\S+: judged dead: its controller process \\(pid \\d+ on this host, ${controllerHost()}\\) is gone$`,
        ),
      ),
      expect.stringMatching(/^spark-a: stopped soak-idle-server-0 of run dead-run-1 \(pid \d+\): terminated$/),
      'spark-a: lock of run dead-run-1 released',
      'spark-b: no lock held',
      'spark-b: no process of any cablequal run running (found by the CABLEQUAL_RUN marker and pid files under /tmp/cablequal)',
      '',
    ]);
    expect(lab.lab.processes('spark-a')).toEqual([]);
    expect(await lockOf('spark-a')).toEqual({ state: 'free' });
  });

  it('refuses while the run holding the lock is alive: on this controller (its pid), or elsewhere (a fresh heartbeat)', async () => {
    // A live controller on this host: a process whose command line names cablequal.
    const ctl = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', 'cablequal-controller-stand-in'], { stdio: 'ignore' });
    keep.push(ctl);
    const a = runner('spark-a');
    const b = runner('spark-b');
    try {
      const la = await acquireLock(a, { runId: 'live-run-2', label: 'running', pid: ctl.pid! });
      const lb = await acquireLock(b, { runId: 'live-run-3', label: 'elsewhere', pid: 7, controllerHost: 'other-controller' });
      const r = await cli(['cleanup', '--nodes', 'spark-a,spark-b']);
      expect(r.code).toBe(3);
      expect(r.out).toContain(`spark-a: refused: locked by run live-run-2 "running" from ${controllerHost()} pid ${ctl.pid}`);
      expect(r.out).toContain(
        `which is alive: its controller is running on this host as pid ${ctl.pid}: stop it there (Ctrl-C, or kill -INT ${ctl.pid}), which stops its loads and releases the lock`,
      );
      expect(r.out).toMatch(
        /spark-b: refused: locked by run live-run-3 "elsewhere" from other-controller pid 7, .*which is alive: its controller other-controller refreshed the lock \d+ s ago \(a live run does every 60 s\): stop the run there/,
      );
      expect((await lockOf('spark-a'))?.state).toBe('held');
      await la.release();
      await lb.release();
    } finally {
      await a.close();
      await b.close();
      ctl.kill('SIGKILL');
    }
  });
});
