// Rules version 1, frozen (src/grading/v1): the tests it shipped with, unchanged but for imports, so that the module
// that re-grades version 1 certificates keeps concluding what version 1 concluded.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeRun } from '../../../src/grading/v1/analyze.js';
import type { BenchmarkRecord } from '../../../src/domain/record.js';
import type { NodePhaseStats } from '../../../src/grading/v1/types.js';
import { gradeRun } from '../../../src/grading/v1/grade-run.js';
import { protocolV1 } from '../../../src/grading/v1/engine.js';
import { series } from '../../analysis/build.js';

// The version 1 limits (protocols/spark-burnin.json of cablequal 0.1.0, as the fixture journals embed it).
const protocol = protocolV1(
  JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'journals-v1', 'protocol-spark-burnin-v1.json'), 'utf8')),
);
const bench = (loop: number[], sum: number | null): BenchmarkRecord => ({
  loopback: loop.map((gbps, i) => ({ node: i % 2 ? 'spark-b' : 'spark-a', rail: Math.floor(i / 2), gbps })),
  ibWriteBw:
    sum === null
      ? null
      : {
          perRail: [
            { rail: 0, device: 'rocep1s0f1', minGbps: 90, medianGbps: sum / 2, maxGbps: 95, samples: 30 },
            { rail: 1, device: 'roceP2p1s0f1', minGbps: 90, medianGbps: sum / 2, maxGbps: 95, samples: 30 },
          ],
          sumMedianGbps: sum,
        },
  nccl: null,
});
const GOOD = bench([106, 105.5, 106.2, 105.9], 185.1);

// GENERATED stats of one node-phase; fields the grading reads are set per test.
function stats(over: Partial<NodePhaseStats> & { rates?: number[] }): NodePhaseStats {
  const seconds = over.seconds ?? 3600;
  const rates = over.rates ?? [0, 0, 0, 0];
  const laneStats = rates.map((r, lane) => ({
    node: over.node ?? 'spark-b',
    phase: over.phase ?? 'soak-loaded',
    lane,
    errors: r * seconds,
    seconds,
    ratePerS: r,
    ber: r / 53.125e9,
    berUb95: (r * seconds + 3) / (seconds * 53.125e9),
  }));
  return {
    node: 'spark-b',
    phase: 'soak-loaded',
    seconds,
    lanes: 4,
    laneStats,
    correctedBits: 0,
    preFecBer: 0,
    preFecBerUb95: 0,
    correctedBitsBerUb95: null,
    postFecErrors: 0,
    crcErrors: 0,
    symbolErrors: 0,
    linkDownEvents: 0,
    counterResets: 0,
    worstLane: null,
    worstLaneRatio: 0,
    nicTempMaxC: 70,
    nicTempMeanC: 65,
    gpuUtilMeanPct: 97,
    gpuTempMaxC: 70,
    ...over,
  };
}
const analysisOf = (s: NodePhaseStats[]) => ({
  perNodePhase: s,
  fecMarginDecades: null,
  maxLaneRatio: null,
  loadedVsIdleRatio: null,
  logRateVsTempSlope: null,
});

