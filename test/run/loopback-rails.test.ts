// The loopback guard covers both rails (PCIe functions) of both nodes: a throttled second rail, or a second function
// trained at Gen5 x2 on an old BIOS, is ERROR with the advice for the host, never a cable FAIL from a low ib_write_bw sum.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BenchmarkRecord, NodePhaseStats } from '../../src/domain/record.js';
import { gradeRun } from '../../src/grading/grade-run.js';
import { loopbackCoversRails } from '../../src/grading/setup-checks.js';
import { loadProtocol } from '../../src/protocol/load.js';
import { loopbackFloorReason } from '../../src/run/steps/loopback.js';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { runCli } from '../helpers/cli.js';

const protocol = loadProtocol(join(import.meta.dirname, '..', '..', 'protocols', 'spark-burnin.json'));
const perRail = (sum: number) => [0, 1].map((rail) => ({ rail, device: `d${rail}`, minGbps: sum / 2, medianGbps: sum / 2, maxGbps: sum / 2, samples: 10 }));
const bench = (loopback: BenchmarkRecord['loopback'], sum: number): BenchmarkRecord => ({
  loopback,
  ibWriteBw: { perRail: perRail(sum), sumMedianGbps: sum },
  nccl: null,
});
const rows = (gbps: [number, number, number, number]) => gbps.map((g, i) => ({ node: i < 2 ? 'spark-a' : 'spark-b', rail: i % 2, gbps: g }));
// GENERATED clean stats of one node-phase (no errors): only the throughput can grade.
const clean: NodePhaseStats = {
  node: 'spark-b',
  phase: 'soak-loaded',
  seconds: 600,
  lanes: 4,
  laneStats: [],
  correctedBits: 0,
  preFecBer: 0,
  preFecBerUb95: 0,
  postFecErrors: 0,
  crcErrors: 0,
  symbolErrors: 0,
  linkDownEvents: 0,
  counterResets: 0,
  worstLane: null,
  worstLaneRatio: 0,
  nicTempMaxC: 60,
  nicTempMeanC: 55,
  gpuUtilMeanPct: 97,
  gpuTempMaxC: 70,
};
const analysis = { perNodePhase: [clean], fecMarginDecades: null, maxLaneRatio: null, loadedVsIdleRatio: null, logRateVsTempSlope: null };
const graded = (b: BenchmarkRecord) => gradeRun(analysis, b, protocol).measurements.some((m) => m.rule === 'ib-write-bw-sum');

describe('ib_write_bw sum and the loopback of every rail', () => {
  it('a low sum is a cable grade only when every rail of every node was fine in loopback', () => {
    expect(gradeRun(analysis, bench(rows([106, 106, 106, 106]), 100), protocol).outcome).toBe('FAIL');
    // spark-b's second PCIe function throttled (or at Gen5 x2): the low sum says nothing about the cable.
    expect(graded(bench(rows([106, 106, 106, 13.2]), 100))).toBe(false);
    expect(gradeRun(analysis, bench(rows([106, 106, 106, 52]), 150), protocol).outcome).toBe('PASS');
    // A per-rail journal that lacks a rail of a node: not covered, not graded.
    expect(graded(bench(rows([106, 106, 106, 106]).slice(0, 3), 100))).toBe(false);
  });

  it('journals written before per-rail loopback (rail 0 only) keep grading the sum as they did', () => {
    const v1 = [
      { node: 'spark-a', rail: 0, gbps: 106 },
      { node: 'spark-b', rail: 0, gbps: 106 },
    ];
    expect(loopbackCoversRails(v1, [0, 1])).toBe(true);
    expect(graded(bench(v1, 100))).toBe(true);
    expect(loopbackCoversRails([], [0, 1])).toBe(false);
  });

  it('the reason tells a throttled NIC (every rail slow: reboot) from one slow PCIe function (check its link, BIOS)', () => {
    const all = loopbackFloorReason(
      [0, 1].flatMap((rail) => ['spark-a', 'spark-b'].map((node) => ({ node, rail, device: `d${rail}`, gbps: node === 'spark-a' ? 13.2 : 106 }))),
      90,
    )!;
    expect(all.message).toBe(
      'NIC throttled: reboot both nodes with the cable attached; if it persists, power off 60 s (loopback ib_write_bw spark-a rail 0 (d0) 13.2 Gb/s, spark-a rail 1 (d1) 13.2 Gb/s < 90 Gb/s floor; the cable is not judged)',
    );
    expect(all.advice).not.toMatch(/lspci/);
    const one = loopbackFloorReason(
      [
        { node: 'spark-b', rail: 0, device: 'd0', gbps: 106 },
        { node: 'spark-b', rail: 1, device: 'd1', pci: '0002:01:00.1', gbps: 52.4 },
      ],
      90,
    )!;
    expect(one).toMatchObject({ rule: 'loopback-floor', node: 'spark-b', rail: 1, value: 52.4, unit: 'Gb/s', limit: 'loopback >= 90 Gb/s' });
    expect(one.message).toMatch(/^a PCIe function is slow: check its link, then reboot both nodes \(loopback ib_write_bw spark-b rail 1 \(d1\) 52\.4 Gb\/s/);
    expect(one.advice).toMatch(
      /^check the PCIe link of spark-b 0002:01:00\.1 \(sudo lspci -vv -s <address>: LnkSta should read Speed 32GT\/s, Width x4; an older BIOS trains the second function at x2/,
    );
    expect(loopbackFloorReason([{ node: 'spark-a', rail: 0, device: 'd0', gbps: 90 }], 90)).toBeNull();
  });

  it('on the simulated lab, throttledGbps [null, 13] on one node: ERROR loopback-floor naming rail 1, both rails of both nodes measured, no cable verdict', async () => {
    const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8')) as { name: string; nodes: Record<string, unknown>[] };
    s.name = 'second-rail-throttled';
    s.nodes[1]!['throttledGbps'] = [null, 13];
    const dir = mkdtempSync(join(tmpdir(), 'cq-rail1-'));
    writeFileSync(join(dir, 's.json'), JSON.stringify(s));
    const r = await runCli(['run', '--sim', join(dir, 's.json'), '--protocol', 'quick', '--out', join(dir, 'out'), '--json']);
    expect(r.code).toBe(3);
    const res = JSON.parse(r.out) as {
      outcome: string;
      runDir: string;
      certificate: string | null;
      reasons: { rule: string; node?: string; message: string }[];
    };
    expect(res.outcome).toBe('ERROR');
    expect(res.certificate).toBeNull();
    expect(res.reasons.map((x) => [x.rule, x.node])).toEqual([['loopback-floor', 'spark-b']]);
    expect(res.reasons[0]!.message).toMatch(/spark-b rail 1 \(roceP2p1s0f1\) 13\.0 Gb\/s/);
    const journal = readFileSync(join(res.runDir, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const lb = journal.find((l) => l.type === 'benchmark' && l.kind === 'loopback') as { results: { node: string; rail: number; gbps: number }[] };
    expect(lb.results.map((x) => `${x.node}/${x.rail}`)).toEqual(['spark-a/0', 'spark-a/1', 'spark-b/0', 'spark-b/1']);
    expect(lb.results.filter((x) => x.gbps < 90).map((x) => `${x.node}/${x.rail}`)).toEqual(['spark-b/1']);
  });
});
