// Counter deltas between two readings of one netdev: hardware counters only grow, so a decrease is a reset.
import { PHY_COUNTERS, phyIsEmpty, type NodeSample, type PhyCounters, type RailSample } from '../domain/sample.js';
import type { U64 } from '../domain/u64.js';
import { poissonLowerBound, poissonUpperBound, type BoundMethod } from './poisson.js';

// 200GBASE-CR4 serial rate (4 x 53.125 Gb/s); rx_bits_phy is not exposed on DGX OS kernels, so time x rate is the denominator.
export const SERIAL_RATE_BPS = 212.5e9;
// Pre-FEC BER that RS(544,514) "KP4" is designed to correct (docs/formats.md §11).
export const FEC_LIMIT_BER = 2.4e-4;

// A BER's distance below the RS-FEC design input in decades (Infinity for zero: no errors, no measurable closeness).
export function decadesBelowFecLimit(ber: number): number {
  return ber > 0 ? Math.log10(FEC_LIMIT_BER / ber) : Infinity;
}

// The 95% bounds of a bit error rate from a count over `bits` bits.
export function berBounds(errors: number, bits: number, method: BoundMethod = 'fast'): { ber: number; lb95: number; ub95: number } {
  return { ber: errors / bits, lb95: poissonLowerBound(errors, 0.95, method) / bits, ub95: poissonUpperBound(errors, 0.95, method) / bits };
}

// *_phy counters of one cage are one physical port seen twice: read the first rail only (docs/formats.md §0).
export function canonicalRail(sample: NodeSample, netdev?: string): RailSample | undefined {
  return netdev === undefined ? sample.rails[0] : sample.rails.find((r) => r.netdev === netdev);
}

// Which PCIe function's *_phy counters a receiver's reading takes. 'first' (rules versions 1 to 3): the canonical
// netdev's alone. 'larger' (version 4 on): each counter the larger of what the cage's functions read in the same tick,
// since whether both report the one physical port's counters is documented nowhere (docs/formats.md §0).
export type FunctionsRule = 'first' | 'larger';

// The larger of two readings of each counter (a counter one of them lacks is the other's).
function largerPhy(a: PhyCounters, b: PhyCounters): PhyCounters {
  const out: PhyCounters = { laneErrors: [] };
  for (const [field] of PHY_COUNTERS) {
    const [x, y] = [a[field], b[field]];
    const v = x === undefined ? y : y === undefined || x >= y ? x : y;
    if (v !== undefined) out[field] = v;
  }
  for (let i = 0; i < Math.max(a.laneErrors.length, b.laneErrors.length); i++) {
    const [x, y] = [a.laneErrors[i], b.laneErrors[i]];
    out.laneErrors.push(x === undefined ? y! : y === undefined || x >= y ? x : y);
  }
  return out;
}

// A receiver's rail as the rule reads it: the canonical rail (its link and FEC readings), with the larger counters of
// every function of the sample under 'larger'.
export function receiverRail(sample: NodeSample, netdev: string | undefined, rule: FunctionsRule = 'first'): RailSample | undefined {
  const first = canonicalRail(sample, netdev);
  if (rule === 'first' || !first || sample.rails.length < 2) return first;
  let phy = first.phy;
  for (const r of sample.rails) if (r !== first && r.phy !== phy && !phyIsEmpty(r.phy)) phy = phyIsEmpty(phy) ? r.phy : largerPhy(phy, r.phy);
  return phy === first.phy ? first : { ...first, phy };
}

// How a counter that went down is read. 'drop' (rules versions 1 and 2): the interval is left out and the new value
// becomes the baseline, so what was counted between the reset and the reading is lost. 'from-zero' (version 3 on): the
// counter was cleared without a reboot (mlxlink --pc, a driver reset) and counted up from zero since, so its value is
// the interval's count (only what happened between the last reading and the clearing itself cannot be read). A
// counter of the same interval that did not go down counts as usual: nothing is ever counted twice.
export type ResetRule = 'drop' | 'from-zero';

// One counter's change; `reset` when it went down (mlxlink --pc, driver reload), read as the reset rule says.
export function counterDelta(prev: U64 | undefined, cur: U64 | undefined, resets: ResetRule = 'drop'): { delta: number; reset: boolean } | null {
  if (prev === undefined || cur === undefined) return null;
  if (cur < prev) return { delta: resets === 'from-zero' ? Number(cur) : 0, reset: true };
  return { delta: Number(cur - prev), reset: false };
}

// Link state and FEC are read only every few ticks: an unread value is the last one read, so each delta spans the
// whole stretch between two readings (nothing is lost) and a link that stays down is seen going down only once.
export function carryForward(prev: RailSample | undefined, cur: RailSample, resets: ResetRule = 'drop'): RailSample {
  if (!prev) return cur;
  const out: RailSample = { ...cur };
  if (cur.linkUp === undefined && prev.linkUp !== undefined) out.linkUp = prev.linkUp;
  if (cur.speedMbps === undefined && prev.speedMbps !== undefined) out.speedMbps = prev.speedMbps;
  if (cur.lanes === undefined && prev.lanes !== undefined) out.lanes = prev.lanes;
  if (cur.fec === undefined && prev.fec !== undefined) out.fec = prev.fec;
  // A tick whose `ethtool -S` failed has no counters at all: holding the last ones makes its interval zero and the
  // next good read's interval carry the whole change, so no error between the two is lost.
  if (phyIsEmpty(cur.phy) && !phyIsEmpty(prev.phy)) out.phy = prev.phy;
  // link_down_events_phy moved on a tick that did not read the link: it went down since the last reading, and the
  // counter has counted it, so the next reading of "down" must not count it again.
  if (cur.linkUp === undefined && (counterDelta(prev.phy.linkDownEvents, cur.phy.linkDownEvents, resets)?.delta ?? 0) > 0) {
    out.linkUp = false;
  }
  return out;
}

