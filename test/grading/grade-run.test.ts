import { describe, expect, it } from 'vitest';
import { analyzeRun } from '../../src/analysis/analyze.js';
import { poissonUpperBound } from '../../src/analysis/poisson.js';
import type { AnalysisRecord, BenchmarkRecord, LaneTempStats, NodePhaseStats, WindowStats } from '../../src/domain/record.js';
import { gradeRun } from '../../src/grading/grade-run.js';
import { checkLoopback } from '../../src/grading/setup-checks.js';
import { rulesVersionOf } from '../../src/rules/versions.js';
import { limitOf } from '../../src/protocol/limits.js';
import { series } from '../analysis/build.js';
import { DEFAULT_PROTOCOL as protocol, DEFAULT_RULES } from '../rules/defaults.js';

const LANE_BPS = 53.125e9;
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

// GENERATED stats of one receiver over one phase; each lane's bounds are set by the test (lb/ub per lane, BER).
function stats(over: Partial<NodePhaseStats> & { lb?: number[]; ub?: number[]; errors?: number[] }): NodePhaseStats {
  const seconds = over.seconds ?? 3600;
  const n = over.lanes ?? 4;
  const laneStats = Array.from({ length: n }, (_, lane) => ({
    node: over.node ?? 'spark-b',
    phase: over.phase ?? 'soak-loaded',
    lane,
    errors: over.errors?.[lane] ?? 0,
    seconds,
    ratePerS: (over.errors?.[lane] ?? 0) / seconds,
    ber: (over.errors?.[lane] ?? 0) / (seconds * LANE_BPS),
    berUb95: over.ub?.[lane] ?? 2.9957 / (seconds * LANE_BPS),
    berLb95: over.lb?.[lane] ?? 0,
  }));
  const { lb: _lb, ub: _ub, errors: _e, ...rest } = over;
  return {
    node: 'spark-b',
    phase: 'soak-loaded',
    seconds,
    lanes: n,
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
    ratioAgainstZero: false,
    worstLaneBerLb95: 0,
    nicTempMaxC: 82,
    nicTempMeanC: 81.2,
    gpuUtilMeanPct: 97,
    gpuTempMaxC: 70,
    ...rest,
  };
}
const analysisOf = (s: NodePhaseStats[], more: Partial<AnalysisRecord> = {}): AnalysisRecord => ({
  perNodePhase: s,
  fecMarginDecades: null,
  maxLaneRatio: null,
  loadedVsIdleRatio: null,
  logRateVsTempSlope: null,
  gradedPhases: ['soak-idle', 'soak-loaded'],
  windows: [],
  laneTemp: [],
  ...more,
});
// How lane `lane` of spark-b followed temperature: growing or not (GENERATED).
const temp = (lane: number, growing: boolean, runaway = false): LaneTempStats => ({
  node: 'spark-b',
  lane,
  coolC: [58, 62],
  hotC: [76, 82],
  coolSeconds: 600,
  hotSeconds: 1200,
  coolErrors: 100,
  hotErrors: growing ? 1e6 : 100,
  growthDecades: growing ? 3 : 0,
  growthLbDecades: growing ? 2.9 : -0.1,
  slopeDecadesPerC: growing ? 0.15 : 0,
  othersGrowthDecades: 0,
  growing,
  runaway,
});
const ratio = (r: number, berLb: number, growing: boolean, againstZero = false) =>
  gradeRun(
    analysisOf([stats({ worstLane: 1, worstLaneRatio: r, worstLaneBerLb95: berLb, ratioAgainstZero: againstZero })], { laneTemp: [temp(1, growing, growing)] }),
    GOOD,
    protocol,
  );

