// How well sampling kept its schedule: pure arithmetic over what each tick logged, no clock, no I/O. The run's loop
// (its record's `sampling`) and the benchmark (BENCHMARKS.md) take their figures from the same TickFigures.
import { quantile } from 'simple-statistics';

// One node-tick as the figures see it.
export interface TickNode {
  node: string;
  tMs: number | null; // node clock; null when the sample or its time item is missing
  missing: boolean; // no sample at all (transport failure)
  itemErrors: number; // error lines inside a kept sample (parse or command failures)
}

// One tick: controller times around it and every node's part.
export interface TickTimes {
  startMs: number;
  endMs: number;
  nodes: TickNode[];
}

// Percentile with simple-statistics' quantile: linear interpolation between ranks (numpy's default, R type 7).
function percentile(values: number[], p: number): number | null {
  return values.length === 0 ? null : quantile(values, p);
}

// One calibration round trip: controller send/receive times around the node's reading of its own clock.
export interface OffsetRound {
  sentMs: number;
  nodeMs: number;
  receivedMs: number;
}

// NTP's method: the node read its clock around the middle of the round trip, so offset = node − midpoint;
// of several rounds the one with the shortest round trip bounds the error best (± rtt/2).
export function estimateOffset(rounds: OffsetRound[]): { offsetMs: number; rttMs: number } | null {
  let best: { offsetMs: number; rttMs: number } | null = null;
  for (const r of rounds) {
    if (!Number.isFinite(r.nodeMs)) continue;
    const rttMs = r.receivedMs - r.sentMs;
    if (best === null || rttMs < best.rttMs) best = { offsetMs: r.nodeMs - (r.sentMs + r.receivedMs) / 2, rttMs };
  }
  return best;
}

// Cross-node skew of one tick: spread of the node-reported times once each node's clock offset is removed, i.e. how
// far apart in real time the nodes read their counters. Without offsets (`null`) it is the raw spread of the node
// clocks, which also holds their offsets. Null with fewer than two readings (a node without an offset is left out).
function tickSkew(nodes: readonly TickNode[], offsets: ReadonlyMap<string, number> | null): number | null {
  const t: number[] = [];
  for (const n of nodes) {
    const off = offsets === null ? 0 : offsets.get(n.node);
    if (n.tMs !== null && Number.isFinite(n.tMs) && off !== undefined) t.push(n.tMs - off);
  }
  return t.length < 2 ? null : Math.max(...t) - Math.min(...t);
}

// The figures of a stretch of sampling (controller clock, milliseconds).
export interface TickFiguresSummary {
  ticks: number;
  intervalP50Ms: number | null; // between consecutive tick starts
  intervalP99Ms: number | null;
  skewP99Ms: number | null; // node times with the calibrated clock offsets removed (see tickSkew)
  rawSkewP99Ms: number | null; // node times as read: includes the nodes' clock offsets
  tickDurationP50Ms: number | null;
  tickDurationP99Ms: number | null;
  missingSamples: number; // node-ticks without a sample
  itemErrors: number;
}

// Figures fed one tick at a time. Skew method: each node's offset (node clock − controller clock) is estimated from
// lone `date` round trips (estimateOffset; wrong by half the path asymmetry, at most RTT/2); per tick, skew = max −
// min over nodes of (node time − offset): how far apart in real time the nodes read their clocks (the first item of
// the tick, just before the counters). Offsets are the ones known at that tick.
export class TickFigures {
  private readonly starts: number[] = [];
  private readonly durations: number[] = [];
  private readonly skews: number[] = [];
  private readonly rawSkews: number[] = [];
  private missingSamples = 0;
  private itemErrors = 0;

  add(t: TickTimes, offsets: ReadonlyMap<string, number>): void {
    this.starts.push(t.startMs);
    this.durations.push(t.endMs - t.startMs);
    const skew = tickSkew(t.nodes, offsets);
    if (skew !== null) this.skews.push(skew);
    const raw = tickSkew(t.nodes, null);
    if (raw !== null) this.rawSkews.push(raw);
    for (const n of t.nodes) {
      if (n.missing) this.missingSamples++;
      this.itemErrors += n.itemErrors;
    }
  }

  summary(): TickFiguresSummary {
    const intervals = this.starts.slice(1).map((t, i) => t - this.starts[i]!);
    return {
      ticks: this.starts.length,
      intervalP50Ms: percentile(intervals, 0.5),
      intervalP99Ms: percentile(intervals, 0.99),
      skewP99Ms: percentile(this.skews, 0.99),
      rawSkewP99Ms: percentile(this.rawSkews, 0.99),
      tickDurationP50Ms: percentile(this.durations, 0.5),
      tickDurationP99Ms: percentile(this.durations, 0.99),
      missingSamples: this.missingSamples,
      itemErrors: this.itemErrors,
    };
  }
}
