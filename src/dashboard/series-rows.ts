// One receiver's chart rows for the run page, kept as the journal is read: each interval becomes its row once (its
// lanes' BER, the NIC temperature, the running 95% upper bound of the worst lane over the headline phase), so that a
// request for the series only downsamples rows already made (bucketRows, one light pass), and a journal of a day's
// run never has its points measured again at each request: 85,760 points per receiver took 2.3 s of one event-loop
// turn per request before (the #32 report has the figures).
import { SERIAL_RATE_BPS, berBounds } from '../analysis/counters.js';
import { certainLaneRatio } from '../analysis/lane-ratio.js';
import type { LanePoint } from '../run/journal-series.js';

// A lane is the outlier when, over the last OUTLIER_WINDOW_S, its certain ratio to the others reaches the lane-ratio
// rule's MARGINAL line (the same counts-based ratio the rule grades: worst lane's lower bound over the others' median
// upper bound).
const OUTLIER_WINDOW_S = 60;

export class ReceiverRows {
  readonly rows: { tS: number; values: (number | null)[] }[] = [];
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
    this.rows.push({ tS: p.tS, values });
    const counts = new Array<number>(lanes).fill(0);
    p.laneRates.forEach((r, k) => {
      if (k < lanes) counts[k] = Math.round(r * (p.dtS ?? 0));
    });
    this.recent.push({ tS: p.tS, counts });
    let drop = 0;
    while (drop < this.recent.length && this.recent[drop]!.tS <= p.tS - OUTLIER_WINDOW_S) drop++;
    if (drop > 0) this.recent.splice(0, drop);
  }

  // The per-lane bound at the last reading (the certificate's "each below ...").
  soakBound(): { lane: number; errors: number; seconds: number; ub95: number }[] {
    return this.seconds > 0
      ? this.errors.map((e, lane) => ({ lane, errors: e, seconds: this.seconds, ub95: berBounds(e, this.seconds * this.laneRateBps).ub95 }))
      : [];
  }

  // The lane far above the others over the receiver's last OUTLIER_WINDOW_S (errors counted from the intervals).
  outlier(ratioMarginal: number): { lane: number; ratio: number; windowS: number; againstZero: boolean } | null {
    const end = this.rows.length ? this.rows[this.rows.length - 1]!.tS : 0;
    const counts = new Array<number>(Math.max(0, this.lanes)).fill(0);
    for (let i = this.recent.length - 1; i >= 0 && this.recent[i]!.tS > end - OUTLIER_WINDOW_S; i--)
      this.recent[i]!.counts.forEach((c, k) => (counts[k]! += c));
    const ratio = certainLaneRatio(counts);
    return ratio && ratio.value >= ratioMarginal ? { lane: ratio.lane, ratio: ratio.value, windowS: OUTLIER_WINDOW_S, againstZero: ratio.againstZero } : null;
  }
}
