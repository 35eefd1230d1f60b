// What every early-stop watch shares: the FAIL that stops a run, the count rules that FAIL at once (link down, CRC,
// post-FEC errors), and the interface the analysis feeds. Two watches implement it: the held sliding windows of rules
// version 2 on (early-stop.ts) and the per-tick lane-ratio streak of version 1 (tick-watch.ts).
import type { LaneTempStats, WindowStats } from '../domain/record.js';
import type { NodeSample } from '../domain/sample.js';
import type { Interval, IntervalDelta } from './counters.js';

export type CountRule = 'link-down-events' | 'crc-errors' | 'post-fec-errors';
export const COUNT_RULES: readonly CountRule[] = ['link-down-events', 'crc-errors', 'post-fec-errors'];

// The first certain FAIL, where and when.
export interface EarlyStopDecision {
  rule: CountRule | 'fec-window' | 'lane-ratio';
  node: string;
  phase: string;
  lane?: number;
  tick: number;
  tMs: number;
  tS: number;
  value: number;
  message: string;
}

// Where a watch stands at one sample: node, phase, tick and time.
export type DecisionPlace = Pick<EarlyStopDecision, 'node' | 'phase' | 'tick' | 'tMs' | 'tS'>;

// A watch the analysis (or the live run) feeds one sample at a time, in order per node.
export interface RunWatch {
  readonly decision: EarlyStopDecision | null;
  // The interval the caller already took of this sample (null: none), over `lanesUsed` lanes.
  pushInterval(phase: string, sample: NodeSample, tS: number, iv: (Interval & { lanesUsed: number | null }) | null): EarlyStopDecision | null;
  // Read the sample's canonical rail and take its interval itself (the live run).
  push(phase: string, sample: NodeSample, tS: number): EarlyStopDecision | null;
  windows(): WindowStats[] | undefined; // undefined: this watch keeps none (the record has no such field)
  laneTemp(): LaneTempStats[] | undefined;
}

// Running totals of the count rules of one receiver: the decision once a total reaches its FAIL line.
export class CountTotals {
  private readonly totals: Record<CountRule, number> = { 'link-down-events': 0, 'crc-errors': 0, 'post-fec-errors': 0 };

  constructor(private readonly countFail: Readonly<Record<CountRule, number>>) {}

  // Add one interval; the first count rule (in COUNT_RULES order) at or beyond its line decides.
  add(d: IntervalDelta, at: DecisionPlace): EarlyStopDecision | null {
    this.totals['link-down-events'] += d.linkDownEvents;
    this.totals['crc-errors'] += d.crcErrors;
    this.totals['post-fec-errors'] += d.postFecErrors;
    for (const rule of COUNT_RULES) {
      const v = this.totals[rule];
      const fail = this.countFail[rule];
      if (v >= fail) return { rule, ...at, value: v, message: `${at.node}: ${v} ${rule.replace(/-/g, ' ')} (fail at ${fail} or more)` };
    }
    return null;
  }
}
