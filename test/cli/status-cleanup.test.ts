// Finding a run again (`cablequal status`) and freeing the nodes of a dead one (`cablequal cleanup`): how "alive"
// is judged and what is printed. Against `sim serve` nodes over SSH: status-cleanup.system.test.ts.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { judgeOwner } from '../../src/cli/cleanup-command.js';
import { judgeLive } from '../../src/cli/status-command.js';
import type { LiveState } from '../../src/run/live-state.js';
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
