import { describe, expect, it } from 'vitest';
import { CURRENT_ANALYSIS, RunAnalyzer, functionsRuleOf, resetRuleOf } from '../../src/analysis/analyze.js';
import { LiveIntervals } from '../../src/analysis/intervals.js';
import { laneRatesOf, nextReading, type RailReading } from '../../src/analysis/counters.js';
import type { NodeSample, PhyCounters } from '../../src/domain/sample.js';
import { RunMetrics } from '../../src/metrics/run-metrics.js';
import { encodeSample } from '../../src/run/sample-codec.js';
import { buildTimeseries } from '../../src/run/journal-series.js';

// GENERATED samples: one receiver, cumulative rx_err_lane_N_phy per tick, at 1 Hz; tick 3 reads lower than tick 2 (the
// counters were cleared: mlxlink --pc or a driver reload) and tick 4 counts on from there.
const T0 = 1_700_000_000_000;
const LANES = [
  [0, 0, 0, 0],
  [1, 0, 10, 0],
  [2, 0, 30, 0],
  [0, 0, 5, 0], // reset
  [1, 0, 9, 0],
];
const sample = (t: number): NodeSample => {
  const phy: PhyCounters = { crcErrors: 0n, pcsSymbolErrors: 0n, rxBytes: BigInt(1000 * (t + 1)), laneErrors: LANES[t]!.map(BigInt) };
  return {
    node: 'b',
    tick: t,
    tMs: T0 + t * 1000,
    controllerMs: T0 + t * 1000,
    rails: [{ netdev: 'enp1s0f1np1', phy }],
    nicTempC: 60,
    gpus: [],
    errors: [],
  };
};
const samples = LANES.map((_, t) => sample(t));

// Each reading's interval as lane rates under a reset rule ('reset' where the interval is dropped).
function ratesUnder(resets: 'drop' | 'from-zero'): (number[] | 'reset' | null)[] {
  let prev: RailReading | null = null;
  const out: (number[] | 'reset' | null)[] = [];
  for (const s of samples) {
    const { reading, interval } = nextReading(prev, s.rails[0]!, s.tMs, null, resets);
    prev = reading;
    out.push(interval === null || interval === 'reset' ? interval : laneRatesOf(interval));
  }
  return out;
}

describe('one lane-rate computation, one reset rule (nextReading)', () => {
  it("'drop' (rules versions 1-2): a counter going backwards drops that interval and becomes the baseline", () => {
    expect(ratesUnder('drop')).toEqual([null, [1, 0, 10, 0], [1, 0, 20, 0], 'reset', [1, 0, 4, 0]]);
  });

  it("'from-zero' (version 3 on): the cleared counters counted up from zero, so the reset interval keeps what they read", () => {
    expect(ratesUnder('from-zero')).toEqual([null, [1, 0, 10, 0], [1, 0, 20, 0], [0, 0, 5, 0], [1, 0, 4, 0]]);
  });

  it("the analysis, timeseries.csv and live metrics count the same intervals (today's rule: from zero)", () => {
    const a = new RunAnalyzer([]);
    a.node('b', 'enp1s0f1np1', 4);
    samples.forEach((s, t) => a.push('soak', s, t));
    const stats = a.finish().perNodePhase[0]!;
    expect(stats.laneStats.map((l) => l.errors)).toEqual([3, 0, 39, 0]);
    expect(stats.counterResets).toBe(1);
    expect(stats.seconds).toBe(4);

    const lines = samples.map((s, t) => ({ type: 'sample', tS: t, tick: t, phase: 'soak', node: 'b', sample: encodeSample(s) }));
    const ts = buildTimeseries({ lines, truncatedTail: false, badLines: [] });
    expect(ts.points.map((p) => [p.tS, p.laneRates])).toEqual([
      [1, [1, 0, 10, 0]],
      [2, [1, 0, 20, 0]],
      [3, [0, 0, 5, 0]],
      [4, [1, 0, 4, 0]],
    ]);

    const m = new RunMetrics();
    const live = new LiveIntervals({ resets: resetRuleOf(CURRENT_ANALYSIS), functions: functionsRuleOf(CURRENT_ANALYSIS) });
    for (const s of samples) {
      live.push(s);
      m.update('r', { phase: 'soak', elapsedS: 0, phaseRemainingS: null, runRemainingS: null, counted: Object.fromEntries(live.counted) });
    }
    return m.prometheus.getSingleMetricAsString('cablequal_lane_pre_fec_errors_total').then((text) => {
      expect(text).toContain('cablequal_lane_pre_fec_errors_total{run="r",node="b",lane="2"} 39');
      expect(text).toContain('cablequal_lane_pre_fec_errors_total{run="r",node="b",lane="0"} 3');
    });
  });
});
