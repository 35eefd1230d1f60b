import { describe, expect, it } from 'vitest';
import { CURRENT_ANALYSIS, analyzeRun, fecMarginOf, type LabelledSample } from '../../src/analysis/analyze.js';
import { counterDelta, intervalDelta } from '../../src/analysis/counters.js';
import { certainLaneRatio } from '../../src/analysis/lane-ratio.js';
import { poissonLowerBound, poissonUpperBound } from '../../src/analysis/poisson.js';
import { parseEthtoolStats } from '../../src/probes/ethtool-stats.js';
import { DEFAULT_RULES } from '../rules/defaults.js';
import { sample } from '../helpers/samples.js';
import { nodeSample, series } from './build.js';

const LANE_BPS = 53.125e9;
const PHASES = [
  { name: 'soak-idle', kind: 'soak', gpuLoad: false },
  { name: 'soak-loaded', kind: 'soak', gpuLoad: true },
];
// Ticks 0..600 are the idle soak, 601..780 the loaded soak (counters run on across the boundary).
const label = (xs: ReturnType<typeof series>): LabelledSample[] => xs.map((s) => ({ phase: s.tick <= 600 ? 'soak-idle' : 'soak-loaded', sample: s }));

describe('counter deltas', () => {
  it('a decrease is a reset, never a negative delta', () => {
    expect(counterDelta(10n, 15n)).toEqual({ delta: 5, reset: false });
    expect(counterDelta(15n, 3n)).toEqual({ delta: 0, reset: true });
    expect(counterDelta(15n, 3n, 'from-zero')).toEqual({ delta: 3, reset: true });
    expect(counterDelta(10n, 15n, 'from-zero')).toEqual({ delta: 5, reset: false });
    expect(counterDelta(undefined, 3n)).toBeNull();
    expect(counterDelta(2n ** 63n, 2n ** 63n + 7n)).toEqual({ delta: 7, reset: false });
  });

  it('an interval with any reset counter is dropped; a link seen going down counts once', () => {
    const a = nodeSample('a', 0, { t: 0, lanes: [5, 5, 5, 5], crc: 2 }).rails[0]!;
    const b = nodeSample('a', 1, { t: 1, lanes: [6, 5, 0, 5], crc: 2 }).rails[0]!;
    expect(intervalDelta(a, b, 4)).toBe('reset');
    // From zero: lane 2 was cleared and counted nothing since; the lanes that did not go down count as usual.
    expect(intervalDelta(a, b, 4, 'from-zero')).toMatchObject({ laneErrors: [1, 0, 0, 0], crcErrors: 0, reset: true });
    const down = nodeSample('a', 1, { t: 1, lanes: [7, 5, 5, 9], crc: 3, linkUp: false, pcs: 1, uncorrectable: 2 }).rails[0]!;
    const a2 = nodeSample('a', 0, { t: 0, lanes: [5, 5, 5, 5], crc: 2, uncorrectable: 0 }).rails[0]!;
    expect(intervalDelta(a2, down, 4)).toEqual({
      laneErrors: [2, 0, 0, 4],
      correctedBits: 0,
      postFecErrors: 3,
      crcErrors: 1,
      symbolErrors: 0,
      linkDownEvents: 1,
    });
  });
});

// Issue #33 item 5: total_success_recovery_phy, where the kernel has it; never a reason to drop an interval.
describe('PHY recoveries', () => {
  it('an interval counts them only when both readings have the counter, and a decrease of it is no reset', () => {
    const at = (t: number, recoveries?: number) =>
      nodeSample('a', t, { t, lanes: [5, 5, 5, 5], ...(recoveries !== undefined ? { recoveries } : {}) }).rails[0]!;
    expect(intervalDelta(at(0, 2), at(1, 5), 4)).toMatchObject({ recoveries: 3 });
    expect(intervalDelta(at(0), at(1, 5), 4)).not.toHaveProperty('recoveries');
    expect(intervalDelta(at(0, 2), at(1), 4)).not.toHaveProperty('recoveries');
    // Cleared (or a 32-bit wrap): not a reset of the interval under either rule, counted as each rule counts.
    expect(intervalDelta(at(0, 7), at(1, 1), 4)).toEqual({
      laneErrors: [0, 0, 0, 0],
      correctedBits: 0,
      postFecErrors: 0,
      crcErrors: 0,
      symbolErrors: 0,
      linkDownEvents: 0,
      recoveries: 0,
    });
    expect(intervalDelta(at(0, 7), at(1, 1), 4, 'from-zero')).toMatchObject({ recoveries: 1 });
  });

  it('the analysis counts them per receiver and phase, and has no figure where the counter was never read', () => {
    const a = series(
      'spark-a',
      780,
      () => [0, 0, 0, 0],
      (t) => ({ recoveries: t < 300 ? 0 : t < 700 ? 1 : 2 }),
    );
    const b = series('spark-b', 780, () => [0, 0, 0, 0]);
    const r = analyzeRun({ samples: [...label(a), ...label(b)], phases: PHASES, variant: CURRENT_ANALYSIS });
    const of = (node: string, phase: string) => r.perNodePhase.find((s) => s.node === node && s.phase === phase)!;
    expect(of('spark-a', 'soak-idle').recoveries).toBe(1);
    expect(of('spark-a', 'soak-loaded').recoveries).toBe(1);
    expect(of('spark-b', 'soak-idle')).not.toHaveProperty('recoveries');
    expect(of('spark-b', 'soak-loaded')).not.toHaveProperty('recoveries');
  });
});

