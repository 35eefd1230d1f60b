import { describe, expect, it } from 'vitest';
import { EarlyStopDetector, growthText, type WatchSettings } from '../../src/analysis/early-stop.js';
import type { LaneGrowth } from '../../src/domain/record.js';
import { decadesBelowFecLimit } from '../../src/analysis/counters.js';
import { poissonLowerBound } from '../../src/analysis/poisson.js';
import type { NodeSample } from '../../src/domain/sample.js';
import { DEFAULT_RULES } from '../rules/defaults.js';
import { nodeSample, type Tick } from './build.js';

const LANE_BPS = 53.125e9;
const SOAKS = new Set(['soak-idle', 'soak-loaded']);
const watch = (over: Partial<WatchSettings> = {}) => new EarlyStopDetector({ ...DEFAULT_RULES, gradedPhases: SOAKS, ...over });

// GENERATED cumulative counters from per-second lane rates, one sample every dt seconds (rates may depend on t).
function gen(node: string, seconds: number, dt: number, rates: (t: number) => number[], extra: (t: number) => Partial<Tick> = () => ({})): NodeSample[] {
  const out: NodeSample[] = [];
  let acc: number[] = rates(0).map(() => 0);
  const n = Math.round(seconds / dt);
  for (let i = 0; i <= n; i++) {
    const t = i * dt;
    if (i > 0) acc = acc.map((v, l) => v + Math.round((rates(t)[l] ?? 0) * dt));
    out.push(nodeSample(node, i, { t, lanes: [...acc], ...extra(t) }));
  }
  return out;
}

// Feed the nodes tick by tick as the sampler does (phase from the sample's time); the decision and its tick.
function run(d: EarlyStopDetector, phaseOf: (t: number) => string, ...nodes: NodeSample[][]) {
  const n = Math.max(...nodes.map((x) => x.length));
  for (let i = 0; i < n; i++) {
    for (const xs of nodes) {
      const s = xs[i];
      if (!s) continue;
      const t = (s.tMs - 1_700_000_000_000) / 1000;
      if (d.push(phaseOf(t), s, t)) return d.decision;
    }
  }
  return null;
}
const soak = () => 'soak-loaded';

