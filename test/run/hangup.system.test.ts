// A run survives its terminal: the real CLI against `sim serve` nodes (real SSH, the simulated lab sped up), its
// stdout and stderr pipes closed and SIGHUP sent mid-run, as when the SSH session to the controller drops. The run
// goes on, is found by `cablequal status`, ends with a record, and leaves no load running and no node locked.
// With --on-hangup abort it stops cleanly instead: ABORTED, loads stopped, locks released, exit 129.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveSimLab, type SimServe } from '../../src/sim/serve.js';
import { buildLockInfo, parseLockInfoReply } from '../../src/transport/node-lock.js';
import { SshRunner } from '../../src/transport/ssh-runner.js';
import { runCli } from '../helpers/cli.js';

const BIN = join(process.cwd(), 'bin', 'cablequal.js');
// The quick protocol shortened to ~35 s of real time (a loaded soak long enough for a GPU reading after the load ramps up) (the controller's soaks run on the wall clock).
const PROTOCOL = join(process.cwd(), 'test', 'fixtures', 'protocols', 'hangup-smoke.json');

function runDirOf(out: string, label: string): string | null {
  const d = join(out, label);
  if (!existsSync(d)) return null;
  const runs = readdirSync(d);
  return runs[0] ? join(d, runs[0]) : null;
}

// Spawn `cablequal run` against the served lab; resolve once the idle soak's loads run on the simulated nodes.
async function spawnUntilSoak(lab: SimServe, out: string, label: string, extra: string[] = []) {
  const child: ChildProcess = spawn(
    process.execPath,
    [BIN, 'run', '--nodes', 'spark-a,spark-b', '--ssh-config', lab.files.config, '--protocol', PROTOCOL, '--label', label, '--out', out, ...extra],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const dir = runDirOf(out, label);
    const journal = dir ? join(dir, 'journal.jsonl') : null;
    if (
      journal &&
      existsSync(journal) &&
      /"type":"phase-start","tS":[\d.]+,"phase":"soak-idle"/.test(readFileSync(journal, 'utf8')) &&
      lab.lab.processes('spark-a').length > 0
    ) {
      return { child, dir: dir!, exit, stderr: () => err };
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`the run never reached the soak: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function lockState(lab: SimServe, node: string, home: string): Promise<string> {
  const r = new SshRunner({ node, configPath: lab.files.config, homeDir: home, agentSock: null });
  try {
    return parseLockInfoReply((await r.run(buildLockInfo('/tmp/cablequal'))).stdout)?.state ?? 'unreadable';
  } finally {
    await r.close();
  }
}

describe('SIGHUP and closed output pipes on a live run (real CLI, sim serve over SSH)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cq-hup-'));
  let lab: SimServe;
  beforeAll(async () => {
    lab = await serveSimLab({ scenario: 'good-qsfp56', speed: 1, seed: 7, dir: join(dir, 'keys') });
  });
  afterAll(async () => {
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stdout and stderr closed, then SIGHUP: the run goes on, `status` finds it, it ends PASS with a record, no load left, locks free', async () => {
    const out = join(dir, 'reports');
    const run = await spawnUntilSoak(lab, out, 'hup');
    // The reading ends of both pipes go away (like `| head -c 10` exiting, or the terminal closing).
    run.child.stdout!.destroy();
    run.child.stderr!.destroy();
    run.child.kill('SIGHUP');
    await new Promise((r) => setTimeout(r, 300));
    expect(run.child.exitCode).toBeNull(); // still running

    const st = await runCli(['status', '--out', out, '--json']);
    expect(st.code).toBe(0);
    const live = JSON.parse(st.out) as { runId: string; verdict: string; pid: number; phase: string; nodes: string[]; runDir: string }[];
    expect(live).toHaveLength(1);
    expect(live[0]).toMatchObject({ verdict: 'running', pid: run.child.pid, nodes: ['spark-a', 'spark-b'], runDir: run.dir });
    expect(live[0]!.phase).toMatch(/^soak-/);
    const text = await runCli(['status', '--out', out]);
    // The nodes are the simulated lab over SSH: they said so before the run started, so its live state says so too.
    expect(text.out).toMatch(
      new RegExp(`^RUNNING  ${live[0]!.runId} "hup" \\(simulated lab\\)\\n  phase soak-\\S+, elapsed \\d+:\\d\\d, remaining \\d+:\\d\\d `),
    );

    const ended = await run.exit;
    expect(ended).toEqual({ code: 0, signal: null }); // PASS: the hang-up did not stop it, the closed pipes did not kill it
    const record = JSON.parse(readFileSync(join(run.dir, 'record.json'), 'utf8')) as { outcome: string; phases: { name: string; status: string }[] };
    expect(record.outcome).toBe('PASS');
    expect(record.phases.map((p) => p.status)).toEqual(record.phases.map(() => 'done'));
    const lines = readFileSync(join(run.dir, 'journal.jsonl'), 'utf8').trim().split('\n');
    expect(JSON.parse(lines.at(-1)!).type).toBe('run-end');
    expect(readFileSync(join(run.dir, 'run.log'), 'utf8')).toContain('controller terminal closed: the run goes on');
    expect(existsSync(join(run.dir, 'live.json'))).toBe(false);
    for (const n of lab.lab.nodes) expect(lab.lab.processes(n)).toEqual([]);
    expect(await lockState(lab, 'spark-a', dir)).toBe('free');
    expect(await lockState(lab, 'spark-b', dir)).toBe('free');
    expect((await runCli(['status', '--out', out])).out).toBe(`no live runs under ${out}\n`);
  });

  it('--on-hangup abort: SIGHUP stops the run cleanly, ABORTED record, loads stopped, locks free, exit 129', async () => {
    const out = join(dir, 'reports-abort');
    const run = await spawnUntilSoak(lab, out, 'hup-abort', ['--on-hangup', 'abort']);
    run.child.kill('SIGHUP');
    const ended = await run.exit;
    expect(ended).toEqual({ code: 129, signal: null });
    const record = JSON.parse(readFileSync(join(run.dir, 'record.json'), 'utf8')) as { outcome: string; reasons: { rule: string; message: string }[] };
    expect(record.outcome).toBe('ABORTED');
    expect(record.reasons).toEqual([{ rule: 'aborted', message: "run stopped: the controller's terminal or SSH session closed (SIGHUP, --on-hangup abort)" }]);
    expect(run.stderr()).toContain('SIGHUP: stopping the loads on every node');
    for (const n of lab.lab.nodes) expect(lab.lab.processes(n)).toEqual([]);
    expect(await lockState(lab, 'spark-a', dir)).toBe('free');
    expect(await lockState(lab, 'spark-b', dir)).toBe('free');
  });
});
