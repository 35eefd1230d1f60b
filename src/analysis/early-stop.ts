// Streaming watch over each receiver, one tick at a time: the certain FAILs that stop a run early (link down, CRC,
// post-FEC errors, a FEC window or a lane ratio held beyond its FAIL line), and the worst sustained windows and lane
// growth with temperature that the record keeps. The live run and `cablequal grade` feed it the same samples.
import type { Grade } from '../domain/outcome.js';
import type { LaneGrowth, LaneTempStats, WindowStats } from '../domain/record.js';
import type { NodeSample } from '../domain/sample.js';
import {
  FEC_LIMIT_BER,
  SERIAL_RATE_BPS,
  decadesBelowFecLimit,
  intervalDelta,
  type Interval,
  type IntervalDelta,
  type FunctionsRule,
  type ResetRule,
} from './counters.js';
import { certainLaneRatio } from './lane-ratio.js';
import { ReceiverIntervals } from './intervals.js';
import { isGrowing, isRunaway, LaneTempBins, othersGrowth } from './lane-temp.js';
import { poissonLowerBound } from './poisson.js';
import { CountTotals, type CountRule, type DecisionPlace, type EarlyStopDecision, type RunWatch } from './watch.js';
import { Held, WindowSum } from './windows.js';
import { sci } from '../domain/number-format.js';

// The FEC margin of a sliding window, from its BER 95% lower bound, held for holdS: FAIL below `fail` decades is certain.
export interface FecWindowSettings {
  fail: number;
  marginal?: number;
  windowS: number;
  holdS: number;
}

// The certain lane ratio of a sliding window, counted only where the worst lane is above a floor, held for holdS;
// a FAIL also needs the lane to grow with temperature (a steady lane is MARGINAL at most).
export interface LaneRatioSettings {
  fail: number;
  marginal?: number;
  marginalFloorBer: number;
  failFloorBer: number;
  growingDecades: number;
  runawayDecades: number;
  minSpanC: number;
  windowS: number;
  holdS: number;
}

// Everything the watch needs of the protocol (built from its limits by src/rules/watch-config.ts).
export interface WatchSettings {
  countFail: Record<CountRule, number>; // FAIL when the total reaches this
  fecWindow: FecWindowSettings | null;
  laneRatio: LaneRatioSettings | null;
  gradedPhases: ReadonlySet<string> | null; // where windows and temperature growth are taken; null: every phase
  lanes?: number; // lanes in use when a sample does not say
  resets?: ResetRule; // how an interval whose counters went down is read (the analysis variant's; 'drop' when absent)
  functions?: FunctionsRule; // which PCIe function's counters a reading takes (the analysis variant's; 'first' when absent)
}

const GRADE_RANK: Record<Grade, number> = { PASS: 0, MARGINAL: 1, FAIL: 2 };

interface WorstWindow {
  value: number; // held value: decades (fec-window) or x (lane-ratio)
  grade: Grade;
  phase: string;
  atS: number;
  lane: number | null;
  berLb95: number;
  windowErrors: number;
  windowSeconds: number;
  againstZero?: boolean;
}

// The lane-ratio condition of one tick: 0 PASS, 1 MARGINAL, 2 FAIL, with the ratio and the worst lane's BER lower bound,
// each held on its own so that what is printed held for the whole hold.
interface RatioHeld {
  level: Held;
  ratio: Held;
  berLb: Held;
}

interface NodeWatch {
  tempC: number | null;
  counts: CountTotals;
  temp: LaneTempBins;
  laneCount: number; // lanes seen in the counts (0 before the first interval)
  fecWin: WindowSum | null;
  ratioWin: WindowSum | null;
  fecHeld: Held[];
  ratioHeld: RatioHeld | null;
  worstFec: (WorstWindow | null)[];
  worstRatio: WorstWindow | null;
}

// One watch per run (live) or per re-grade: feed it every sample as it arrives, in order per node.
export class EarlyStopDetector implements RunWatch {
  private readonly nodes = new Map<string, NodeWatch>();
  private first: EarlyStopDecision | null = null;

  // Its own intervals, for a caller that feeds samples alone (push): lanes as the link last said, else the settings'.
  private readonly intervals: ReceiverIntervals;

  constructor(readonly settings: WatchSettings) {
    this.intervals = new ReceiverIntervals({ resets: settings.resets, functions: settings.functions, lanes: { carried: settings.lanes ?? null } });
  }