describe('gradeRun: a PASS states what the loaded soak proved', () => {
  it('zero errors over the 60-minute loaded soak: BER below 3.9e-15 per receiver (1.6e-14 per lane), the NIC temperature, the margin', () => {
    const phaseOf = (t: number) => (t <= 600 ? 'soak-idle' : 'soak-loaded');
    const samples = ['spark-a', 'spark-b'].flatMap((n) =>
      series(
        n,
        4200,
        () => [0, 0, 0, 0],
        () => ({ temp: 81 }),
      ).map((s) => ({ phase: phaseOf(s.tick), sample: s })),
    );
    const v = gradeRun(analyzeRun({ samples, phases: protocol.phases, watch: DEFAULT_RULES }), GOOD, protocol);
    expect(v.outcome).toBe('PASS');
    expect(v.headline!.phase).toBe('soak-loaded');
    expect(v.headline!.receivers[0]!.berUb95).toBeCloseTo(2.9957 / (3600 * 212.5e9), 18);
    expect(v.reasons.map((r) => `${r.rule}/${r.node ?? '-'}/${r.phase ?? '-'}`)).toEqual([
      'fec-margin/spark-a/soak-loaded',
      'fec-margin/spark-b/soak-loaded',
      'ib-write-bw-sum/-/-',
    ]);
    expect(v.reasons[0]!.message).toBe(
      'spark-a, soak-loaded (60 min at 212.5 Gb/s, NIC 81.0 °C mean, 81.0 max): pre-FEC BER below 3.9e-15 (95% upper bound, 0 errors; no errors on 4 lanes, each below 1.6e-14), FEC margin 10.2 decades (marginal below 2, fail below 1); 0 CRC, 0 post-FEC, 0 link-down; lane ratio: no errors',
    );
    expect(v.reasons[2]!.message).toBe('ib_write_bw sum 185.1 Gb/s >= 180 (marginal below 180, fail below 170); median of 2 rails summed');
    // lane ratio with no errors is "no errors", never "0x"
    expect(v.measurements.filter((m) => m.rule === 'lane-ratio').every((m) => m.value === 0 && m.grade === 'PASS')).toBe(true);
  });

  it('short phases are reported, never the headline nor graded on error rates', () => {
    const nccl = stats({
      phase: 'nccl',
      seconds: 7,
      errors: [0, 40, 0, 0],
      lb: [0, 40 / 7 / LANE_BPS, 0, 0],
      worstLane: 1,
      worstLaneRatio: 500,
      worstLaneBerLb95: 1e-7,
    });
    const v = gradeRun(analysisOf([nccl, stats({})]), GOOD, protocol);
    expect(v.outcome).toBe('PASS');
    expect(v.headline!.phase).toBe('soak-loaded');
    expect(v.measurements.filter((m) => m.phase === 'nccl').map((m) => m.rule)).toEqual(['crc-errors', 'post-fec-errors', 'link-down-events']);
  });

  it('a 2-lane QSFP112 and a NIC without per-lane counters say so', () => {
    const two = gradeRun(analysisOf([stats({ lanes: 2 })]), GOOD, protocol);
    expect(two.reasons[0]!.message).toContain('no errors on 2 lanes, each below');
    const none = stats({ lanes: 0, correctedBits: 12, correctedBitsBerUb95: 2.4e-10 });
    const v = gradeRun(analysisOf([none]), GOOD, protocol);
    expect(v.outcome).toBe('PASS');
    expect(v.reasons[0]!.message).toContain('12 errors; no per-lane counters: corrected bits of all lanes');
    expect(v.measurements.some((m) => m.rule === 'lane-ratio')).toBe(false);
    expect(v.measurements.find((m) => m.rule === 'fec-margin')!.value).toBeCloseTo(Math.log10(2.4e-4 / (poissonUpperBound(12) / (3600 * 212.5e9))), 10);
  });
});

