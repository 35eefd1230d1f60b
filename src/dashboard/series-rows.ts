// One receiver's chart rows for the run page, kept as the journal is read: each interval becomes its row once (its
// lanes' BER, the NIC temperature, the running 95% upper bound of the worst lane over the headline phase), so that a
// request for the series only downsamples rows already made (bucketRows), and a journal of a day's run never has its
// points measured again at each request: 85,760 points per receiver took 2.3 s of one event-loop turn per request
// before (the #32 report has the figures). Beyond MAX_ROWS rows, rows of the same time bucket are merged as they come
// (each column's maximum, at the bucket's first time, as bucketRows does), the bucket doubling in width whenever they
// would exceed MAX_ROWS again: a request downsamples at most MAX_ROWS + 1 rows however long the run, and the rows
// held are bounded too. A run of up to MAX_ROWS intervals per receiver (2.2 h at 1 Hz) is downsampled from its rows
// as they are.
import { SERIAL_RATE_BPS, berBounds } from '../analysis/counters.js';
import { certainLaneRatio } from '../analysis/lane-ratio.js';
import type { LanePoint } from '../run/journal-series.js';

// A lane is the outlier when, over the last OUTLIER_WINDOW_S, its certain ratio to the others reaches the lane-ratio
// rule's MARGINAL line (the same counts-based ratio the rule grades: worst lane's lower bound over the others' median
// upper bound).
const OUTLIER_WINDOW_S = 60;

// The rows held per receiver before they are merged: four times the points a series is served at (MAX_POINTS).
/** @internal */
export const MAX_ROWS = 8000;

type Row = { tS: number; values: (number | null)[] };

// Each column's maximum into `acc` (null where neither has a value), as bucketRows keeps a bucket's maximum.
function mergeInto(acc: (number | null)[], values: (number | null)[]): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v !== null && (acc[i] === null || v > acc[i]!)) acc[i] = v;
  }
}

export class ReceiverRows {
  // The rows before the last (merged into buckets of bucketS seconds once there were more than MAX_ROWS), and the
  // last reading's row as it is.
  private readonly held: Row[] = [];
  private lastRow: Row | null = null;
  private bucketS = 0; // 0: rows as they are
  rawRows = 0; // intervals read
  lanes = -1; // fixed by the first interval: the node's lane count (node-info), else that interval's
  laneRateBps = SERIAL_RATE_BPS;
  // The headline phase's errors per lane and seconds so far.
  errors: number[] = [];
  seconds = 0;
  // Each interval's errors per lane over the last OUTLIER_WINDOW_S (oldest first).
  private readonly recent: { tS: number; counts: number[] }[] = [];

  constructor(
    readonly node: string,
    private readonly headlinePhase: string,
  ) {}

  add(p: LanePoint, lanesKnown: number | null): void {
    if (this.lanes < 0) {
      this.lanes = lanesKnown ?? p.laneRates.length;
      this.laneRateBps = this.lanes > 0 ? SERIAL_RATE_BPS / this.lanes : SERIAL_RATE_BPS;
      this.errors = new Array<number>(this.lanes).fill(0);
    }
    const lanes = this.lanes;
    let bound: number | null = null;
    if (p.phase === this.headlinePhase && p.dtS !== undefined) {
      this.seconds += p.dtS;
      p.laneRates.forEach((r, i) => {
        if (i < lanes) this.errors[i]! += Math.round(r * p.dtS!);
      });
      bound = lanes > 0 ? Math.max(...this.errors.map((e) => berBounds(e, this.seconds * this.laneRateBps).ub95)) : -Infinity;
    }
    const values: (number | null)[] = new Array<number | null>(lanes + 2);
    for (let i = 0; i < lanes; i++) values[i] = (p.laneRates[i] ?? 0) / this.laneRateBps;
    values[lanes] = p.nicTempC;
    values[lanes + 1] = bound;
    if (this.lastRow) this.hold(this.lastRow);
    this.lastRow = { tS: p.tS, values };
    this.rawRows++;
    const counts = new Array<number>(lanes).fill(0);
    p.laneRates.forEach((r, k) => {
      if (k < lanes) counts[k] = Math.round(r * (p.dtS ?? 0));
    });
    this.recent.push({ tS: p.tS, counts });
    let drop = 0;
    while (drop < this.recent.length && this.recent[drop]!.tS <= p.tS - OUTLIER_WINDOW_S) drop++;
    if (drop > 0) this.recent.splice(0, drop);
  }

  // The rows to downsample: at most MAX_ROWS + 1, the last as it was read.
  rows(): Row[] {
    return this.lastRow ? [...this.held, this.lastRow] : [...this.held];
  }

  // A row before the last: kept as it is, or merged into its time bucket.
  private hold(r: Row): void {
    const top = this.held[this.held.length - 1];
    if (this.bucketS > 0 && top && Math.floor(top.tS / this.bucketS) === Math.floor(r.tS / this.bucketS)) return mergeInto(top.values, r.values);
    this.held.push({ tS: r.tS, values: this.bucketS > 0 ? r.values.slice() : r.values });
    if (this.held.length <= MAX_ROWS) return;
    // Too many: buckets of twice the width (the first ones as wide as the run so far spread over MAX_ROWS / 2).
    this.bucketS = this.bucketS > 0 ? this.bucketS * 2 : Math.max(r.tS, 1) / (MAX_ROWS / 2);
    const merged: Row[] = [];
    for (const h of this.held) {
      const last = merged[merged.length - 1];
      if (last && Math.floor(last.tS / this.bucketS) === Math.floor(h.tS / this.bucketS)) mergeInto(last.values, h.values);
      else merged.push({ tS: h.tS, values: h.values.slice() });
    }
    this.held.splice(0, this.held.length, ...merged);
  }

  // The per-lane bound at the last reading (the certificate's "each below ...").
  soakBound(): { lane: number; errors: number; seconds: number; ub95: number }[] {
    return this.seconds > 0
      ? this.errors.map((e, lane) => ({ lane, errors: e, seconds: this.seconds, ub95: berBounds(e, this.seconds * this.laneRateBps).ub95 }))
      : [];
  }

  // The lane far above the others over the receiver's last OUTLIER_WINDOW_S (errors counted from the intervals).
  outlier(ratioMarginal: number): { lane: number; ratio: number; windowS: number; againstZero: boolean } | null {
    const end = this.lastRow?.tS ?? 0;
    const counts = new Array<number>(Math.max(0, this.lanes)).fill(0);
    for (let i = this.recent.length - 1; i >= 0 && this.recent[i]!.tS > end - OUTLIER_WINDOW_S; i--)
      this.recent[i]!.counts.forEach((c, k) => (counts[k]! += c));
    const ratio = certainLaneRatio(counts);
    return ratio && ratio.value >= ratioMarginal ? { lane: ratio.lane, ratio: ratio.value, windowS: OUTLIER_WINDOW_S, againstZero: ratio.againstZero } : null;
  }
}