  // The first certain FAIL seen so far (sticky).
  get decision(): EarlyStopDecision | null {
    return this.first;
  }

  // Feed one tick of one node (tS: seconds since the run started, for the record); returns the decision once it is certain.
  push(phase: string, sample: NodeSample, tS: number): EarlyStopDecision | null {
    return this.pushInterval(phase, sample, tS, this.intervals.push(sample).interval);
  }

  // The same for a caller that already took the interval of this sample (the analysis, which reads the same rail the
  // same way): `iv` is its delta over `lanesUsed` lanes, or null when the sample gave no interval.
  pushInterval(phase: string, sample: NodeSample, tS: number, iv: (Interval & { lanesUsed: number | null }) | null): EarlyStopDecision | null {
    const st = this.watch(sample);
    if (sample.nicTempC !== null) st.tempC = sample.nicTempC;
    if (!iv) return this.first;
    const lanes = iv.rail.lanes ?? this.settings.lanes ?? null;
    const d = lanes === iv.lanesUsed ? iv.d : intervalDelta(iv.prev, iv.rail, lanes, this.settings.resets);
    if (d === 'reset') return this.first;
    return this.interval(st, phase, sample, tS, d, iv.dtS, lanes);
  }

  private interval(st: NodeWatch, phase: string, sample: NodeSample, tS: number, d: IntervalDelta, dt: number, lanes: number | null): EarlyStopDecision | null {
    const at: DecisionPlace = { node: sample.node, phase, tick: sample.tick, tMs: sample.tMs, tS };
    const counted = st.counts.add(d, at);
    if (counted) this.decide(counted);

    const graded = this.settings.gradedPhases === null || this.settings.gradedPhases.has(phase);
    // Lane counters when the NIC has them; else the corrected bits of the whole port as one pseudo-lane.
    const perLane = d.laneErrors.length > 0;
    const counts = perLane ? d.laneErrors : d.correctedBits !== null ? [d.correctedBits] : [];
    if (!graded || counts.length === 0) {
      this.resetWindows(st);
      return this.first;
    }
    if (st.laneCount !== counts.length) {
      this.resetWindows(st);
      st.laneCount = counts.length;
    }
    if (perLane && st.tempC !== null) st.temp.add(st.tempC, dt, counts);
    const laneBits = SERIAL_RATE_BPS / (perLane ? (lanes ?? counts.length) : 1);
    this.watchFec(st, counts, perLane, laneBits, at, dt);
    if (perLane) this.watchRatio(st, counts, laneBits, at, dt);
    return this.first;
  }

  // Per receiver and lane, the worst FEC window held for holdS (none where no window was full or none had an error).
  windows(): WindowStats[] {
    const out: WindowStats[] = [];
    const fw = this.settings.fecWindow;
    const lr = this.settings.laneRatio;
    for (const [node, st] of this.nodes) {
      if (fw) st.worstFec.forEach((w) => w && Number.isFinite(w.value) && out.push(windowStats('fec-window', node, w, fw.windowS, fw.holdS)));
      if (lr && st.worstRatio) out.push(windowStats('lane-ratio', node, st.worstRatio, lr.windowS, lr.holdS));
    }
    return out;
  }

  // Per receiver and lane, how the error rate followed the NIC temperature over the graded phases.
  laneTemp(): LaneTempStats[] {
    const minSpan = this.settings.laneRatio?.minSpanC ?? 5;
    const out: LaneTempStats[] = [];
    for (const [node, st] of this.nodes) {
      const g = st.temp.growth(st.laneCount, minSpan);
      if (!g) continue;
      for (const x of g) {
        const lr = this.settings.laneRatio;
        out.push({
          node,
          ...x,
          othersGrowthDecades: othersGrowth(g, x.lane),
          growing: lr ? isGrowing(x, lr.growingDecades) : false,
          runaway: lr ? isRunaway(g, x.lane, lr.growingDecades, lr.runawayDecades) : false,
        });
      }
    }
    return out;
  }

  // Temperature range seen per receiver over the graded phases (for the record).
  tempRange(node: string): [number, number] | null {
    return this.nodes.get(node)?.temp.range() ?? null;
  }

