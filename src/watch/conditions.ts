// The qualification's rules over rolling windows, for one receiver in service: each interval of its counters (taken by
// src/analysis/intervals.ts, as a run takes them) moves the windows on, and the conditions that hold now come out:
// a lane's FEC margin held below a line (fec-window), one lane certainly worse than the others above the BER floors
// (lane-ratio, a FAIL only for a lane that grows with temperature), and CRC errors, post-FEC errors and link-down
// events counted over the last countWindowS. The math is src/analysis's (windows, Poisson bounds, the certain ratio,
// the lane-temperature bins); only what is watched and for how long is the service's.
import type { Grade } from '../domain/outcome.js';
import { sci } from '../domain/number-format.js';
import { FEC_LIMIT_BER, SERIAL_RATE_BPS, decadesBelowFecLimit, type IntervalDelta } from '../analysis/counters.js';
import { certainLaneRatio } from '../analysis/lane-ratio.js';
import { isGrowing, LaneTempBins } from '../analysis/lane-temp.js';
import { poissonLowerBound } from '../analysis/poisson.js';
import type { CountRule } from '../analysis/watch.js';
import { Held, WindowSum } from '../analysis/windows.js';
import type { ServiceSettings } from './settings.js';

export type WatchedRule = CountRule | 'fec-window' | 'lane-ratio';

// A condition that holds at one receiver now: MARGINAL or FAIL, its figure and the line it is beyond.
export interface Condition {
  rule: WatchedRule;
  grade: Exclude<Grade, 'PASS'>;
  lane: number | null;
  value: number;
  unit: string;
  limit: number;
  message: string;
}

const lower = (a: number, b: number) => a < b;
const COUNTS: readonly [CountRule, keyof IntervalDelta, string][] = [
  ['crc-errors', 'crcErrors', 'CRC errors'],
  ['post-fec-errors', 'postFecErrors', 'post-FEC errors'],
  ['link-down-events', 'linkDownEvents', 'link-down events'],
];
const fix = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Number(x.toPrecision(2)).toString());

// One receiver's windows; push its intervals in time order.
export class ReceiverConditions {
  private readonly temp = new LaneTempBins();
  private readonly fecWin: WindowSum;
  private readonly ratioWin: WindowSum;
  private readonly countWin: WindowSum;
  private fecHeld: Held[] = [];
  private readonly ratioLevel: Held;
  private readonly ratioValue: Held;
  private lanes = 0;
  // The last window figures, for status lines and metrics: each lane's BER over the FEC window, the worst margin.
  laneBer: number[] = [];
  marginDecades: number | null = null;

  constructor(
    readonly where: string, // "spark-b cage 1", for messages
    private readonly s: ServiceSettings,
  ) {
    this.fecWin = new WindowSum(s.fecWindow.windowS);
    this.ratioWin = new WindowSum(s.laneRatio.windowS);
    this.countWin = new WindowSum(s.countWindowS);
    this.ratioLevel = new Held(s.laneRatio.holdS, lower);
    this.ratioValue = new Held(s.laneRatio.holdS, lower);
  }

  // Forget the windows (the receiver's counters restarted without an interval, or its node was away): the next
  // intervals fill them again. The temperature bins and the rolling counts stay.
  restart(): void {
    this.fecWin.reset();
    this.ratioWin.reset();
    for (const h of this.fecHeld) h.reset();
    this.ratioLevel.reset();
    this.ratioValue.reset();
  }

  // One interval of dtS seconds ending at tMs, with the NIC temperature then (null: unread); the conditions holding now.
  push(tMs: number, dtS: number, d: IntervalDelta, tempC: number | null, laneCount: number | null): Condition[] {
    const out: Condition[] = [];
    this.countWin.add(
      tMs,
      dtS,
      COUNTS.map(([, k]) => d[k] as number),
    );
    COUNTS.forEach(([rule, , label], i) => {
      const n = this.countWin.counts[i]!;
      const fail = this.s.countFail[rule];
      if (n >= fail) {
        const span = fix(this.countWin.seconds / 60);
        out.push({
          rule,
          grade: 'FAIL',
          lane: null,
          value: n,
          unit: rule === 'link-down-events' ? 'events' : 'errors',
          limit: fail,
          message: `${this.where}: ${n} ${label} in the last ${span} min (fail at ${fail})`,
        });
      }
    });
    const counts = d.laneErrors;
    if (counts.length === 0) return out;
    if (counts.length !== this.lanes) {
      this.restart();
      this.lanes = counts.length;
    }
    if (tempC !== null) this.temp.add(tempC, dtS, counts);
    const laneBits = SERIAL_RATE_BPS / (laneCount ?? counts.length);
    this.fecWindow(tMs, dtS, counts, laneBits, out);
    this.laneRatio(tMs, dtS, counts, laneBits, out);
    return out;
  }

