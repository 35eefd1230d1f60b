// How well the sampler kept its schedule: pure arithmetic over what it logged, no clock, no I/O.
import { quantile } from 'simple-statistics';
import type { SamplingStats } from '../domain/record.js';

// SamplingStats plus the sampler's own figures (extra fields are optional for other TickSources).
export interface SamplerStats extends SamplingStats {
  missedDeadlines: number; // fixed-rate deadlines skipped because the previous tick ran past them
  missingSamples: number; // node-ticks without a sample (transport failure)
  itemErrors: number; // error lines inside kept samples (parse or command failures)
  cpuPerTickMs: number | null; // controller CPU (user + system, whole process) per tick
  offsetsMs: Record<string, number>; // each node's clock minus the controller's, as estimated
}

// One node-tick as the sampler logs it.
export interface TickLogNode {
  node: string;
  tMs: number | null; // node clock; null when the sample or its time item is missing
  missing: string | null; // why there is no sample at all
}

// One tick as the sampler logs it (controller times).
export interface TickLog {
  tick: number;
  startMs: number;
  nodes: TickLogNode[];
}

// Percentile with simple-statistics' quantile: linear interpolation between ranks (numpy's default, R type 7).
export function percentile(values: number[], p: number): number | null {
  return values.length === 0 ? null : quantile(values, p);
}

// Controller time between consecutive tick starts.
export function intervalsOf(startsMs: number[]): number[] {
  return startsMs.slice(1).map((t, i) => t - startsMs[i]!);
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

// Cross-node skew of one tick: spread of the node-reported times once each node's clock offset is removed,
// i.e. how far apart in real time the nodes actually read their counters. Null with fewer than two readings.
export function tickSkew(nodes: TickLogNode[], offsets: ReadonlyMap<string, number>): number | null {
  const t: number[] = [];
  for (const n of nodes) {
    const off = offsets.get(n.node);
    if (n.tMs !== null && Number.isFinite(n.tMs) && off !== undefined) t.push(n.tMs - off);
  }
  return t.length < 2 ? null : Math.max(...t) - Math.min(...t);
}

// Runs of ticks without a sample, per node: from the first missing tick to the next tick that had one
// (or to the last missing tick when the node never came back). Seconds from originMs.
export function gapsOf(log: TickLog[], originMs: number): SamplingStats['gaps'] {
  const gaps: SamplingStats['gaps'] = [];
  const open = new Map<string, { fromMs: number; lastMs: number; reason: string }>();
  const s = (ms: number) => (ms - originMs) / 1000;
  for (const t of log) {
    for (const n of t.nodes) {
      const g = open.get(n.node);
      if (n.missing !== null) {
        if (g) g.lastMs = t.startMs;
        else open.set(n.node, { fromMs: t.startMs, lastMs: t.startMs, reason: n.missing });
      } else if (g) {
        gaps.push({ node: n.node, fromS: s(g.fromMs), toS: s(t.startMs), reason: g.reason });
        open.delete(n.node);
      }
    }
  }
  for (const [node, g] of open) gaps.push({ node, fromS: s(g.fromMs), toS: s(g.lastMs), reason: g.reason });
  return gaps;
}