  private watch(sample: NodeSample): NodeWatch {
    let st = this.nodes.get(sample.node);
    if (!st) {
      const fw = this.settings.fecWindow;
      const lr = this.settings.laneRatio;
      st = {
        tempC: null,
        counts: new CountTotals(this.settings.countFail),
        temp: new LaneTempBins(),
        laneCount: 0,
        fecWin: fw ? new WindowSum(fw.windowS) : null,
        ratioWin: lr ? new WindowSum(lr.windowS) : null,
        fecHeld: [],
        ratioHeld: lr ? { level: new Held(lr.holdS, lower), ratio: new Held(lr.holdS, lower), berLb: new Held(lr.holdS, lower) } : null,
        worstFec: [],
        worstRatio: null,
      };
      this.nodes.set(sample.node, st);
    }
    return st;
  }

  private resetWindows(st: NodeWatch): void {
    st.fecWin?.reset();
    st.ratioWin?.reset();
    for (const h of st.fecHeld) h.reset();
    if (st.ratioHeld) for (const h of Object.values(st.ratioHeld)) h.reset();
  }

  // Keep the earliest decision (nodes fed one after the other, as a re-grade of unsorted samples does, still agree with a live run).
  private decide(d: EarlyStopDecision): void {
    if (!this.first || d.tS < this.first.tS) this.first = d;
  }

  private watchFec(st: NodeWatch, counts: readonly number[], perLane: boolean, laneBits: number, at: DecisionPlace, dt: number): void {
    const fw = this.settings.fecWindow;
    if (!fw || !st.fecWin) return;
    st.fecWin.add(at.tMs, dt, counts);
    if (!st.fecWin.full) return;
    const bits = st.fecWin.seconds * laneBits;
    for (let i = 0; i < counts.length; i++) {
      const k = st.fecWin.counts[i]!;
      const berLb = k > 0 ? poissonLowerBound(k) / bits : 0;
      const held = (st.fecHeld[i] ??= new Held(fw.holdS, lower)).push(at.tMs, decadesBelowFecLimit(berLb));
      if (held === undefined) continue;
      const grade: Grade = held < fw.fail ? 'FAIL' : fw.marginal !== undefined && held < fw.marginal ? 'MARGINAL' : 'PASS';
      const lane = perLane ? i : null;
      const w = st.worstFec[i];
      if (!w || held < w.value) {
        st.worstFec[i] = { value: held, grade, phase: at.phase, atS: at.tS, lane, berLb95: berLb, windowErrors: k, windowSeconds: st.fecWin.seconds };
      }
      if (grade === 'FAIL') {
        const where = lane === null ? `${at.node} (corrected bits, all lanes)` : `${at.node} lane ${lane}`;
        this.decide({
          rule: 'fec-window',
          ...at,
          ...(lane === null ? {} : { lane }),
          value: held,
          message: `${where}: pre-FEC BER at least ${sci(FEC_LIMIT_BER / 10 ** held)} (95% lower bound) in every ${fw.windowS}-s window for ${fw.holdS} s: FEC margin ${fix(held)} decades or less < ${fw.fail} (fail below ${fw.fail} decade${fw.fail === 1 ? '' : 's'} of margin)`,
        });
      }
    }
  }