// What happened on one receiver between two ticks.
export interface IntervalDelta {
  laneErrors: number[]; // pre-FEC raw errors per lane (rx_err_lane_N_phy); empty when the NIC lacks the counters
  correctedBits: number | null;
  postFecErrors: number; // rx_pcs_symbol_err_phy + FEC uncorrectable blocks
  crcErrors: number;
  symbolErrors: number;
  linkDownEvents: number;
  // Successful PHY recoveries (total_success_recovery_phy), only when both readings have the counter (a kernel before
  // the 2025-03 mlx5 patch has none). It never makes the interval a reset: versions before 5 did not read it, and a
  // journal's other counters grade as they did.
  recoveries?: number;
  reset?: boolean; // a counter used went down in this interval and was counted from zero ('from-zero' only)
}

// The delta of one interval, never a negative count. When a counter used went down: 'reset' under the 'drop' rule (the
// interval is left out), or the delta with `reset` set under 'from-zero'.
export function intervalDelta(prev: RailSample, cur: RailSample, lanes: number | null, resets: ResetRule = 'drop'): IntervalDelta | 'reset' {
  let reset = false;
  const d = (a: U64 | undefined, b: U64 | undefined): number => {
    const r = counterDelta(a, b, resets);
    if (r?.reset) reset = true;
    return r?.delta ?? 0;
  };
  const [p, c] = [prev.phy, cur.phy];
  const laneErrors: number[] = [];
  const n = Math.min(lanes ?? 8, p.laneErrors.length, c.laneErrors.length);
  for (let i = 0; i < n; i++) laneErrors.push(d(p.laneErrors[i], c.laneErrors[i]));
  let correctedBits: number | null = null;
  if (c.correctedBits !== undefined && p.correctedBits !== undefined) correctedBits = d(p.correctedBits, c.correctedBits);
  else if (cur.fec?.correctedBits !== undefined && prev.fec?.correctedBits !== undefined) correctedBits = d(prev.fec.correctedBits, cur.fec.correctedBits);
  const postFecErrors = d(p.pcsSymbolErrors, c.pcsSymbolErrors) + d(prev.fec?.uncorrectableBlocks, cur.fec?.uncorrectableBlocks);
  const crcErrors = d(p.crcErrors, c.crcErrors);
  const symbolErrors = d(p.symbolErrors, c.symbolErrors);
  // A link seen going down counts even if link_down_events_phy did not move (or is missing).
  const seenDown = prev.linkUp !== false && cur.linkUp === false ? 1 : 0;
  const linkDownEvents = Math.max(d(p.linkDownEvents, c.linkDownEvents), seenDown);
  if (reset && resets === 'drop') return 'reset';
  const rec = counterDelta(p.recoveries, c.recoveries, resets);
  return {
    laneErrors,
    correctedBits,
    postFecErrors,
    crcErrors,
    symbolErrors,
    linkDownEvents,
    ...(rec ? { recoveries: rec.delta } : {}),
    ...(reset ? { reset } : {}),
  };
}

// One receiver's reading: its canonical rail (with carryForward's held values) at the node's time.
export interface RailReading {
  rail: RailSample;
  tMs: number;
}

// One interval between two readings of one receiver: what changed over dtS seconds of node time.
export interface Interval {
  prev: RailSample;
  rail: RailSample;
  d: IntervalDelta;
  dtS: number;
}

// The one way a receiver's readings become intervals (the analysis, the early-stop watch, live lane rates, live metrics,
// timeseries.csv and the charts): the new reading with carryForward's held values; the interval since the previous
// reading, where a counter used went backwards read by the reset rule ('reset' under 'drop': the interval is dropped
// and the new values are the baseline; counted from zero under 'from-zero'; never a negative count), or null for the
// first reading or when no node time passed.
export function nextReading(
  prev: RailReading | null,
  read: RailSample,
  tMs: number,
  lanes: number | null,
  resets: ResetRule = 'drop',
): { reading: RailReading; interval: Interval | 'reset' | null } {
  const rail = carryForward(prev?.rail, read, resets);
  const reading = { rail, tMs };
  if (!prev) return { reading, interval: null };
  const dtS = (tMs - prev.tMs) / 1000;
  const d = dtS > 0 ? intervalDelta(prev.rail, rail, lanes, resets) : null;
  return { reading, interval: d === 'reset' ? 'reset' : d ? { prev: prev.rail, rail, d, dtS } : null };
}

// Pre-FEC errors per second per lane over one interval (rx_err_lane_N_phy delta / node-time span).
export function laneRatesOf(i: Interval): number[] {
  return i.d.laneErrors.map((n) => n / i.dtS);
}