  private fecWindow(tMs: number, dtS: number, counts: readonly number[], laneBits: number, out: Condition[]): void {
    const fw = this.s.fecWindow;
    this.fecWin.add(tMs, dtS, counts);
    if (!this.fecWin.full) return;
    const bits = this.fecWin.seconds * laneBits;
    this.laneBer = this.fecWin.counts.map((k) => k / bits);
    let worst = Infinity;
    for (let i = 0; i < counts.length; i++) {
      const k = this.fecWin.counts[i]!;
      const berLb = k > 0 ? poissonLowerBound(k) / bits : 0;
      worst = Math.min(worst, decadesBelowFecLimit(k / bits));
      const held = (this.fecHeld[i] ??= new Held(fw.holdS, lower)).push(tMs, decadesBelowFecLimit(berLb));
      if (held === undefined) continue;
      const grade = held < fw.fail ? 'FAIL' : fw.marginal !== undefined && held < fw.marginal ? 'MARGINAL' : null;
      if (!grade) continue;
      const line = grade === 'FAIL' ? fw.fail : fw.marginal!;
      out.push({
        rule: 'fec-window',
        grade,
        lane: i,
        value: held,
        unit: 'decades',
        limit: line,
        message: `${this.where} lane ${i}: pre-FEC BER at least ${sci(FEC_LIMIT_BER / 10 ** held)} (95% lower bound) in every ${fw.windowS}-s window for ${fw.holdS} s: ${fix(held)} decades of FEC margin, under ${line}`,
      });
    }
    this.marginDecades = worst;
  }

  private laneRatio(tMs: number, dtS: number, counts: readonly number[], laneBits: number, out: Condition[]): void {
    const lr = this.s.laneRatio;
    if (counts.length < 2) return;
    this.ratioWin.add(tMs, dtS, counts);
    if (!this.ratioWin.full) return;
    const win = this.ratioWin;
    const r = certainLaneRatio(win.counts);
    let level = 0;
    let berLb = 0;
    let growth: ReturnType<LaneTempBins['growth']> = null;
    if (r) {
      berLb = poissonLowerBound(win.counts[r.lane]!) / (win.seconds * laneBits);
      if (r.value >= (lr.marginal ?? Infinity) && berLb >= lr.marginalFloorBer) level = 1;
      if (r.value >= lr.fail && berLb >= lr.failFloorBer) {
        // A steady lane is MARGINAL at most, as in a qualification: the ratio fails only a lane that grows with heat.
        growth = this.temp.growth(counts.length, lr.minSpanC);
        const g = growth?.[r.lane];
        level = g && isGrowing(g, lr.growingDecades) ? 2 : 1;
      }
    }
    const heldLevel = this.ratioLevel.push(tMs, level);
    const heldRatio = this.ratioValue.push(tMs, r?.value ?? 0);
    if (heldLevel === undefined || heldRatio === undefined || !r || heldLevel === 0) return;
    const grade = heldLevel === 2 ? 'FAIL' : 'MARGINAL';
    const line = grade === 'FAIL' ? lr.fail : lr.marginal!;
    const g = growth?.[r.lane];
    const heat = g ? `; it grew ${fix(g.growthDecades)} decades from ${fix(g.coolC[0])}-${fix(g.coolC[1])} °C to ${fix(g.hotC[0])}-${fix(g.hotC[1])} °C` : '';
    out.push({
      rule: 'lane-ratio',
      grade,
      lane: r.lane,
      value: heldRatio,
      unit: 'x',
      limit: line,
      message: `${this.where} lane ${r.lane}: ${r.againstZero ? 'at least ' : ''}${fix(heldRatio)}x the median of the other lanes (95% bounds) with a BER of at least ${sci(berLb)}, for ${lr.holdS} s in ${lr.windowS}-s windows (${grade} at ${line}x${grade === 'FAIL' ? ', growing with temperature' : ''})${heat}`,
    });
  }
}