  private watchRatio(st: NodeWatch, counts: readonly number[], laneBits: number, at: DecisionPlace, dt: number): void {
    const lr = this.settings.laneRatio;
    if (!lr || !st.ratioWin || !st.ratioHeld || counts.length < 2) return;
    st.ratioWin.add(at.tMs, dt, counts);
    if (!st.ratioWin.full) return;
    const win = st.ratioWin;
    const r = certainLaneRatio(win.counts);
    let level = 0;
    let berLb = 0;
    if (r) {
      berLb = poissonLowerBound(win.counts[r.lane]!) / (win.seconds * laneBits);
      if (r.value >= (lr.marginal ?? Infinity) && berLb >= lr.marginalFloorBer) level = 1;
      if (r.value >= lr.fail && berLb >= lr.failFloorBer) {
        // A steady lane is MARGINAL at most: the ratio fails only a lane that grows with temperature.
        const g = st.temp.growth(counts.length, lr.minSpanC)?.[r.lane];
        level = g && isGrowing(g, lr.growingDecades) ? 2 : 1;
      }
    }
    const heldLevel = st.ratioHeld.level.push(at.tMs, level);
    const heldRatio = st.ratioHeld.ratio.push(at.tMs, r?.value ?? 0);
    const heldBer = st.ratioHeld.berLb.push(at.tMs, berLb);
    if (heldLevel === undefined || heldRatio === undefined || heldBer === undefined || !r) return;
    const grade: Grade = heldLevel === 2 ? 'FAIL' : heldLevel === 1 ? 'MARGINAL' : 'PASS';
    const w = st.worstRatio;
    if (!w || GRADE_RANK[grade] > GRADE_RANK[w.grade] || (grade === w.grade && heldRatio > w.value)) {
      st.worstRatio = {
        value: heldRatio,
        grade,
        phase: at.phase,
        atS: at.tS,
        lane: r.lane,
        berLb95: heldBer,
        windowErrors: win.counts[r.lane]!,
        windowSeconds: win.seconds,
        againstZero: r.againstZero,
      };
    }
    if (grade === 'FAIL' && (!this.first || at.tS < this.first.tS)) {
      const g = st.temp.growth(counts.length, lr.minSpanC);
      this.decide({
        rule: 'lane-ratio',
        ...at,
        lane: r.lane,
        value: heldRatio,
        message: `${at.node} lane ${r.lane}: ${r.againstZero ? 'at least ' : ''}${fix(heldRatio)}x the median of the other lanes (95% bounds) with a BER of at least ${sci(heldBer)}, for ${lr.holdS} s in ${lr.windowS}-s windows (fail at ${lr.fail}x or more with the lane above ${sci(lr.failFloorBer)} and growing with temperature)${g ? `; ${growthText(g, r.lane, lr)}` : ''}`,
      });
    }
  }
}

const lower = (a: number, b: number) => a < b;

function windowStats(rule: WindowStats['rule'], node: string, w: WorstWindow, windowS: number, holdS: number): WindowStats {
  return {
    rule,
    node,
    lane: w.lane,
    phase: w.phase,
    windowS,
    holdS,
    value: w.value,
    grade: w.grade,
    atS: w.atS,
    berLb95: w.berLb95,
    windowErrors: w.windowErrors,
    windowSeconds: w.windowSeconds,
    ...(w.againstZero !== undefined ? { againstZero: w.againstZero } : {}),
  };
}

// "runaway: lane 2 grew 2.6 decades from 58-62 °C to 74-77 °C while the others grew 1.7 (the failing clone's signature)",
// or "steady: ..." for a lane that did not grow. Entries that already carry `growing`/`runaway` (the record's) keep them.
export function growthText(
  g: readonly (LaneGrowth & { growing?: boolean; runaway?: boolean })[],
  lane: number,
  lr: Pick<LaneRatioSettings, 'growingDecades' | 'runawayDecades'>,
): string {
  const me = g.find((x) => x.lane === lane);
  if (!me) return '';
  const span = `from ${fix(me.coolC[0])}-${fix(me.coolC[1])} °C to ${fix(me.hotC[0])}-${fix(me.hotC[1])} °C`;
  const grew = `${changed(me.growthDecades)} decades ${span}${boundText(me.growthDecades, me.growthLbDecades)}`;
  if (me.runaway ?? isRunaway(g, lane, lr.growingDecades, lr.runawayDecades)) {
    return `runaway: lane ${lane} ${grew} while the others ${changed(othersGrowth(g, lane))} (the failing clone's signature)`;
  }
  if (me.growing ?? isGrowing(me, lr.growingDecades)) return `lane ${lane} ${grew}, the others ${changed(othersGrowth(g, lane))}`;
  return `steady: lane ${lane} ${grew}, less than the ${lr.growingDecades} decade(s) a lane must grow by before a ratio can fail it`;
}

const dec = (x: number) => (Math.abs(x) < 0.05 ? '0.0' : x.toFixed(1));
// A change of the error rate in words: "grew 2.7", "fell 2.1" (a lane whose errors fall as it warms did not grow by a
// negative amount), "grew 0.0" when it did not move at this precision.
const changed = (x: number) => (dec(x).startsWith('-') ? `fell ${dec(-x)}` : `grew ${dec(x)}`);
// The 95% lower bound of the growth, in the words of the change: "at least 1.9" grown, "by at most 3.0" fallen.
function boundText(growth: number, lb: number | null): string {
  if (lb === null) return '';
  if (!dec(growth).startsWith('-')) return ` (at least ${dec(lb)}, 95%)`;
  return ` (by at most ${dec(-lb)}, 95%)`;
}
const fix = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Number(x.toPrecision(2)).toString());
