// The one place a receiver's samples become intervals (what changed between two readings of its counters), for every
// reader: the analysis and its watch (grading), the live run (its watch, lane rates and metrics, from one computation
// per sample), and timeseries.csv and the charts. Each reader says how it reads: the reset rule, which PCIe functions
// (receiverRail), and the lanes counted.
import type { NodeSample, RailSample } from '../domain/sample.js';
import { laneRatesOf, nextReading, receiverRail, type FunctionsRule, type Interval, type RailReading, type ResetRule } from './counters.js';

// The lanes an interval counts: `fixed` for the whole run (the analysis: what the node's first reading said), or
// `carried`: the link's lanes as last read, this fallback before any (the watch); null: every lane counter there is (up to 8).
export type LanesRule = { fixed: number | null } | { carried: number | null };

// How a reader takes intervals.
export interface IntervalRules {
  resets?: ResetRule;
  functions?: FunctionsRule;
  lanes?: LanesRule; // default { fixed: null }
}

// An interval as a reader receives it, with the lanes it counted.
export type TakenInterval = Interval & { lanesUsed: number | null };

// What one sample gave: its rail as read (undefined: the sample had no rail of the node), and its interval (null: the
// first reading, no time passed, or a counter went down under the 'drop' rule: then `reset`).
export interface SampleInterval {
  rail: RailSample | undefined;
  interval: TakenInterval | null;
  reset: boolean;
}

interface Receiver {
  netdev: string | undefined;
  lanes: LanesRule;
  prev: RailReading | null;
}

// One stream of intervals per receiver (node), its samples pushed in time order.
export class ReceiverIntervals {
  private readonly receivers = new Map<string, Receiver>();

  constructor(private readonly rules: IntervalRules = {}) {}

  // Announce a node's canonical netdev and lanes (else: its first sample's first rail, and the rules' lanes).
  node(node: string, netdev: string | undefined, lanes?: LanesRule): void {
    this.receivers.set(node, { netdev, lanes: lanes ?? this.rules.lanes ?? { fixed: null }, prev: null });
  }

  // The interval this sample closes.
  push(sample: NodeSample): SampleInterval {
    let r = this.receivers.get(sample.node);
    if (!r) this.receivers.set(sample.node, (r = { netdev: undefined, lanes: this.rules.lanes ?? { fixed: null }, prev: null }));
    r.netdev ??= sample.rails[0]?.netdev;
    const read = receiverRail(sample, r.netdev, this.rules.functions);
    if (!read) return { rail: undefined, interval: null, reset: false };
    // Carried lanes: this reading's, else the last one read (as carryForward holds them), else the fallback.
    const lanes = 'fixed' in r.lanes ? r.lanes.fixed : ((read.lanes !== undefined ? read.lanes : r.prev?.rail.lanes) ?? r.lanes.carried);
    const { reading, interval } = nextReading(r.prev, read, sample.tMs, lanes, this.rules.resets);
    r.prev = reading;
    if (interval === 'reset') return { rail: read, interval: null, reset: true };
    return { rail: read, interval: interval ? { ...interval, lanesUsed: lanes } : null, reset: interval?.d.reset === true };
  }
}

// What one receiver counted since its first reading (the live metrics' counters), added up from its intervals.
export interface CountedTotals {
  laneErrors: number[];
  correctedBits: number;
  crcErrors: number;
  postFecErrors: number;
  linkDownEvents: number;
}

// A receiver's totals at its first reading: zero on every lane it has a counter for.
function zeroTotals(rail: RailSample): CountedTotals {
  return { laneErrors: rail.phy.laneErrors.map(() => 0), correctedBits: 0, crcErrors: 0, postFecErrors: 0, linkDownEvents: 0 };
}

// Add one interval to a receiver's totals.
function addInterval(t: CountedTotals, iv: Interval): void {
  const d = iv.d;
  d.laneErrors.forEach((n, i) => (t.laneErrors[i] = (t.laneErrors[i] ?? 0) + n));
  t.correctedBits += d.correctedBits ?? 0;
  t.crcErrors += d.crcErrors;
  t.postFecErrors += d.postFecErrors;
  t.linkDownEvents += d.linkDownEvents;
}

// A live run's intervals, taken once per sample and kept as its figures: each node's lane rates over its last interval
// and what it counted since its first sample.
export class LiveIntervals {
  readonly laneRates = new Map<string, number[]>();
  readonly counted = new Map<string, CountedTotals>();
  private readonly intervals: ReceiverIntervals;

  constructor(rules: IntervalRules) {
    this.intervals = new ReceiverIntervals(rules);
  }

  // The sample's interval (null: none), the figures moved on by it.
  push(sample: NodeSample): TakenInterval | null {
    const { rail, interval } = this.intervals.push(sample);
    if (rail && !this.counted.has(sample.node)) this.counted.set(sample.node, zeroTotals(rail));
    if (interval) {
      this.laneRates.set(sample.node, laneRatesOf(interval));
      addInterval(this.counted.get(sample.node)!, interval);
    }
    return interval;
  }
}