describe('gradeRun (rules version 1, frozen)', () => {
  it('a clean generated run PASSes and says why with the figures closest to their limits', () => {
    const samples = ['spark-a', 'spark-b'].flatMap((n) => series(n, 600, () => [0, 0, 0, 0]).map((s) => ({ phase: 'soak-idle', sample: s })));
    const v = gradeRun(analyzeRun({ samples, phases: protocol.phases }), GOOD, protocol);
    expect(v.outcome).toBe('PASS');
    expect(v.measurements.map((m) => `${m.rule}/${m.node ?? '-'}`)).toEqual([
      'crc-errors/spark-a',
      'post-fec-errors/spark-a',
      'link-down-events/spark-a',
      'fec-margin/spark-a',
      'lane-ratio/spark-a',
      'crc-errors/spark-b',
      'post-fec-errors/spark-b',
      'link-down-events/spark-b',
      'fec-margin/spark-b',
      'lane-ratio/spark-b',
      'ib-write-bw-sum/-',
    ]);
    expect(v.reasons.map((r) => r.rule)).toEqual(['fec-margin', 'lane-ratio', 'ib-write-bw-sum']);
    // zero errors over 600 s: lanes bound 2.9957 / (600 x 53.125e9) -> margin log10(2.4e-4 / 9.4e-14) = 9.4 decades
    expect(v.reasons[0]!.message).toBe(
      'spark-a soak-idle lane 0: margin 9.41 decades >= 2 (marginal below 2, fail below 1); 0 pre-FEC errors over 600 s, BER upper bound 9.40e-14',
    );
    expect(v.reasons[2]!.message).toBe('ib_write_bw sum 185.1 Gb/s >= 180 (marginal below 180, fail below 170); median of 2 rails summed');
  });

  it('one CRC error on one receiver FAILs, naming rule, node, phase, value and limit', () => {
    const v = gradeRun(analysisOf([stats({ node: 'spark-a', phase: 'soak-idle' }), stats({ crcErrors: 1 })]), GOOD, protocol);
    expect(v.outcome).toBe('FAIL');
    expect(v.reasons[0]).toEqual({
      rule: 'crc-errors',
      grade: 'FAIL',
      node: 'spark-b',
      phase: 'soak-loaded',
      value: 1,
      unit: 'errors',
      limit: 'fail at 1 or more',
      message: 'spark-b soak-loaded: CRC errors 1 errors >= 1 (fail at 1 or more)',
      advice: 'frames were lost on the wire: replace the cable',
    });
  });

  it('a lane at 150x the others is MARGINAL and named by lane; 1000x FAILs', () => {
    const m = gradeRun(analysisOf([stats({ rates: [2, 300, 2, 2], worstLane: 1, worstLaneRatio: 150 })]), GOOD, protocol);
    expect(m.outcome).toBe('MARGINAL');
    expect(m.reasons).toHaveLength(1);
    expect(m.reasons[0]).toMatchObject({ rule: 'lane-ratio', grade: 'MARGINAL', lane: 1, value: 150 });
    expect(m.reasons[0]!.message).toBe(
      'spark-b soak-loaded lane 1: lane ratio 150x >= 100 (marginal at 100 or more, fail at 1000 or more); lane rates 2.00 / 300 / 2.00 / 2.00 errors/s',
    );
    const f = gradeRun(analysisOf([stats({ rates: [2, 2000, 2, 2], worstLane: 1, worstLaneRatio: 1000 })]), GOOD, protocol);
    expect(f.outcome).toBe('FAIL');
  });

  it('FEC margin below 2 decades is MARGINAL, below 1 FAILs (worse of lanes and corrected bits)', () => {
    // lane BER 1e-5 -> bound ~1e-5 -> margin log10(24) = 1.38 decades
    const r = 1e-5 * 53.125e9;
    const v = gradeRun(analysisOf([stats({ rates: [r, r, r, r], worstLane: 0, worstLaneRatio: 1 })]), GOOD, protocol);
    expect(v.outcome).toBe('MARGINAL');
    expect(v.reasons[0]).toMatchObject({ rule: 'fec-margin', lane: 0 });
    expect(v.reasons[0]!.value).toBeCloseTo(1.38, 2);
    const cb = gradeRun(analysisOf([stats({ correctedBitsBerUb95: 1e-4 })]), GOOD, protocol);
    expect(cb.outcome).toBe('FAIL');
    expect(cb.reasons[0]!.message).toMatch(/^spark-b soak-loaded: margin 0\.38 decades < 1 .*; from corrected bits/);
  });

  it('ib_write_bw sum is graded only when loopback was fine', () => {
    const clean = [stats({})];
    expect(gradeRun(analysisOf(clean), bench([106, 106, 106, 106], 175), protocol).outcome).toBe('MARGINAL');
    expect(gradeRun(analysisOf(clean), bench([106, 106, 106, 106], 169.9), protocol).outcome).toBe('FAIL');
    const throttled = gradeRun(analysisOf(clean), bench([13.1, 106, 106, 106], 40), protocol);
    expect(throttled.measurements.some((m) => m.rule === 'ib-write-bw-sum')).toBe(false);
    expect(throttled.outcome).toBe('PASS');
    expect(gradeRun(analysisOf(clean), bench([], 40), protocol).measurements.some((m) => m.rule === 'ib-write-bw-sum')).toBe(false);
  });

  it('a counter reset is reported without a grade and does not change the verdict', () => {
    const v = gradeRun(analysisOf([stats({ counterResets: 2 })]), GOOD, protocol);
    expect(v.outcome).toBe('PASS');
    const r = v.reasons.find((x) => x.rule === 'counter-reset')!;
    expect(r.grade).toBeUndefined();
    expect(r.message).toBe('spark-b soak-loaded: counters went backwards 2 time(s) (mlxlink --pc or a driver reset); those intervals were left out');
  });
});