describe('certain lane ratio (rules version 2)', () => {
  it('GX10 200G DAC sample (lanes 6/2/190/0): lane 2 is at least 26x the median of the others (95% bounds)', () => {
    const st = parseEthtoolStats(sample('ethtool-stats/gx10-blog-lane-errors-partial.txt'));
    const counts = st.lanes.map(Number);
    expect(counts).toEqual([6, 2, 190, 0]);
    // others sorted 0, 2, 6: median 2; lower bound of 190 over the upper bound of 2 (chi2inv(0.05, 380)/2 = 167.9, chi2inv(0.95, 6)/2 = 6.296)
    const r = certainLaneRatio(counts)!;
    expect(r).toMatchObject({ lane: 2, againstZero: false });
    expect(r.value).toBeCloseTo(poissonLowerBound(190) / poissonUpperBound(2), 12);
    expect(r.value).toBeCloseTo(26.67, 2);
  });

  it('against lanes with zero errors the ratio is a lower bound; no errors at all is no ratio', () => {
    expect(certainLaneRatio([0, 0, 5, 0])).toEqual({ lane: 2, value: poissonLowerBound(5) / poissonUpperBound(0), againstZero: true });
    expect(certainLaneRatio([0, 0, 0, 0])).toBeNull();
    expect(certainLaneRatio([7])).toBeNull();
    // two lanes (QSFP112): the other lane is the median
    expect(certainLaneRatio([3000, 1])).toEqual({ lane: 0, value: poissonLowerBound(3000) / poissonUpperBound(1), againstZero: false });
  });
});

