// Freeing the nodes of a dead run (`cablequal cleanup`) against `sim serve` nodes over SSH: a dead controller's
// orphaned load found by its run marker and stopped, its lock released, while a live run's lock is refused.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveSimLab, type SimServe } from '../../src/sim/serve.js';
import { acquireLock, buildLockInfo, controllerHost, parseLockInfoReply } from '../../src/transport/node-lock.js';
import { SshRunner } from '../../src/transport/ssh-runner.js';
import { runCli } from '../helpers/cli.js';

// The pid of a process that has exited (not reused within a test).
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

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
    // The terminal gives the reason in one line fitted to it and what to do in full; the record keeps the whole reason.
    expect(refused.out).toMatch(/^ {2}ERROR transport spark-a: spark-a: node is locked by run dead-run-1 /m);
    expect(refused.out.replace(/\n +/g, ' ')).toContain(
      "if its controller died, `cablequal cleanup --nodes spark-a` stops that run's processes and releases the lock",
    );
    const runDir = (refused.out.match(/run directory: (\S+)/) ?? [])[1]!;
    const record = JSON.parse(readFileSync(join(runDir, 'record.json'), 'utf8')) as { reasons: { rule: string; message: string }[] };
    expect(record.reasons[0]!.message).toMatch(
      /spark-a: node is locked by run dead-run-1 "crashed controller" from \S+ pid \d+, started \S+; last heartbeat \d+ s ago, 1 process\(es\) of that run alive/,
    );

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
