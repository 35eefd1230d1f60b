import { describe, expect, it } from 'vitest';
import { EarlyStopDetector } from '../../src/analysis/early-stop.js';
import type { Limit } from '../../src/domain/limit.js';
import type { NodeSample } from '../../src/domain/sample.js';
import { nodeSample, series } from './build.js';

const LIMITS: Limit[] = [
  { rule: 'crc-errors', direction: 'max', fail: 1, unit: 'errors' },
  { rule: 'post-fec-errors', direction: 'max', fail: 1, unit: 'errors' },
  { rule: 'link-down-events', direction: 'max', fail: 1, unit: 'events' },
  { rule: 'lane-ratio', direction: 'max', fail: 1000, marginal: 100, unit: 'x' },
];
const detector = () => new EarlyStopDetector({ limits: LIMITS, laneRatioConsecutiveTicks: 5 });

// Feed both nodes tick by tick, as the sampler would; returns the first decision and the tick it came at.
function run(d: EarlyStopDetector, ...nodes: NodeSample[][]) {
  const n = Math.max(...nodes.map((x) => x.length));
  for (let i = 0; i < n; i++) for (const xs of nodes) if (xs[i] && d.push(xs[i]!)) return d.decision;
  return null;
}

describe('EarlyStopDetector on a GENERATED failing-clone-like series', () => {
  // Loaded phase: lane 2 climbs exponentially from 2.9e3/s to 1.17e7/s over 186 s (the link dropped 3.1 min in);
  // the other lanes stay at ~5/s with a deterministic wobble; spark-a, the other receiver, stays clean.
  const DROP_S = 186;
  const growth = Math.log(1.17e7 / 2.9e3) / DROP_S;
  const clone = series('spark-b', DROP_S + 10, (t) => {
    const wobble = 1 + 0.3 * Math.sin(t);
    return [5 * wobble, 4 * wobble, 2.9e3 * Math.exp(growth * t), 6 * wobble];
  }, (t) => (t >= DROP_S ? { linkDown: 1, linkUp: false } : {}));
  const clean = series('spark-a', DROP_S + 10, () => [3, 3, 3, 3]);

  it('stops on lane ratio long before the link drops', () => {
    const d = detector();
    const dec = run(d, clean, clone)!;
    expect(dec.rule).toBe('lane-ratio');
    expect(dec.node).toBe('spark-b');
    expect(dec.lane).toBe(2);
    // lane 2 passes 1000x the ~5/s median at about 2.9e3 * e^(growth t) = 5000 => t ~ 12 s, plus 4 more ticks
    expect(dec.tick).toBeGreaterThanOrEqual(12);
    expect(dec.tick).toBeLessThan(30);
    expect(dec.tick).toBeLessThan(DROP_S);
    expect(dec.value).toBeGreaterThanOrEqual(1000);
    expect(dec.message).toMatch(/^spark-b: lane 2 at \d+x the median of the other lanes for 5 ticks in a row \(fail at 1000x or more\)$/);
  });

  it('is sticky: later ticks return the same decision', () => {
    const d = detector();
    const first = run(d, clone)!;
    expect(d.push(clone[100]!)).toBe(first);
  });

  it('with the lane-ratio rule needing many ticks, the link drop decides instead', () => {
    const d = new EarlyStopDetector({ limits: LIMITS, laneRatioConsecutiveTicks: 1000 });
    const dec = run(d, clone)!;
    expect(dec).toMatchObject({ rule: 'link-down-events', node: 'spark-b', tick: DROP_S, value: 1 });
  });
});

describe('EarlyStopDetector boundaries', () => {
  // GENERATED per-tick lane counts: the ratio is exactly what the test sets.
  const ticks = (node: string, perTick: number[][]) => {
    let acc = [0, 0, 0, 0];
    return [[0, 0, 0, 0], ...perTick].map((inc, t) => {
      acc = acc.map((v, i) => v + (t === 0 ? 0 : (inc[i] ?? 0)));
      return nodeSample(node, t, { t, lanes: acc });
    });
  };
  const at = (worst: number, n: number) => Array.from({ length: n }, () => [10, 10, worst, 10]);

  it('exactly 1000x for 5 ticks is certain; 999x is not', () => {
    expect(run(detector(), ticks('b', at(10_000, 5)))?.rule).toBe('lane-ratio');
    expect(run(detector(), ticks('b', at(9_990, 20)))).toBeNull();
  });

  it('4 ticks above, one below, 4 above: the streak restarts', () => {
    expect(run(detector(), ticks('b', [...at(20_000, 4), [10, 10, 50, 10], ...at(20_000, 4)]))).toBeNull();
  });

  it('ignores near-silent ticks: 999 errors against zero elsewhere stay below the floor of 1 error per tick', () => {
    expect(run(detector(), ticks('b', Array.from({ length: 20 }, () => [0, 0, 999, 0])))).toBeNull();
    expect(run(detector(), ticks('b', Array.from({ length: 20 }, () => [0, 0, 0, 0])))).toBeNull();
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

  it('refuses limits without the rules it needs', () => {
    expect(() => new EarlyStopDetector({ limits: LIMITS.slice(1), laneRatioConsecutiveTicks: 5 })).toThrow('"crc-errors"');
  });
});
