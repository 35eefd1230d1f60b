// Real Sparks report 200000 or 100000 Mb/s per PCIe function (docs/formats.md §0; the playbook's switch pastes show both
// functions of one port at 100000, then at 200000): preflight accepts both; the throughput judges the speed.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEthtoolLink } from '../../src/probes/ethtool-link.js';
import { speedProblem } from '../../src/run/steps/preflight.js';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { runCli } from '../helpers/cli.js';
import { sample } from '../helpers/samples.js';

// The `ethtool <if> | grep Speed` outputs of a paste (prompt lines dropped).
const speeds = (file: string) =>
  sample(`ethtool-link/${file}`)
    .split('\n')
    .filter((l) => l.includes('Speed:'))
    .map((l) => parseEthtoolLink(l).speedMbps);

describe('preflight speed per PCIe function', () => {
  it('accepts both speeds real Sparks report, on the real outputs; refuses what a Spark cable link never shows', () => {
    const real = [...speeds('dgx-spark-playbooks-switch-speed-200g-both-functions.txt'), ...speeds('dgx-spark-playbooks-switch-speed-100g-both-functions.txt')];
    expect(real).toEqual([200000, 200000, 100000, 100000]);
    for (const s of real) expect(speedProblem(s)).toBeNull();
    expect(speedProblem(50000)).toBe('speed 50000 Mb/s; a Spark PCIe function reports 200000 or 100000');
    expect(speedProblem(null)).toBe('speed unknown Mb/s; a Spark PCIe function reports 200000 or 100000');
  });

  it('a simulated node whose functions report 100000 Mb/s qualifies its cable (PASS on throughput), the record keeps the speed', async () => {
    const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8')) as { name: string; nodes: Record<string, unknown>[] };
    s.name = 'speed-100000-per-function';
    s.nodes[0]!['speedMbps'] = 100000;
    const dir = mkdtempSync(join(tmpdir(), 'cq-speed-'));
    writeFileSync(join(dir, 'speed.json'), JSON.stringify(s));
    const r = await runCli(['run', '--sim', join(dir, 'speed.json'), '--protocol', 'quick', '--out', join(dir, 'out'), '--json']);
    const res = JSON.parse(r.out) as { outcome: string; runDir: string; reasons: unknown[] };
    expect(res.outcome, JSON.stringify(res.reasons)).toBe('PASS');
    const rec = JSON.parse(readFileSync(join(res.runDir, 'record.json'), 'utf8')) as { nodes: { speedMbps: number }[] };
    expect(rec.nodes.map((n) => n.speedMbps)).toEqual([100000, 200000]);
  });
});