describe('the watch on a GENERATED failing-clone-like run', () => {
  // 300 s idle soak at 60 C (lane 2 at 2.9e3/s, others at 40/s), then the loaded soak: the NIC heats 60 -> 81 C over
  // 186 s, lane 2 climbs 0.4/C (to ~1.2e7/s, BER ~2.4e-4), the others 0.25/C; the link drops at 186 s into the load.
  const IDLE = 300;
  const DROP = IDLE + 186;
  const temp = (t: number) => (t <= IDLE ? 60 : 84 - 24 * Math.exp(-(t - IDLE) / 90));
  const rates = (t: number) => {
    const x = temp(t) - 60;
    return [40 * Math.exp(0.25 * x), 36 * Math.exp(0.25 * x), 2900 * Math.exp(0.4 * x), 44 * Math.exp(0.25 * x)];
  };
  const clone = gen('spark-b', DROP + 10, 1, rates, (t) => ({ temp: temp(t), ...(t >= DROP ? { linkDown: 1, linkUp: false } : {}) }));
  const clean = gen(
    'spark-a',
    DROP + 10,
    1,
    () => [0, 0, 0, 0],
    (t) => ({ temp: temp(t) }),
  );
  const phaseOf = (t: number) => (t <= IDLE ? 'soak-idle' : 'soak-loaded');

  it('stops on the FEC window of the bad receiver and lane, well before the link drops', () => {
    const d = run(watch(), phaseOf, clean, clone)!;
    expect(d).toMatchObject({ rule: 'fec-window', node: 'spark-b', lane: 2, phase: 'soak-loaded' });
    expect(d.tS).toBeGreaterThan(IDLE + 60);
    expect(d.tS).toBeLessThan(DROP - 20);
    expect(d.value).toBeLessThan(1);
    expect(d.message).toMatch(
      /^spark-b lane 2: pre-FEC BER at least \S+ \(95% lower bound\) in every 60-s window for 10 s: FEC margin \S+ decades or less < 1/,
    );
  });

  it('without the FEC window, the lane ratio stops it once the lane is 1000x the others and grows with heat, naming the runaway', () => {
    const d = run(watch({ fecWindow: null }), phaseOf, clean, clone)!;
    expect(d).toMatchObject({ rule: 'lane-ratio', node: 'spark-b', lane: 2 });
    expect(d.tS).toBeLessThan(DROP);
    expect(d.value).toBeGreaterThanOrEqual(1000);
    expect(d.message).toMatch(/runaway: lane 2 grew \S+ decades from .* while the others grew \S+ \(the failing clone's signature\)/);
  });

  it('without either window, the link drop decides, at the tick it is seen', () => {
    const d = run(watch({ fecWindow: null, laneRatio: null }), phaseOf, clean, clone)!;
    expect(d).toMatchObject({ rule: 'link-down-events', node: 'spark-b', tS: DROP, value: 1 });
  });

  it('keeps, per receiver and lane, the worst window held for holdS, and how each lane grew with temperature', () => {
    const d = watch({ fecWindow: { ...DEFAULT_RULES.fecWindow!, fail: -1e9 } }); // never decides: watch the whole run
    run(d, phaseOf, clean, clone);
    const w = d.windows();
    const lane2 = w.find((x) => x.rule === 'fec-window' && x.node === 'spark-b' && x.lane === 2)!;
    expect(lane2.value).toBeLessThan(1); // beyond the default FAIL line (the test moved it away to watch the whole run)
    expect(w.some((x) => x.node === 'spark-a')).toBe(false); // no errors on spark-a: no finite window margin
    const g = d.laneTemp().filter((x) => x.node === 'spark-b');
    expect(g.map((x) => x.runaway)).toEqual([false, false, true, false]);
    expect(g[2]!.growthDecades - g[0]!.growthDecades).toBeGreaterThan(0.5);
  });

  it('is sticky: later ticks return the same decision', () => {
    const d = watch();
    const first = run(d, phaseOf, clone)!;
    expect(d.push('soak-loaded', clone.at(-1)!, DROP + 10)).toBe(first);
  });
});

describe('early decisions never come from a benchmark phase, and persistence is in seconds', () => {
  // GENERATED: every lane at BER 1e-4 (5.3e6 errors/s), far beyond the FEC FAIL line 2.4e-5.
  const bad = (dt: number, seconds: number) => gen('spark-b', seconds, dt, () => [5.3e6, 5.3e6, 5.3e6, 5.3e6]);

  it('a benchmark phase (ib_write_bw, nccl) never fills a window', () => {
    expect(run(watch(), () => 'ib-write-bw', bad(1, 200))).toBeNull();
  });

  it('a soak decides once a 60-s window is full and has held 10 s beyond the line', () => {
    const d = run(watch(), soak, bad(1, 200))!;
    expect(d).toMatchObject({ rule: 'fec-window', tS: 70 });
  });

  it('a benchmark phase in between empties the window: the soak starts over', () => {
    // an interval belongs to the phase of the sample that ends it: 49-50 s is the first soak second again
    const d = run(watch(), (t) => (t >= 40 && t < 50 ? 'nccl' : 'soak-loaded'), bad(1, 200))!;
    expect(d.tS).toBe(49 + 60 + 10);
  });

  it('at 10 Hz the same seconds, not the same ticks: 5 ticks (0.5 s) beyond the line decide nothing', () => {
    expect(run(watch(), soak, bad(0.1, 100))).toMatchObject({ rule: 'fec-window', tS: 70 });
    // 60 s clean at 10 Hz, then 0.5 s of a burst: no window stays beyond the line for 10 s
    const burst = gen('spark-b', 70, 0.1, (t) => (t > 60 && t <= 60.5 ? [5.3e8, 0, 0, 0] : [0, 0, 0, 0]));
    const w = watch({ fecWindow: { ...DEFAULT_RULES.fecWindow!, windowS: 1 } });
    expect(run(w, soak, burst)).toBeNull();
  });

  it('counts decide at once in any phase', () => {
    const xs = [0, 1, 2].map((t) => nodeSample('spark-a', t, { t, lanes: [0, 0, 0, 0], crc: t === 2 ? 1 : 0 }));
    expect(run(watch(), () => 'loopback', xs)).toMatchObject({ rule: 'crc-errors', node: 'spark-a', tS: 2, value: 1 });
  });
});

describe('FEC window boundaries (1-s window, no hold, so each tick is one window)', () => {
  const oneSecond = { ...DEFAULT_RULES.fecWindow!, windowS: 1, holdS: 0 };
  // The smallest per-second count whose 95% lower bound is beyond the FAIL line (margin < 1 decade at 53.125 Gb/s).
  let k0 = Math.floor(2.4e-5 * LANE_BPS);
  while (!(decadesBelowFecLimit(poissonLowerBound(k0) / LANE_BPS) < 1)) k0++;

  it(`FAILs at ${k0} errors in the window and not one below (the lower bound decides, not the count)`, () => {
    expect(decadesBelowFecLimit(k0 / LANE_BPS)).toBeLessThan(1);
    const at = gen('b', 3, 1, () => [k0, 0, 0, 0]);
    expect(run(watch({ fecWindow: oneSecond, laneRatio: null }), soak, at)).toMatchObject({ rule: 'fec-window', lane: 0, tS: 1 });
    const below = gen('b', 3, 1, () => [k0 - 1, 0, 0, 0]);
    const d = watch({ fecWindow: oneSecond, laneRatio: null });
    expect(run(d, soak, below)).toBeNull();
    const w = d.windows().find((x) => x.lane === 0)!;
    expect(w.value).toBeGreaterThanOrEqual(1);
    expect(w.grade).toBe('MARGINAL');
  });

  it('a 2-lane QSFP112 link counts each lane at 106.25 Gb/s', () => {
    const xs = gen('b', 3, 1, () => [2 * k0, 0]).map((s) => ({ ...s, rails: s.rails.map((r) => ({ ...r, lanes: 2 })) }));
    const d = watch({ fecWindow: oneSecond, laneRatio: null });
    expect(run(d, soak, xs)).toMatchObject({ rule: 'fec-window', lane: 0 });
    expect(d.windows()[0]!.berLb95).toBeCloseTo(poissonLowerBound(2 * k0) / 106.25e9, 12);
  });

  it('without per-lane counters, the corrected bits of all lanes are watched as one (lane null, 212.5 Gb/s)', () => {
    const xs = [0, 1, 2].map((t) => {
      const s = nodeSample('b', t, { t, corrected: t * 4 * k0 });
      return s;
    });
    const d = watch({ fecWindow: oneSecond, laneRatio: null });
    expect(run(d, soak, xs)).toMatchObject({ rule: 'fec-window', message: expect.stringMatching(/^b \(corrected bits, all lanes\)/) });
    expect(d.windows()[0]).toMatchObject({ lane: null });
    expect(d.windows()[0]!.berLb95).toBeCloseTo(poissonLowerBound(4 * k0) / 212.5e9, 12);
  });
});

describe('lane ratio in windows: floors, the steady cap and growth with temperature', () => {
  // 60 s at 55 C, then 120 s warming linearly to 80 C. Other lanes steady at 1/s.
  const temp = (t: number) => (t <= 60 ? 55 : 55 + (25 * (t - 60)) / 120);
  const lr = (over: Partial<NonNullable<WatchSettings['laneRatio']>> = {}) => watch({ fecWindow: null, laneRatio: { ...DEFAULT_RULES.laneRatio!, ...over } });
  const grade = (d: EarlyStopDetector) => d.windows().find((w) => w.rule === 'lane-ratio');

  it('a lane growing 2 decades with heat, above 1e-6 and 1000x the others, FAILs and is named a runaway', () => {
    // lane 1: 1e-7 at 55 C -> 1e-5 at 80 C (0.08 decades per degree)
    const xs = gen(
      'spark-b',
      180,
      1,
      (t) => [1, 5312 * 10 ** (0.08 * (temp(t) - 55)), 1, 1],
      (t) => ({ temp: temp(t) }),
    );
    const d = lr();
    expect(run(d, soak, xs)).toMatchObject({ rule: 'lane-ratio', node: 'spark-b', lane: 1, message: expect.stringMatching(/runaway: lane 1/) });
  });

  it('the same ratio on a steady lane is MARGINAL at most, and never stops the run', () => {
    // lane 1 steady at 5e-6 (265625/s), the others at 1/s: far above both floors, 1000s of x, but it does not grow
    const xs = gen(
      'spark-b',
      180,
      1,
      () => [1, 265625, 1, 1],
      (t) => ({ temp: temp(t) }),
    );
    const d = lr();
    expect(run(d, soak, xs)).toBeNull();
    expect(grade(d)).toMatchObject({ grade: 'MARGINAL', lane: 1 });
    expect(grade(d)!.value).toBeGreaterThan(1000);
  });

  it('a ratio above 1000x with the lane below the 1e-6 FAIL floor is MARGINAL (the lane is above 1e-9)', () => {
    const xs = gen(
      'spark-b',
      180,
      1,
      (t) => [0, 5312 * 10 ** (0.03 * (temp(t) - 55)), 0, 0],
      (t) => ({ temp: temp(t) }),
    );
    const d = lr();
    expect(run(d, soak, xs)).toBeNull();
    expect(grade(d)).toMatchObject({ grade: 'MARGINAL', againstZero: true });
  });

  it('a lane with a few errors against zero lanes, below the 1e-9 floor, is PASS however large the bounded ratio', () => {
    // 20 errors/s on lane 3 is BER 3.8e-10: below the floor that makes a ratio count
    const xs = gen(
      'spark-b',
      180,
      1,
      () => [0, 0, 0, 20],
      (t) => ({ temp: temp(t) }),
    );
    const d = lr();
    run(d, soak, xs);
    expect(grade(d)).toMatchObject({ grade: 'PASS', lane: 3, againstZero: true });
    expect(grade(d)!.value).toBeGreaterThan(100);
  });

  it('the floors and the growth needed are the protocol`s: exactly at a floor counts (>=)', () => {
    // lane 2 steady at 1200/s: a window of 60 s has a lower bound of ~71,600 errors => BER ~2.25e-8
    const xs = gen(
      'spark-b',
      180,
      1,
      () => [0, 0, 1200, 0],
      (t) => ({ temp: temp(t) }),
    );
    const lb = poissonLowerBound(1200 * 60) / (60 * LANE_BPS);
    const at = lr({ marginalFloorBer: lb });
    run(at, soak, xs);
    expect(grade(at)).toMatchObject({ grade: 'MARGINAL' });
    const above = lr({ marginalFloorBer: lb * 1.001 });
    run(above, soak, xs);
    expect(grade(above)).toMatchObject({ grade: 'PASS' });
  });
});

describe('counters cleared without a reboot (mlxlink --pc): the watch reads them as its rules version does', () => {
  // GENERATED: the CRC counter reads 7 (from before the run); between t=4 and t=5 every counter is cleared and one CRC
  // error is counted, so it reads 1 from t=5 on.
  const xs = [0, 1, 2, 3, 4, 5, 6].map((t) => nodeSample('spark-b', t, { t, lanes: [0, 0, 0, 0], crc: t < 5 ? 7 : 1 }));
  it("'from-zero' (version 3 on): the error counted since the clearing decides at once", () => {
    expect(run(watch({ resets: 'from-zero' }), soak, xs)).toMatchObject({ rule: 'crc-errors', node: 'spark-b', tick: 5, value: 1 });
  });
  it("'drop' (versions 1-2): the interval of the clearing is left out, and the error in it with it", () => {
    expect(run(watch(), soak, xs)).toBeNull();
  });
  it("'from-zero' never counts a counter that did not go down: the 7 CRC errors from before the run stay out", () => {
    const lane = [0, 1, 2].map((t) => nodeSample('spark-b', t, { t, lanes: t === 2 ? [0, 0, 0, 0] : [3, 0, 0, 0], crc: 7 }));
    expect(run(watch({ resets: 'from-zero' }), soak, lane)).toBeNull();
  });
});

// Issue #33 item 6: a lane whose errors fall as it warms fell; it did not "grow -2.1 decades".
describe('growthText says which way the error rate went', () => {
  const lane = (l: number, growthDecades: number, growthLbDecades: number | null): LaneGrowth => ({
    lane: l,
    coolC: [58, 62],
    hotC: [76, 82],
    coolSeconds: 600,
    hotSeconds: 600,
    coolErrors: 1000,
    hotErrors: Math.round(1000 * 10 ** growthDecades),
    growthDecades,
    growthLbDecades,
    slopeDecadesPerC: growthDecades / 19,
  });
  const lr = { growingDecades: 1, runawayDecades: 1 };

  it('a steady lane whose errors fell, with the bound in the same words', () => {
    const g = [lane(0, 0.1, -0.2), lane(2, -2.1, -2.6)];
    expect(growthText(g, 2, lr)).toBe(
      'steady: lane 2 fell 2.1 decades from 58-62 °C to 76-82 °C (by at most 2.6, 95%), less than the 1 decade(s) a lane must grow by before a ratio can fail it',
    );
    expect(growthText(g, 0, lr)).toMatch(/^steady: lane 0 grew 0\.1 decades from .* \(at least -0\.2, 95%\),/);
  });

  it('a runaway whose other lanes fell, and a lane that did not move', () => {
    const g = [lane(0, -0.4, -0.9), lane(1, -0.4, -0.9), lane(2, 3.0, 2.9)];
    expect(growthText(g, 2, lr)).toBe(
      "runaway: lane 2 grew 3.0 decades from 58-62 °C to 76-82 °C (at least 2.9, 95%) while the others fell 0.4 (the failing clone's signature)",
    );
    expect(growthText([lane(1, -0.01, null)], 1, lr)).toMatch(/^steady: lane 1 grew 0\.0 decades from 58-62 °C to 76-82 °C, less than/);
  });
});
