// The ib_write_bw benchmark measures the cable the way NVIDIA does (dgx-spark-playbooks, connect-two-sparks: both rails
// from one node to the other, then the reverse direction): one direction at a time, each held to the one-way limits.
// Loading both directions at once is left to the soaks. Simulated lab, quick protocol, in process.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BenchmarkRecord, DirectionThroughput } from '../../src/domain/record.js';
import { gradeRun } from '../../src/grading/grade-run.js';
import { loadProtocol } from '../../src/protocol/load.js';
import { buildTimeseries } from '../../src/run/journal-series.js';
import { labRun } from '../faults/lab-run.js';
import { nodePhase } from '../fixtures/records/build.js';

// The load sessions across the cable (not loopback) in the order the lab saw them start and stop: [event, client node].
function cableSessions(events: { kind: string; node?: string; detail?: string }[]): [string, string][] {
  return events
    .filter((e) => (e.kind === 'ib_write_bw-start' && !e.detail?.includes('(loopback)')) || e.kind === 'ib_write_bw-stop')
    .map((e) => [e.kind === 'ib_write_bw-start' ? 'start' : 'stop', e.node!]);
}

describe('ib_write_bw one direction at a time', { timeout: 60_000 }, () => {
  // One run of the good cable serves the checks that only read it.
  let good: ReturnType<typeof labRun> | undefined;
  const goodRun = () => (good ??= labRun({ scenario: 'good-qsfp56' }));

  it('first node to second on both rails, stopped, then back; each direction alone gives its one-way figure', async () => {
    const r = await goodRun();
    expect(r.record.outcome).toBe('PASS');
    // Loopback sessions aside, the lab sees spark-a's two clients start and stop before spark-b's two start: the
    // benchmark never loads both directions at once. The soaks then start all four streams together.
    expect(cableSessions(r.lab.events).slice(0, 12)).toEqual([
      ['start', 'spark-a'],
      ['start', 'spark-a'],
      ['stop', 'spark-a'],
      ['stop', 'spark-a'],
      ['start', 'spark-b'],
      ['start', 'spark-b'],
      ['stop', 'spark-b'],
      ['stop', 'spark-b'],
      ['start', 'spark-a'],
      ['start', 'spark-a'],
      ['start', 'spark-b'],
      ['start', 'spark-b'],
    ]);
    const bw = r.record.benchmarks.ibWriteBw!;
    expect(bw.directions).toBe('one-at-a-time');
    const [there, back] = bw.perDirection as [DirectionThroughput, DirectionThroughput];
    expect([there.from, there.to, back.from, back.to]).toEqual(['spark-a', 'spark-b', 'spark-b', 'spark-a']);
    // Each direction ran for the protocol's 15 s, the second after the first had stopped.
    expect(there.endS! - there.startS!).toBeCloseTo(15, 0);
    expect(back.endS! - back.startS!).toBeCloseTo(15, 0);
    expect(back.startS!).toBeGreaterThanOrEqual(there.endS!);
    // The scenario's rails carry 92.55 Gb/s each (the Spark's one-way figure, DOMAIN.md's 185.1 Gb/s for both rails).
    for (const d of [there, back]) {
      expect(d.perRail.map((x) => x.rail)).toEqual([0, 1]);
      for (const x of d.perRail) expect(x.medianGbps).toBeCloseTo(92.55, 1);
      expect(Math.abs(d.sumMedianGbps - 185.1)).toBeLessThan(0.15); // each row carries the lab's 0.04 % noise
    }
    // Each direction is graded against the one-way limits, named by its receiver.
    const graded = r.record.measurements.filter((m) => m.rule === 'ib-write-bw-sum');
    expect(graded.map((m) => [m.node, m.grade])).toEqual([
      ['spark-b', 'PASS'],
      ['spark-a', 'PASS'],
    ]);
    // The journal says how it was measured, and each stream's rows carry the time they ran.
    const line = r.journal.find((l) => l.type === 'benchmark' && l.kind === 'ib_write_bw')!;
    expect(line.directions).toBe('one-at-a-time');
    expect(line.bidirectional).toBeUndefined();
    const rows = line.rows as { from: string; startS: number; endS: number }[];
    expect(rows.map((x) => [x.from, x.startS, x.endS])).toEqual([
      ['spark-a', there.startS, there.endS],
      ['spark-a', there.startS, there.endS],
      ['spark-b', back.startS, back.endS],
      ['spark-b', back.startS, back.endS],
    ]);
  });

  it("the throughput series places each direction's rows in its own time span", async () => {
    const r = await goodRun();
    const bw = r.record.benchmarks.ibWriteBw!;
    const [there, back] = bw.perDirection as [DirectionThroughput, DirectionThroughput];
    const { throughput } = buildTimeseries({ lines: r.journal, badLines: 0, problems: [] } as never);
    const inBench = throughput.filter((p) => p.tS <= back.endS!);
    const of = (dir: string) => inBench.filter((p) => p.direction === dir);
    expect(of('spark-a->spark-b').length).toBeGreaterThan(0);
    expect(of('spark-b->spark-a').length).toBeGreaterThan(0);
    for (const p of of('spark-a->spark-b')) expect(p.tS > there.startS! && p.tS <= there.endS!).toBe(true);
    for (const p of of('spark-b->spark-a')) expect(p.tS > back.startS! && p.tS <= back.endS!).toBe(true);
  });

  it('a protocol measuring one direction only (bidirectional false) runs and grades the first node to the second alone', async () => {
    const r = await labRun({
      scenario: 'good-qsfp56',
      editProtocol: (p) => {
        const phase = (p['phases'] as { kind: string; bidirectional?: boolean }[]).find((x) => x.kind === 'ib_write_bw')!;
        phase.bidirectional = false;
      },
    });
    expect(r.record.outcome).toBe('PASS');
    expect(cableSessions(r.lab.events).slice(0, 4)).toEqual([
      ['start', 'spark-a'],
      ['start', 'spark-a'],
      ['stop', 'spark-a'],
      ['stop', 'spark-a'],
    ]);
    const bw = r.record.benchmarks.ibWriteBw!;
    expect(bw.perDirection!.map((d) => `${d.from}->${d.to}`)).toEqual(['spark-a->spark-b']);
    expect(r.record.measurements.filter((m) => m.rule === 'ib-write-bw-sum').map((m) => m.node)).toEqual(['spark-b']);
  });
});