describe('gradeRun: each receiver on its own', () => {
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
    expect(v.reasons.filter((r) => r.grade === 'FAIL').map((r) => r.node)).toEqual(['spark-b']);
  });

  it('one reason per rule and receiver: the worst, with the others listed after it', () => {
    const w = (lane: number, value: number): WindowStats => ({
      rule: 'fec-window',
      node: 'spark-b',
      lane,
      phase: 'soak-loaded',
      windowS: 60,
      holdS: 10,
      value,
      grade: value < 1 ? 'FAIL' : 'MARGINAL',
      atS: 900,
      berLb95: 2.4e-4 / 10 ** value,
      windowErrors: 1e8,
      windowSeconds: 60,
    });
    const v = gradeRun(analysisOf([stats({})], { windows: [w(0, 0.9), w(1, 0.7), w(2, 1.5)] }), GOOD, protocol);
    const r = v.reasons.filter((x) => x.rule === 'fec-window');
    expect(r).toHaveLength(1);
    expect(r[0]).toMatchObject({ node: 'spark-b', lane: 1, grade: 'FAIL', atS: 900 });
    expect(r[0]!.message).toMatch(/; also FAIL soak-loaded lane 0, MARGINAL soak-loaded lane 2$/);
    expect(v.measurements.filter((m) => m.rule === 'fec-window')).toHaveLength(3);
  });
});

