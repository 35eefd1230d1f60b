// `--dry-run` on the quick protocol: every command a run executes on each node, in order, with nothing run but
// read-only discovery. The default protocol's pinned plan and the plan over SSH (`sim serve`): dry-run.system.test.ts.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('run --dry-run', () => {
  it('lists, per node and in order, every command an actual run journals (its journal is a subsequence of the plan)', async () => {
    const plan = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--dry-run']);
    const out = mkdtempSync(join(tmpdir(), 'cq-dry-'));
    const run = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--out', out, '--json']);
    const runDir = (JSON.parse(run.out) as { runDir: string }).runDir;
    const journal = readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const node of ['spark-a', 'spark-b']) {
      const section = plan.out.slice(plan.out.indexOf(`== ${node} ==`)).split('\n== ')[0]!;
      const planned = section
        .split('\n')
        .filter((l) => l.startsWith('  '))
        .map((l) => l.replace(/^ {2}(\[sudo\] )?(start [a-z0-9-]+: )?/, ''));
      // A load run to its end (a loopback client, NCCL's mpirun) names its command on its process-start line; the raw
      // line of its output names the process instead.
      const ran = journal
        .filter((l) => (l.type === 'raw' || l.type === 'process-start') && l.node === node && typeof l.command === 'string')
        .map((l) => String(l.command));
      expect(ran.length).toBeGreaterThan(20);
      let at = 0;
      for (const c of ran) {
        const found = planned.indexOf(c, at);
        expect(found, `${node}: "${c}" not in the plan after position ${at}`).toBeGreaterThanOrEqual(0);
        at = found + 1;
      }
    }
  });

  it("batch --dry-run prints each pair's plan and writes nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-dry-batch-'));
    const manifest = join(dir, 'box.csv');
    writeFileSync(manifest, 'label\ncable-1\n');
    const r = await runCli([
      'batch',
      '--manifest',
      manifest,
      '--sim',
      'good-qsfp56',
      '--pair',
      'spark-a:0,spark-b:1',
      '--protocol',
      'quick',
      '--out',
      join(dir, 'batch'),
      '--dry-run',
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^\[pair 1\] spark-a:0,spark-b:1: every cable's run executes these commands\. Between cables the batch polls ibdev2netdev and sudo -n ethtool -m on both nodes for the swap, then \(--reboot auto\) reads .*runs \[sudo\] sudo -n systemctl reboot --no-block on both/,
    );
    expect(r.out).toContain('nodes spark-a (cage 0), spark-b (cage 1)');
    expect(r.out).toContain('-x NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1 -x NCCL_SOCKET_IFNAME=enp1s0f1np1');
    expect(existsSync(join(dir, 'batch'))).toBe(false);
  });
});

// #22 item 11: a dry run refuses what the run would refuse, stops on the first Ctrl-C, and samples each soak only for
// its first PLAN_SOAK_S seconds (the commands it lists are the same: the pinned plan above).
describe('run --dry-run validates like a run and stops on Ctrl-C', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cq-dry-opts-'));
  writeFileSync(join(dir, 'afile'), 'x\n');

  it.each([
    [['--sim-fault', 'bogus'], /^cablequal: bad fault "bogus": expected ssh-drop@900s/],
    [['--sim-fault', 'ssh-drop@10s:spark-z'], /^cablequal: fault "ssh-drop@10s:spark-z": no simulated node "spark-z"/],
    [['--speed', '500'], /^cablequal: --speed 500: with --sim at most 100 /],
    [['--label', ' '], /^cablequal: --label: empty/],
    [['--out', 'afile/reports'], /^cablequal: --out: .*\/afile is a file, not a directory$/],
    [['--protocol', '/dev/zero'], /^cablequal: \/dev\/zero: a device, not a regular file$/],
  ])('--sim good-qsfp56 %j: exit 2, one line', async (extra, message) => {
    const r = await runCli(['run', '--sim', 'good-qsfp56', '--dry-run', ...extra], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.trimEnd().split('\n')).toHaveLength(1);
    expect(r.err.trimEnd()).toMatch(message);
  });

  it('--nodes with --sim-fault or --seed: exit 2 before any node is reached', async () => {
    const r = await runCli(['run', '--nodes', 'no-such-a,no-such-b', '--seed', '3', '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('cablequal: run: --sim-fault and --seed apply to the simulated lab only (--sim)\n');
  });

  it('a valid fault is accepted and the plan is the same as without it; --out is checked but not created', async () => {
    const out = join(dir, 'not-made', 'reports');
    const plain = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--dry-run']);
    const faulted = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--sim-fault', 'ssh-drop@30s', '--out', out, '--dry-run']);
    expect(faulted.code).toBe(0);
    expect(faulted.out).toBe(plain.out);
    expect(existsSync(join(dir, 'not-made'))).toBe(false);
  });

  it('Ctrl-C (an aborted signal): exit 130, no plan, nothing run', async () => {
    const { main } = await import('../../src/cli/main.js');
    const ac = new AbortController();
    let out = '';
    let err = '';
    ac.abort('interrupted by SIGINT');
    const code = await main(['run', '--sim', 'good-qsfp56', '--dry-run'], {
      stdout: (t) => void (out += t),
      stderr: (t) => void (err += t),
      readStdin: async () => '',
      isTTY: false,
      cwd: dir,
      env: {},
      signal: ac.signal,
      interruptedBy: () => 'SIGINT',
    });
    expect(code).toBe(130);
    expect(out).toBe('');
    expect(err).toBe('cablequal: dry run interrupted: no plan printed, nothing was run on any node\n');
  });
});