describe('each direction is held to the one-way limits (170 fail, 180 marginal)', () => {
  const protocol = loadProtocol(join(import.meta.dirname, '..', '..', 'protocols', 'spark-burnin.json'));
  const rails = (sum: number) => [0, 1].map((rail) => ({ rail, device: `d${rail}`, minGbps: sum / 2, medianGbps: sum / 2, maxGbps: sum / 2, samples: 3 }));
  const direction = (from: string, to: string, sum: number): DirectionThroughput => ({
    from,
    to,
    perRail: rails(sum),
    sumMedianGbps: sum,
    startS: 0,
    endS: 15,
  });
  const bench = (ab: number, ba: number): BenchmarkRecord => {
    const perDirection = [direction('spark-a', 'spark-b', ab), direction('spark-b', 'spark-a', ba)];
    const weaker = ab <= ba ? perDirection[0]! : perDirection[1]!;
    return {
      loopback: [0, 1].flatMap((rail) => ['spark-a', 'spark-b'].map((node) => ({ node, rail, gbps: 106 }))),
      ibWriteBw: { perRail: weaker.perRail, sumMedianGbps: weaker.sumMedianGbps, perDirection, directions: 'one-at-a-time' },
      nccl: null,
    };
  };
  // GENERATED clean loaded soak of each receiver (no errors, GPUs loaded): only the throughput can grade.
  const clean = (node: string) => nodePhase(node, 'soak-loaded', 3600, [0, 0, 0, 0], { gpuUtilMeanPct: 97, nicTempMaxC: 60, nicTempMeanC: 55 });
  const analysis = {
    perNodePhase: [clean('spark-a'), clean('spark-b')],
    fecMarginDecades: null,
    maxLaneRatio: null,
    loadedVsIdleRatio: null,
    logRateVsTempSlope: null,
  };
  const bwReasons = (b: BenchmarkRecord) =>
    gradeRun(analysis, b, protocol)
      .reasons.filter((x) => x.rule === 'ib-write-bw-sum')
      .map((x) => [x.grade, x.node, x.value]);

  it('one weak direction is graded on its own, named by its receiver; NVIDIA-like figures both ways pass', () => {
    expect(gradeRun(analysis, bench(189.85, 185.1), protocol).outcome).toBe('PASS');
    expect(gradeRun(analysis, bench(185.1, 175), protocol).outcome).toBe('MARGINAL');
    expect(bwReasons(bench(185.1, 175))).toEqual([['MARGINAL', 'spark-a', 175]]);
    expect(gradeRun(analysis, bench(165, 185.1), protocol).outcome).toBe('FAIL');
    expect(bwReasons(bench(165, 185.1))).toEqual([['FAIL', 'spark-b', 165]]);
  });
});