describe('analyzeRun', () => {
  // GENERATED: node a is a clean QSFP56 (zero errors); node b has lane 1 at 200/s idle and 2000/s loaded, others 2/s.
  const a = label(series('spark-a', 780, () => [0, 0, 0, 0]));
  const b = label(series('spark-b', 780, (t) => (t <= 600 ? [2, 200, 2, 2] : [2, 2000, 2, 2])));

  it('gives zero-error lanes a finite 95% bound of 2.9957 errors over the bits seen', () => {
    const r = analyzeRun({ samples: a, phases: PHASES });
    const idle = r.perNodePhase.find((s) => s.node === 'spark-a' && s.phase === 'soak-idle')!;
    expect(idle.seconds).toBe(600);
    expect(idle.lanes).toBe(4);
    expect(idle.laneStats.map((l) => l.errors)).toEqual([0, 0, 0, 0]);
    expect(idle.laneStats[0]!.ber).toBe(0);
    expect(idle.laneStats[0]!.berUb95).toBeCloseTo(2.9957 / (600 * LANE_BPS), 17);
    expect(idle.worstLane).toBeNull();
    // margin limited by the loaded phase (180 s): log10(2.4e-4 / (2.9957 / (180 * 53.125e9)))
    expect(r.fecMarginDecades).toBeCloseTo(Math.log10(2.4e-4 / (2.9957 / (180 * LANE_BPS))), 3);
    expect(r.fecMarginDecades).toBeCloseTo(8.88, 2);
  });

  it('per lane BER, lane ratio, loaded-vs-idle and margin of an erroring node', () => {
    const r = analyzeRun({ samples: [...a, ...b], phases: PHASES });
    expect(r.perNodePhase.map((s) => `${s.phase}/${s.node}`)).toEqual(['soak-idle/spark-a', 'soak-idle/spark-b', 'soak-loaded/spark-a', 'soak-loaded/spark-b']);
    const loaded = r.perNodePhase[3]!;
    expect(loaded.seconds).toBe(180);
    expect(loaded.laneStats.map((l) => l.errors)).toEqual([360, 360000, 360, 360]);
    expect(loaded.laneStats[1]!.ratePerS).toBe(2000);
    expect(loaded.laneStats[1]!.ber).toBeCloseTo(2000 / LANE_BPS, 20);
    expect(loaded.worstLane).toBe(1);
    // 1000x as counted; the certain ratio is the lower bound of 360000 over the upper bound of 360
    expect(loaded.worstLaneRatio).toBeCloseTo(poissonLowerBound(360000) / poissonUpperBound(360), 10);
    expect(loaded.worstLaneRatio).toBeCloseTo(914, 0);
    expect(loaded.ratioAgainstZero).toBe(false);
    expect(loaded.worstLaneBerLb95).toBeCloseTo(poissonLowerBound(360000) / (180 * LANE_BPS), 20);
    expect(r.maxLaneRatio).toBe(loaded.worstLaneRatio);
    expect(r.loadedVsIdleRatio).toBe(10);
    expect(loaded.preFecBer).toBeCloseTo((360000 + 3 * 360) / (180 * 212.5e9), 20);
    // worst upper bound: lane 1 loaded, 360000 errors -> UB ~ 360987
    const ub = loaded.laneStats[1]!.berUb95;
    expect(ub * 180 * LANE_BPS).toBeCloseTo(360000 + 1.6449 * Math.sqrt(360000) + 1.1, -1);
    expect(r.fecMarginDecades).toBeCloseTo(Math.log10(2.4e-4 / ub), 10);
    expect(r.fecMarginDecades).toBeCloseTo(3.803, 3);
    expect(fecMarginOf(loaded)).toEqual({ decades: r.fecMarginDecades, lane: 1 });
  });

  // GENERATED: the cage's second PCIe function counts lane 0 and CRC errors the first does not; lane 1 the other way.
  const twoFunctions = [0, 1, 2].map((t) => ({
    phase: 'soak-idle',
    sample: nodeSample('spark-a', t, { t, lanes: [0, t * 5, 0, 0], crc: 0 }, { lanes: [t * 1000, 0, 0, 0], crc: t * 9 }),
  }));

  it("rules versions 1-3 ('first'): read *_phy from the first rail only and ignore the other PCIe function of the cage", () => {
    const r = analyzeRun({ samples: twoFunctions, variant: { ...CURRENT_ANALYSIS, functions: 'first' } });
    expect(r.perNodePhase[0]!.crcErrors).toBe(0);
    expect(r.perNodePhase[0]!.laneStats.map((l) => l.errors)).toEqual([0, 10, 0, 0]);
    expect(r.functionDivergence).toBeUndefined();
  });

  it("version 4 ('larger'): grades the larger of the two functions for every counter and records where they differ", () => {
    const r = analyzeRun({ samples: twoFunctions });
    expect(r.perNodePhase[0]!.crcErrors).toBe(18);
    expect(r.perNodePhase[0]!.laneStats.map((l) => l.errors)).toEqual([2000, 10, 0, 0]);
    expect(r.functionDivergence).toEqual([
      {
        node: 'spark-a',
        counter: 'rx_crc_errors_phy',
        counts: [
          { netdev: 'enp1s0f1np1', count: 0 },
          { netdev: 'enP2p1s0f1np1', count: 18 },
        ],
      },
      {
        node: 'spark-a',
        counter: 'rx_err_lane_0_phy',
        counts: [
          { netdev: 'enp1s0f1np1', count: 0 },
          { netdev: 'enP2p1s0f1np1', count: 2000 },
        ],
      },
      {
        node: 'spark-a',
        counter: 'rx_err_lane_1_phy',
        counts: [
          { netdev: 'enp1s0f1np1', count: 10 },
          { netdev: 'enP2p1s0f1np1', count: 0 },
        ],
      },
    ]);
    // Functions that agree: nothing to record, the same figures as the first function alone.
    const same = [0, 1, 2].map((t) => ({ phase: 'soak-idle', sample: nodeSample('spark-a', t, { t, lanes: [t, 0, 0, 0] }, {}) }));
    expect(analyzeRun({ samples: same }).functionDivergence).toEqual([]);
    expect(analyzeRun({ samples: same }).perNodePhase).toEqual(
      analyzeRun({ samples: same, variant: { ...CURRENT_ANALYSIS, functions: 'first' } }).perNodePhase,
    );
  });

  const resetLanes = [
    [0, 0, 0, 0],
    [10, 0, 0, 0],
    [20, 0, 0, 0],
    [3, 0, 0, 0],
    [13, 0, 0, 0],
  ];
  const resetSamples = resetLanes.map((l, t) => ({ phase: 'soak-idle', sample: nodeSample('spark-a', t, { t, lanes: l }) }));

  it("rules versions 1-2 ('drop'): counts a counter reset, drops that interval, and restarts from the new value", () => {
    const s = analyzeRun({ samples: resetSamples, variant: { ...CURRENT_ANALYSIS, counterResets: 'drop' } }).perNodePhase[0]!;
    expect(s.counterResets).toBe(1);
    expect(s.laneStats[0]!.errors).toBe(30);
    expect(s.seconds).toBe(3);
    expect(s.laneStats[0]!.ratePerS).toBe(10);
  });

  it("today ('from-zero'): counts the reset and the 3 errors counted since the clearing; no interval is lost", () => {
    const s = analyzeRun({ samples: resetSamples }).perNodePhase[0]!;
    expect(s.counterResets).toBe(1);
    expect(s.laneStats[0]!.errors).toBe(33);
    expect(s.seconds).toBe(4);
    expect(s.laneStats[0]!.ratePerS).toBe(8.25);
  });

  it('post-FEC, CRC, symbol and link-down totals; corrected bits BER bound; temperature and GPU stats', () => {
    const ticks = [
      { t: 0, lanes: [0, 0, 0, 0], corrected: 0, temp: 70, gpuUtil: 95 },
      { t: 1, lanes: [1, 0, 0, 0], corrected: 100, pcs: 1, temp: 72, gpuUtil: 97 },
      { t: 2, lanes: [1, 0, 0, 0], corrected: 100, pcs: 1, crc: 2, symbol: 1, temp: 81, gpuUtil: 99 },
      { t: 3, lanes: [1, 0, 0, 0], corrected: 100, pcs: 1, crc: 2, symbol: 1, linkDown: 1, linkUp: false, temp: 80, gpuUtil: null },
    ];
    const s = analyzeRun({ samples: ticks.map((x, i) => ({ phase: 'soak-loaded', sample: nodeSample('spark-b', i, x) })) }).perNodePhase[0]!;
    expect([s.postFecErrors, s.crcErrors, s.symbolErrors, s.linkDownEvents]).toEqual([1, 2, 1, 1]);
    expect(s.correctedBits).toBe(100);
    expect(s.correctedBitsBerUb95).toBeCloseTo(poisson100() / (3 * 212.5e9), 18);
    expect(s.nicTempMaxC).toBe(81);
    expect(s.nicTempMeanC).toBeCloseTo(75.75, 10);
    expect(s.gpuUtilMeanPct).toBeCloseTo(97, 10);
    expect(s.gpuTempMaxC).toBe(50);
  });

  it('growth of each lane with NIC temperature: coolest third against hottest third of the range, in decades', () => {
    // GENERATED: lane 0 = 1000 * 10^(0.1 (T - 50)), lanes 1-3 steady at 50/s; NIC warming 50 -> 80 C over 300 s
    const temp = (t: number) => 50 + (30 * t) / 300;
    const xs = series(
      'spark-b',
      300,
      (t) => [1000 * 10 ** (0.1 * (temp(t) - 50)), 50, 50, 50],
      (t) => ({ temp: temp(t) }),
    );
    const r = analyzeRun({ samples: xs.map((s) => ({ phase: 'soak-loaded', sample: s })), phases: PHASES, watch: DEFAULT_RULES });
    const lt = r.laneTemp!;
    expect(lt.map((l) => l.lane)).toEqual([0, 1, 2, 3]);
    // 2 decades between the thirds (50-60 C and 70-80 C), whose mean temperatures are 20 C apart: 0.1 decades per degree
    expect(lt[0]!.growthDecades).toBeCloseTo(2, 1);
    expect(lt[0]!.slopeDecadesPerC).toBeCloseTo(0.1, 2);
    expect(r.logRateVsTempSlope).toBeCloseTo(0.1, 2);
    expect(lt[0]).toMatchObject({ growing: true, runaway: true });
    expect(lt[1]!.growthDecades).toBeCloseTo(0, 1);
    expect(lt[1]).toMatchObject({ growing: false, runaway: false });
    expect(lt[0]!.othersGrowthDecades).toBeCloseTo(0, 1);
  });

  it('returns nulls when there is nothing to analyse', () => {
    expect(analyzeRun({ samples: [] })).toEqual({
      perNodePhase: [],
      fecMarginDecades: null,
      maxLaneRatio: null,
      loadedVsIdleRatio: null,
      logRateVsTempSlope: null,
      gradedPhases: [],
      windows: [],
      laneTemp: [],
      functionDivergence: [],
    });
  });
});

// chi2inv(0.95, 202)/2 computed independently (scipy.stats.chi2.ppf): 118.07927278
function poisson100(): number {
  return 118.07927278;
}
