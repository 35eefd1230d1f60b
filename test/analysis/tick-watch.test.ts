import { describe, expect, it } from 'vitest';
// Rules version 1's watch (src/analysis/tick-watch.ts): the early-stop tests version 1 shipped with, kept as they were
// but for how the watch is built and fed (the tick ratio and rate ratio are src/analysis/lane-ratio.ts's variants).
import { TickStreakWatch } from '../../src/analysis/tick-watch.js';
import { rateLaneRatio, tickLaneRatio as certainLaneRatio } from '../../src/analysis/lane-ratio.js';
import type { NodeSample } from '../../src/domain/sample.js';
import { nodeSample, series } from './build.js';

const COUNT_FAIL = { 'crc-errors': 1, 'post-fec-errors': 1, 'link-down-events': 1 };
const detector = (ticks = 5) => new TickStreakWatch({ kind: 'tick-streak', countFail: COUNT_FAIL, laneRatioFail: 1000, ticks });
const laneRatio = (rates: number[], floor: number) => {
  const r = rateLaneRatio(rates, floor);
  return { worstLane: r.lane, ratio: r.value };
};

// Feed both nodes tick by tick, as the sampler would; returns the first decision and the tick it came at.
function run(d: TickStreakWatch, ...nodes: NodeSample[][]) {
  const n = Math.max(...nodes.map((x) => x.length));
  for (let i = 0; i < n; i++) for (const xs of nodes) if (xs[i] && d.push('soak', xs[i]!, i)) return d.decision;
  return null;
}

describe('TickStreakWatch (rules version 1) on a GENERATED failing-clone-like series', () => {
  // Loaded phase: lane 2 climbs exponentially from 2.9e3/s to 1.17e7/s over 186 s (the link dropped 3.1 min in);
  // the other lanes stay at ~5/s with a deterministic wobble; spark-a, the other receiver, stays clean.
  const DROP_S = 186;
  const growth = Math.log(1.17e7 / 2.9e3) / DROP_S;
  const clone = series(
    'spark-b',
    DROP_S + 10,
    (t) => {
      const wobble = 1 + 0.3 * Math.sin(t);
      return [5 * wobble, 4 * wobble, 2.9e3 * Math.exp(growth * t), 6 * wobble];
    },
    (t) => (t >= DROP_S ? { linkDown: 1, linkUp: false } : {}),
  );
  const clean = series('spark-a', DROP_S + 10, () => [3, 3, 3, 3]);

  it('stops on lane ratio long before the link drops', () => {
    const d = detector();
    const dec = run(d, clean, clone)!;
    expect(dec.rule).toBe('lane-ratio');
    expect(dec.node).toBe('spark-b');
    expect(dec.lane).toBe(2);
    // others' median ~5/tick has a 95% bound of ~10.5; lane 2 passes 1000 x 10.5 at 2.9e3 e^(growth t) = 10.5e3 => t ~ 29 s, + 4 ticks
    expect(dec.tick).toBeGreaterThanOrEqual(25);
    expect(dec.tick).toBeLessThan(45);
    expect(dec.tick).toBeLessThan(DROP_S);
    expect(dec.value).toBeGreaterThanOrEqual(1000);
    expect(dec.message).toMatch(/^spark-b: lane 2 at \d+x or more the median of the other lanes \(95% bound\) for 5 ticks in a row \(fail at 1000x or more\)$/);
  });

  it('is sticky: later ticks return the same decision', () => {
    const d = detector();
    const first = run(d, clone)!;
    expect(d.push('soak', clone[100]!, 100)).toBe(first);
  });

  it('with the lane-ratio rule needing many ticks, the link drop decides instead', () => {
    const d = detector(1000);
    const dec = run(d, clone)!;
    expect(dec).toMatchObject({ rule: 'link-down-events', node: 'spark-b', tick: DROP_S, value: 1 });
  });
});

