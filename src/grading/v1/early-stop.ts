// Rules version 1, FROZEN: a copy of what cablequal 0.1.0 graded with (see engine.ts). Do not change it.
// Streaming check, one tick at a time, that stops a phase as soon as a FAIL is certain (before the link drops).
import type { Limit } from './types.js';
import type { NodeSample, RailSample } from '../../domain/sample.js';
import { median } from 'simple-statistics';
import { carryForward, intervalDelta } from './counters.js';
import { poissonUpperBound } from './poisson.js';
import { canonicalRail } from './analyze.js';

// The FAIL that made the decision, where and when.
export interface EarlyStopDecision {
  rule: 'link-down-events' | 'crc-errors' | 'post-fec-errors' | 'lane-ratio';
  node: string;
  lane?: number;
  tick: number;
  tMs: number;
  value: number; // total events so far, or the lane ratio of the deciding tick
  message: string;
}

export interface EarlyStopOptions {
  limits: readonly Limit[]; // needs crc-errors, post-fec-errors, link-down-events, lane-ratio (all 'max': FAIL when value >= fail)
  laneRatioConsecutiveTicks: number;
  lanes?: number;
}

interface NodeState {
  netdev: string | undefined;
  prev: { rail: RailSample; tMs: number } | null;
  totals: { 'link-down-events': number; 'crc-errors': number; 'post-fec-errors': number };
  streak: { lane: number; ticks: number } | null;
}

// Counts since construction: create one per run (or per phase) and feed it every NodeSample as it arrives.
export class EarlyStopDetector {
  private readonly nodes = new Map<string, NodeState>();
  private readonly fail: Record<EarlyStopDecision['rule'], number>;
  private first: EarlyStopDecision | null = null;

  constructor(private readonly opts: EarlyStopOptions) {
    const f = (rule: EarlyStopDecision['rule']): number => {
      const l = opts.limits.find((x) => x.rule === rule);
      if (!l || l.direction !== 'max') throw new RangeError(`early stop needs a 'max' limit "${rule}"`);
      return l.fail;
    };
    this.fail = {
      'link-down-events': f('link-down-events'),
      'crc-errors': f('crc-errors'),
      'post-fec-errors': f('post-fec-errors'),
      'lane-ratio': f('lane-ratio'),
    };
  }

  // The first certain FAIL seen so far (sticky).
  get decision(): EarlyStopDecision | null {
    return this.first;
  }

  // Feed one tick of one node; returns the decision once it is certain (and on every later call).
  push(sample: NodeSample): EarlyStopDecision | null {
    if (this.first) return this.first;
    let st = this.nodes.get(sample.node);
    if (!st) {
      st = { netdev: sample.rails[0]?.netdev, prev: null, totals: { 'link-down-events': 0, 'crc-errors': 0, 'post-fec-errors': 0 }, streak: null };
      this.nodes.set(sample.node, st);
    }
    st.netdev ??= sample.rails[0]?.netdev;
    const read = canonicalRail(sample, st.netdev);
    if (!read) return null; // no data this tick: neither counts nor breaks a streak
    const prev = st.prev;
    const rail = carryForward(prev?.rail, read);
    st.prev = { rail, tMs: sample.tMs };
    if (!prev) return null;
    const dt = (sample.tMs - prev.tMs) / 1000;
    const lanes = rail.lanes ?? this.opts.lanes ?? null;
    const d = dt > 0 ? intervalDelta(prev.rail, rail, lanes) : null;
    if (d === null || d === 'reset') return null;

    st.totals['link-down-events'] += d.linkDownEvents;
    st.totals['crc-errors'] += d.crcErrors;
    st.totals['post-fec-errors'] += d.postFecErrors;
    const at = { node: sample.node, tick: sample.tick, tMs: sample.tMs };
    for (const rule of ['link-down-events', 'crc-errors', 'post-fec-errors'] as const) {
      const v = st.totals[rule];
      if (v >= this.fail[rule]) {
        return (this.first = { rule, ...at, value: v, message: `${sample.node}: ${v} ${rule.replace(/-/g, ' ')} (fail at ${this.fail[rule]} or more)` });
      }
    }

    // Per-tick lane ratio, conservative so that counting noise cannot fake certainty: the worst lane's count over the
    // 95% Poisson upper bound of the others' median count (a zero-count median becomes 3, so quiet ticks never count).
    const ratio = certainLaneRatio(d.laneErrors);
    if (ratio === null || ratio.value < this.fail['lane-ratio']) {
      st.streak = null;
      return null;
    }
    const worstLane = ratio.lane;
    st.streak = st.streak?.lane === worstLane ? { lane: worstLane, ticks: st.streak.ticks + 1 } : { lane: worstLane, ticks: 1 };
    if (st.streak.ticks < this.opts.laneRatioConsecutiveTicks) return null;
    return (this.first = {
      rule: 'lane-ratio',
      ...at,
      lane: worstLane,
      value: ratio.value,
      message: `${sample.node}: lane ${worstLane} at ${ratio.value.toFixed(0)}x or more the median of the other lanes (95% bound) for ${st.streak.ticks} ticks in a row (fail at ${this.fail['lane-ratio']}x or more)`,
    });
  }
}

// Lower estimate of one tick's worst-lane ratio: worst count / Poisson 95% upper bound of the others' median count.
export function certainLaneRatio(counts: readonly number[]): { lane: number; value: number } | null {
  if (counts.length < 2) return null;
  let lane = 0;
  counts.forEach((c, i) => {
    if (c > counts[lane]!) lane = i;
  });
  const top = counts[lane]!;
  if (top <= 0) return null;
  const others = counts.filter((_, i) => i !== lane);
  return { lane, value: top / poissonUpperBound(Math.round(median(others))) };
}
