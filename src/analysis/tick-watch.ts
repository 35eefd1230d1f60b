// Rules version 1's watch: the count rules, and a lane ratio (one tick's worst lane count over the 95% upper bound of
// the others' median) held for a number of ticks in a row, in every phase. Kept so a version 1 certificate is graded
// again as it was signed; today's watch is early-stop.ts.
import type { NodeSample } from '../domain/sample.js';
import { intervalDelta, type Interval, type IntervalDelta } from './counters.js';
import { tickLaneRatio } from './lane-ratio.js';
import { ReceiverIntervals } from './intervals.js';
import { CountTotals, type CountRule, type DecisionPlace, type EarlyStopDecision, type RunWatch } from './watch.js';

// What version 1's watch reads of the protocol.
export interface TickStreakSettings {
  kind: 'tick-streak';
  countFail: Record<CountRule, number>;
  laneRatioFail: number;
  ticks: number; // ticks in a row beyond the ratio
  lanes?: number; // lanes in use when a sample does not say
}

interface NodeState {
  counts: CountTotals;
  streak: { lane: number; ticks: number } | null;
}

// One watch per re-grade with rules version 1: the first certain FAIL, sticky.
export class TickStreakWatch implements RunWatch {
  private readonly nodes = new Map<string, NodeState>();
  private first: EarlyStopDecision | null = null;

  // Its own intervals, for a caller that feeds samples alone (push): version 1 read the first function, dropped resets.
  private readonly intervals: ReceiverIntervals;

  constructor(private readonly settings: TickStreakSettings) {
    this.intervals = new ReceiverIntervals({ lanes: { carried: settings.lanes ?? null } });
  }

  get decision(): EarlyStopDecision | null {
    return this.first;
  }

  push(phase: string, sample: NodeSample, tS: number): EarlyStopDecision | null {
    return this.pushInterval(phase, sample, tS, this.intervals.push(sample).interval);
  }

  pushInterval(phase: string, sample: NodeSample, tS: number, iv: (Interval & { lanesUsed: number | null }) | null): EarlyStopDecision | null {
    const st = this.state(sample);
    if (!iv || this.first) return this.first;
    const lanes = iv.rail.lanes ?? this.settings.lanes ?? null;
    const d = lanes === iv.lanesUsed ? iv.d : intervalDelta(iv.prev, iv.rail, lanes);
    if (d === 'reset') return this.first;
    return this.interval(st, d, { node: sample.node, phase, tick: sample.tick, tMs: sample.tMs, tS });
  }

  // Version 1 kept no windows and no growth with temperature: its record has neither.
  windows(): undefined {
    return undefined;
  }

  laneTemp(): undefined {
    return undefined;
  }

  private state(sample: NodeSample): NodeState {
    let st = this.nodes.get(sample.node);
    if (!st) this.nodes.set(sample.node, (st = { counts: new CountTotals(this.settings.countFail), streak: null }));
    return st;
  }

  private interval(st: NodeState, d: IntervalDelta, at: DecisionPlace): EarlyStopDecision | null {
    const counted = st.counts.add(d, at);
    if (counted) return (this.first = counted);
    const ratio = tickLaneRatio(d.laneErrors);
    if (ratio === null || ratio.value < this.settings.laneRatioFail) {
      st.streak = null;
      return null;
    }
    st.streak = st.streak?.lane === ratio.lane ? { lane: ratio.lane, ticks: st.streak.ticks + 1 } : { lane: ratio.lane, ticks: 1 };
    if (st.streak.ticks < this.settings.ticks) return null;
    return (this.first = {
      rule: 'lane-ratio',
      ...at,
      lane: ratio.lane,
      value: ratio.value,
      message: `${at.node}: lane ${ratio.lane} at ${ratio.value.toFixed(0)}x or more the median of the other lanes (95% bound) for ${st.streak.ticks} ticks in a row (fail at ${this.settings.laneRatioFail}x or more)`,
    });
  }
}
