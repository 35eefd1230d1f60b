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
      const ran = journal.filter((l) => (l.type === 'raw' || l.type === 'process-start') && l.node === node).map((l) => String(l.command));
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