describe('TickStreakWatch boundaries', () => {
  // GENERATED per-tick lane counts: the ratio is exactly what the test sets.
  const ticks = (node: string, perTick: number[][]) => {
    let acc = [0, 0, 0, 0];
    return [[0, 0, 0, 0], ...perTick].map((inc, t) => {
      acc = acc.map((v, i) => v + (t === 0 ? 0 : (inc[i] ?? 0)));
      return nodeSample(node, t, { t, lanes: acc });
    });
  };
  const at2 = (others: number, worst: number, n: number) => Array.from({ length: n }, () => [others, others, worst, others]);

  it('counts a tick only when the ratio is >= 1000 against the 95% bound of the others (10000/tick -> bound 10165.6)', () => {
    expect(certainLaneRatio([10_000, 10_000, 10_165_600, 10_000])!.value).toBeCloseTo(1000, 1);
    expect(run(detector(), ticks('b', at2(10_000, 10_170_000, 5)))?.rule).toBe('lane-ratio');
    // 1010x as a point estimate, but not certainly above 1000x: never stops
    expect(run(detector(), ticks('b', at2(10_000, 10_100_000, 50)))).toBeNull();
  });

  it('4 ticks above, one below, 4 above: the streak restarts', () => {
    const hi = at2(10_000, 20_000_000, 4);
    expect(run(detector(), ticks('b', [...hi, [10_000, 10_000, 50, 10_000], ...hi]))).toBeNull();
  });

  it('quiet others: zero counts are bounded at 3, so the worst lane needs 2996 errors in one tick', () => {
    expect(certainLaneRatio([0, 0, 2996, 0])!.value).toBeCloseTo(1000.09, 2);
    expect(
      run(
        detector(),
        ticks(
          'b',
          Array.from({ length: 20 }, () => [0, 0, 2990, 0]),
        ),
      ),
    ).toBeNull();
    expect(
      run(
        detector(),
        ticks(
          'b',
          Array.from({ length: 5 }, () => [0, 0, 3000, 0]),
        ),
      )?.lane,
    ).toBe(2);
    expect(
      run(
        detector(),
        ticks(
          'b',
          Array.from({ length: 20 }, () => [0, 0, 0, 0]),
        ),
      ),
    ).toBeNull();
  });

  it('counting noise at low rates does not fake certainty: a true 1000x lane at ~3 errors/s for the others (GENERATED Poisson)', () => {
    // Poisson counts from a fixed-seed generator: lane 2 at 2900/s, others 2.9, 2.6, 3.1/s (true ratio exactly 1000)
    const rnd = lcg(7);
    const poisson = (mean: number) => {
      if (mean > 50) return Math.round(mean + Math.sqrt(mean) * gauss(rnd));
      let k = 0;
      for (let p = rnd(); p > Math.exp(-mean); p *= rnd()) k++;
      return k;
    };
    const perTick = Array.from({ length: 600 }, () => [poisson(2.9), poisson(2.6), poisson(2900), poisson(3.1)]);
    expect(run(detector(), ticks('b', perTick))).toBeNull();
    // the naive per-tick point estimate (others floored at 1/tick) crosses 1000x in many of these ticks
    const naive = perTick.filter((c) => laneRatio(c, 1).ratio >= 1000).length;
    expect(naive).toBeGreaterThan(150);
  });

  it('a healthy QSFP112-like stream of corrected errors on every lane never stops the run', () => {
    const xs = series('a', 600, (t) => [3000 + 100 * Math.sin(t), 2800, 3100, 2900]);
    expect(run(detector(), xs)).toBeNull();
  });

  it('one CRC error, one post-FEC error or one uncorrectable block is certain', () => {
    const crc = [nodeSample('a', 0, { t: 0, lanes: [0, 0, 0, 0] }), nodeSample('a', 1, { t: 1, lanes: [0, 0, 0, 0], crc: 1 })];
    expect(run(detector(), crc)).toMatchObject({ rule: 'crc-errors', value: 1, message: 'a: 1 crc errors (fail at 1 or more)' });
    const unc = [nodeSample('a', 0, { t: 0, uncorrectable: 5 }), nodeSample('a', 1, { t: 1, uncorrectable: 6 })];
    expect(run(detector(), unc)).toMatchObject({ rule: 'post-fec-errors', value: 1 });
  });

  it('a counter reset is neither an error nor a streak breaker', () => {
    const xs = [
      nodeSample('a', 0, { t: 0, lanes: [0, 0, 0, 0], crc: 5 }),
      nodeSample('a', 1, { t: 1, lanes: [0, 0, 0, 0], crc: 0 }),
      nodeSample('a', 2, { t: 2, lanes: [0, 0, 0, 0], crc: 0 }),
    ];
    expect(run(detector(), xs)).toBeNull();
  });

  it('ignores the second PCIe function of the cage', () => {
    const xs = [0, 1, 2].map((t) => nodeSample('a', t, { t, lanes: [0, 0, 0, 0] }, { crc: t }));
    expect(run(detector(), xs)).toBeNull();
  });
});

// Deterministic generators for the GENERATED noise above.
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return (x + 0.5) / 4294967296;
  };
}
function gauss(rnd: () => number): number {
  return Math.sqrt(-2 * Math.log(rnd())) * Math.cos(2 * Math.PI * rnd());
}