describe('gradeRun: lane ratio only where it matters (boundaries)', () => {
  it('FAIL needs the ratio, the 1e-6 floor (lower bound) and a growing lane: exactly at each counts', () => {
    expect(ratio(1000, 1e-6, true).outcome).toBe('FAIL');
    expect(ratio(999.99, 1e-6, true).outcome).toBe('MARGINAL');
    expect(ratio(1000, 0.99e-6, true).outcome).toBe('MARGINAL');
    const steady = ratio(5000, 1e-5, false);
    expect(steady.outcome).toBe('MARGINAL');
    expect(steady.reasons[0]!.message).toContain('MARGINAL at most: the lane does not grow with temperature');
  });

  it('MARGINAL needs 100x and the 1e-9 floor; below the floor it is not counted, however large', () => {
    expect(ratio(100, 1e-9, false).outcome).toBe('MARGINAL');
    expect(ratio(99.99, 1e-9, false).outcome).toBe('PASS');
    const tiny = ratio(1e6, 0.99e-9, false, true);
    expect(tiny.outcome).toBe('PASS');
    const m = tiny.measurements.find((x) => x.rule === 'lane-ratio')!;
    expect(m).toMatchObject({ grade: 'PASS', value: 1e6, lane: 1 });
  });

  it('against lanes with no errors the ratio is "at least", and a runaway is named', () => {
    const v = ratio(1200, 3e-6, true, true);
    expect(v.outcome).toBe('FAIL');
    expect(v.reasons[0]!.message).toMatch(
      /^spark-b soak-loaded lane 1: lane ratio at least 1200x >= 1000 \(.*\) \(the other lanes had no errors: a lower bound\); lane 1 BER at least 3\.00e-6 \(95% lower bound\); runaway: lane 1 grew 3\.0 decades from 58-62 °C to 76-82 °C \(at least 2\.9, 95%\) while the others grew 0\.0 \(the failing clone's signature\)$/,
    );
  });
});

describe('gradeRun: FEC margin, FAIL only when certain (boundaries)', () => {
  const at = (lb: number, ub: number) =>
    gradeRun(
      analysisOf([
        stats({ errors: [0, 1e9, 0, 0], lb: [0, lb, 0, 0], ub: [2.9957 / (3600 * LANE_BPS), ub, 2.9957 / (3600 * LANE_BPS), 2.9957 / (3600 * LANE_BPS)] }),
      ]),
      GOOD,
      protocol,
    );
  it('the lower bound exactly on the FAIL line (1 decade) is not a FAIL; just beyond it is', () => {
    expect(at(2.4e-5, 3e-5).outcome).toBe('MARGINAL');
    const f = at(2.41e-5, 3e-5);
    expect(f.outcome).toBe('FAIL');
    expect(f.reasons[0]!.message).toMatch(
      /^spark-b soak-loaded lane 1: margin at most 0\.998 decades < 1 \(marginal below 2, fail below 1\); lane 1: BER at least 2\.41e-5 \(95% lower bound\)/,
    );
  });

  it('the upper bound exactly 2 decades below the limit is a PASS; above it MARGINAL', () => {
    expect(at(1e-7, 2.4e-6).outcome).toBe('PASS');
    const m = at(1e-7, 2.41e-6);
    expect(m.outcome).toBe('MARGINAL');
    expect(m.reasons[0]).toMatchObject({ rule: 'fec-margin', lane: 1, grade: 'MARGINAL' });
  });

  it('a window held beyond the line: exactly 1 decade is MARGINAL, below FAILs', () => {
    const w = (value: number): WindowStats => ({
      rule: 'fec-window',
      node: 'spark-a',
      lane: 3,
      phase: 'soak-loaded',
      windowS: 60,
      holdS: 10,
      value,
      grade: 'PASS',
      atS: 1234,
      berLb95: 2.4e-4 / 10 ** value,
      windowErrors: 7e7,
      windowSeconds: 60,
    });
    expect(gradeRun(analysisOf([stats({})], { windows: [w(1)] }), GOOD, protocol).outcome).toBe('MARGINAL');
    const f = gradeRun(analysisOf([stats({})], { windows: [w(0.999)] }), GOOD, protocol);
    expect(f.outcome).toBe('FAIL');
    expect(f.reasons[0]).toMatchObject({ rule: 'fec-window', node: 'spark-a', lane: 3, atS: 1234 });
  });
});

describe('gradeRun: throughput and counter resets', () => {
  it('ib_write_bw sum is graded only when loopback was fine', () => {
    const clean = [stats({})];
    expect(gradeRun(analysisOf(clean), bench([106, 106, 106, 106], 175), protocol).outcome).toBe('MARGINAL');
    expect(gradeRun(analysisOf(clean), bench([106, 106, 106, 106], 169.9), protocol).outcome).toBe('FAIL');
    const throttled = gradeRun(analysisOf(clean), bench([13.1, 106, 106, 106], 40), protocol);
    expect(throttled.measurements.some((m) => m.rule === 'ib-write-bw-sum')).toBe(false);
    expect(throttled.outcome).toBe('PASS');
    expect(gradeRun(analysisOf(clean), bench([], 40), protocol).measurements.some((m) => m.rule === 'ib-write-bw-sum')).toBe(false);
  });

  it('a counter reset is reported without a grade and does not change the verdict; it says how its rules version read it', () => {
    const v = gradeRun(analysisOf([stats({ counterResets: 2 })]), GOOD, protocol);
    expect(v.outcome).toBe('PASS');
    const r = v.reasons.find((x) => x.rule === 'counter-reset')!;
    expect(r.grade).toBeUndefined();
    expect(r.message).toBe(
      'spark-b soak-loaded: counters went backwards 2 time(s) (mlxlink --pc or a driver reset); counted from zero after each (only what the counters held between the reading before a clearing and the clearing itself could not be read)',
    );
    const v2 = gradeRun(analysisOf([stats({ counterResets: 2 })]), GOOD, protocol, rulesVersionOf(2)!);
    expect(v2.reasons.find((x) => x.rule === 'counter-reset')!.message).toBe(
      'spark-b soak-loaded: counters went backwards 2 time(s) (mlxlink --pc or a driver reset); those intervals were left out',
    );
  });
});

describe('setup checks (ERROR, no cable grade)', () => {
  it('checkLoopback flags a throttled rail (~13 Gb/s), not a 106 Gb/s one', () => {
    const r = checkLoopback(bench([106, 13.1, 105, 106], null).loopback, limitOf(protocol, 'loopback-floor'));
    expect(r).toHaveLength(1);
    expect(r[0]).toMatchObject({ rule: 'loopback-floor', node: 'spark-b', rail: 0, value: 13.1 });
    expect(r[0]!.grade).toBeUndefined();
    expect(r[0]!.message).toBe('spark-b rail 0: loopback 13.1 Gb/s (fail below 90): the NIC is throttled, the cable was not tested');
    expect(checkLoopback(bench([90, 90], null).loopback, limitOf(protocol, 'loopback-floor'))).toEqual([]);
  });
});
