// Every rule a verdict is made of, declared once (the model is OpenHTF's measurement declaration): its id, unit, which
// side is good, what its value is called, what to do when it is not PASS, its default limits, and the ways it has been
// measured (its variants: how, with which settings, and the measuring itself). A rules version (src/rules/versions.ts)
// picks one variant of each rule it grades with. The protocol's limits and their validation, the JSON Schema's
// `limits`, the certificate's labels, the advice and docs/grading.md's verdict table all derive from this list.
import type { Limit } from '../domain/limit.js';
import type { Grade } from '../domain/outcome.js';
import type { AnalysisRecord, BenchmarkRecord, LaneTempStats, NodePhaseStats } from '../domain/record.js';
import { SERIAL_RATE_BPS, berBounds, decadesBelowFecLimit } from '../analysis/counters.js';
import { fecMarginOf } from '../analysis/analyze.js';
import { growthText } from '../analysis/early-stop.js';
import { sci } from '../domain/number-format.js';

// The keys every limit entry of a protocol may have; a rule's settings (its `params`) come beside them.
export const LIMIT_KEYS = { required: ['rule', 'fail'], optional: ['direction', 'marginal', 'unit', 'description'] } as const;

// The physical range a number of a protocol may take, and why: the JSON Schema's bounds are made from it (a value
// outside makes no physical sense, or would fail every cable, never end, or fill memory).
export interface Bounds {
  min: number; // smallest value allowed
  minExclusive?: boolean; // the value must be above `min`
  max: number; // largest value allowed
  maxExclusive?: boolean; // the value must be below `max`
  integer?: boolean;
  why: string; // why these bounds, for the schema's description and docs/protocol.md
}

// One setting of how a rule is measured (a window length, a floor), with its default and the range it may take.
export interface ParamDeclaration extends Bounds {
  default: number;
  unit: string;
  doc: string;
}

// One graded figure of a rule: the value, its grade, and the sentence that says both (without the place).
export interface Check {
  value: number;
  grade: Grade;
  text: string;
  node?: string;
  phase?: string;
  lane?: number;
  atS?: number;
}

// What a rule's measuring sees: the analysis of the run, the benchmarks, its own limit (every setting filled in),
// the other limits, and sentence makers bound to its limit.
export interface MeasureInput {
  analysis: AnalysisRecord;
  benchmarks: BenchmarkRecord;
  loopbackFine: boolean; // loopback ran on every rail of every node and none was throttled (the setup checks say so)
  loopbackNotThrottled: boolean; // loopback ran and no row was below its floor (rules version 1 asked no more)
  limit: Limit & { params: Readonly<Record<string, number>> };
  limitOf: (rule: string) => Limit;
  // Grade a value against the limit and say it: "margin 2.7 decades >= 2 (marginal below 2, fail below 1)".
  check: (value: number) => { grade: Grade; text: string };
  // The same sentence for a grade the rule decided itself (two bounds, floors); a relation is stated only when true.
  say: (value: number, grade: Grade, valueText?: string) => string;
}

// One way of measuring a rule: how (for docs/grading.md, the schema and the operator), its settings, when it stops a run
// early, the settings printed beside the limit, and the measuring (cable rules only).
export interface MeasureVariant {
  measured: string;
  params: Readonly<Record<string, ParamDeclaration>>;
  earlyStop?: string;
  limitNote?: (params: Readonly<Record<string, number>>) => string;
  measure?: (m: MeasureInput) => Check[];
}

// A rule as the registry declares it, with every variant of its measuring a rules version has used.
export interface RuleDefinition {
  id: string;
  kind: 'cable' | 'setup'; // cable rules grade PASS/MARGINAL/FAIL; setup rules only make a run ERROR
  unit: string;
  direction: 'min' | 'max'; // 'min': the value must stay at or above; 'max': below
  label: string; // what its value is called in a sentence
  fail: number;
  marginal?: number;
  range: Bounds; // where `fail` and `marginal` may be set
  advice: string; // what to do when it is not PASS
  variants: Readonly<Record<string, MeasureVariant>>;
}

// A rule as a rules version grades with it: the definition with the variant the version picked, and the first version
// that graded with the rule (an older protocol without it gets the defaults).
export interface RuleDeclaration extends Omit<RuleDefinition, 'variants'>, MeasureVariant {
  variant: string;
  since: number;
}

// ---- ranges shared by several settings

const WINDOW_S: Bounds = {
  min: 0,
  minExclusive: true,
  max: 86_400,
  why: 'seconds: a window must hold samples (at least one sampling interval, checked at load) and fit in a soak (24 h at most)',
};
const HOLD_S: Bounds = { min: 0, max: 86_400, why: 'seconds: 0 counts a window at once; a hold longer than a day outlasts any soak worth running' };
const BER_FLOOR: Bounds = { min: 0, minExclusive: true, max: 1, maxExclusive: true, why: 'a bit error ratio is a probability in (0, 1)' };
const GROWTH_DECADES: Bounds = { min: 0, max: 15, why: 'decades of error-rate growth: between BER 1e-15 and 1 there are 15' };

// ---- helpers shared by the measuring below

const num = (x: number) => (Number.isInteger(x) ? String(x) : Math.abs(x) >= 100 ? x.toFixed(0) : String(Number(x.toPrecision(3))));
const gradedOf = (a: AnalysisRecord): NodePhaseStats[] => {
  const g = a.gradedPhases;
  return g ? a.perNodePhase.filter((s) => g.includes(s.phase)) : a.perNodePhase;
};
const laneTempOf = (a: AnalysisRecord, node: string): LaneTempStats[] => (a.laneTemp ?? []).filter((l) => l.node === node).sort((x, y) => x.lane - y.lane);

// "; runaway: lane 2 grew ... (the failing clone's signature)" when that lane of that receiver ran away with temperature.
function runawayOf(a: AnalysisRecord, node: string, lane: number | null): string {
  if (lane === null) return '';
  const temp = laneTempOf(a, node);
  if (!temp.find((t) => t.lane === lane)?.runaway) return '';
  // The record's entries carry their growing/runaway flags, so no thresholds are needed to word them.
  return `; ${growthText(temp, lane, { growingDecades: 0, runawayDecades: 0 })}`;
}

function countRule(id: string, unit: string, label: string, measured: string, advice: string, count: (s: NodePhaseStats) => number): RuleDefinition {
  return {
    id,
    kind: 'cable',
    unit,
    direction: 'max',
    label,
    fail: 1,
    range: {
      min: 1,
      max: 1_000_000,
      integer: true,
      why: 'a count: FAIL at 0 would fail every cable (0 >= 0); a million errors in one run is no qualification',
    },
    advice,
    variants: {
      count: {
        measured,
        params: {},
        earlyStop: 'at once, in any phase',
        measure: (m) =>
          m.analysis.perNodePhase.map((s) => {
            const v = count(s);
            return { value: v, ...m.check(v), node: s.node, phase: s.phase };
          }),
      },
    },
  };
}

// FEC margin of one receiver over one phase, from per-lane counts (or the corrected bits of all lanes without them).
function fecMargin(m: MeasureInput, s: NodePhaseStats): Check | null {
  const lanes = s.laneStats.length
    ? s.laneStats.map((l) => ({
        lane: l.lane as number | null,
        errors: l.errors,
        ub: l.berUb95,
        lb: l.berLb95 ?? berBounds(l.errors, l.seconds * (SERIAL_RATE_BPS / s.lanes)).lb95,
      }))
    : s.correctedBitsBerUb95 != null
      ? [{ lane: null, errors: s.correctedBits, ...bounds(berBounds(s.correctedBits, s.seconds * SERIAL_RATE_BPS)) }]
      : [];
  if (lanes.length === 0) return null;
  const where = (l: { lane: number | null }) => (l.lane === null ? 'corrected bits of all lanes' : `lane ${l.lane}`);
  const { fail, marginal } = m.limit;
  // FAIL only when certain: even the lane's BER lower bound is above the FAIL line.
  const certain = lanes
    .map((l) => ({ l, d: decadesBelowFecLimit(l.lb) }))
    .filter((x) => x.d < fail)
    .sort((a, b) => a.d - b.d)[0];
  const at = (l: { lane: number | null }) => ({ node: s.node, phase: s.phase, ...(l.lane !== null ? { lane: l.lane } : {}) });
  if (certain) {
    const { l, d } = certain;
    return {
      value: d,
      grade: 'FAIL',
      ...at(l),
      text: `${m.say(d, 'FAIL', `at most ${num(d)} decades`)}; ${where(l)}: BER at least ${sci(l.lb, 2)} (95% lower bound), ${l.errors} pre-FEC errors over ${num(s.seconds)} s${runawayOf(m.analysis, s.node, l.lane)}`,
    };
  }
  // PASS must be proven: the margin is taken from each lane's BER upper bound, so zero errors still give a finite figure.
  const worst = lanes.map((l) => ({ l, d: decadesBelowFecLimit(l.ub) })).sort((a, b) => a.d - b.d)[0]!;
  const grade: Grade = marginal !== undefined && worst.d < marginal ? 'MARGINAL' : worst.d < fail ? 'MARGINAL' : 'PASS';
  const note = worst.d < fail ? ` (beyond the fail line by its upper bound only: a FAIL needs the lower bound beyond it)` : '';
  return {
    value: worst.d,
    grade,
    ...at(worst.l),
    text: `${m.say(worst.d, grade)}${note}; ${where(worst.l)}: ${worst.l.errors} pre-FEC errors over ${num(s.seconds)} s, BER below ${sci(worst.l.ub, 2)} (95% upper bound)${grade === 'PASS' ? '' : runawayOf(m.analysis, s.node, worst.l.lane)}`,
  };
}

function bounds(b: { lb95: number; ub95: number }) {
  return { lb: b.lb95, ub: b.ub95 };
}

// The lane-ratio grade of one ratio: floors first (an imbalance between tiny numbers says nothing), then the steady cap.
function ratioGrade(p: Readonly<Record<string, number>>, limit: Limit, ratio: number, berLb: number, growing: boolean): { grade: Grade; why: string } {
  const marginal = limit.marginal ?? Infinity;
  if (ratio >= limit.fail && berLb >= p['failFloorBer']!) {
    return growing ? { grade: 'FAIL', why: '' } : { grade: 'MARGINAL', why: 'MARGINAL at most: the lane does not grow with temperature' };
  }
  if (ratio >= marginal && berLb >= p['marginalFloorBer']!) return { grade: 'MARGINAL', why: '' };
  if (ratio >= marginal)
    return {
      grade: 'PASS',
      why: `not counted: the lane's BER (at least ${sci(berLb)}) is below the ${sci(p['marginalFloorBer']!)} floor, and an imbalance between tiny numbers says nothing`,
    };
  return { grade: 'PASS', why: '' };
}

function ratioText(m: MeasureInput, value: number, grade: Grade, againstZero: boolean, why: string, tail: string): string {
  const v = `${againstZero ? 'at least ' : ''}${num(value)}x`;
  return `${m.say(value, grade, v)}${againstZero ? ' (the other lanes had no errors: a lower bound)' : ''}${why ? `; ${why}` : ''}${tail}`;
}

// ---- measuring shared by variants

// Rules version 1's FEC margin of one receiver over one phase: the worse of its lanes' and its corrected bits' 95%
// upper bounds, graded against the limit as one value.
function worstUpperBound(m: MeasureInput, s: NodePhaseStats): Check | null {
  const fm = fecMarginOf(s);
  if (!fm) return null;
  const c = m.check(fm.decades);
  const l = fm.lane === null ? null : s.laneStats[fm.lane];
  const source =
    fm.lane === null
      ? `from corrected bits (${s.correctedBits} over ${Math.round(s.seconds)} s)`
      : l
        ? `${l.errors} pre-FEC errors over ${Math.round(s.seconds)} s, BER upper bound ${l.berUb95.toExponential(2)}`
        : '';
  return {
    value: fm.decades,
    ...c,
    text: source ? `${c.text}; ${source}` : c.text,
    node: s.node,
    phase: s.phase,
    ...(fm.lane !== null ? { lane: fm.lane } : {}),
  };
}

// The throughput of both rails as one figure: the median of each rail summed.
function sumOfRails(m: MeasureInput, bw: NonNullable<BenchmarkRecord['ibWriteBw']>): Check {
  const c = m.check(bw.sumMedianGbps);
  return { value: bw.sumMedianGbps, ...c, text: `${c.text}; median of ${bw.perRail.length} rails summed` };
}

const FEC_MARGIN_RANGE: Bounds = {
  min: 0,
  max: 12,
  why: 'decades below the FEC limit 2.4e-4: 0 is the limit itself; beyond 12 (BER 2.4e-16) not even a 72-h soak of a 53.125 Gb/s lane with zero errors proves it, so no cable could pass',
};

// ---- the rules

export const RULE_DEFINITIONS: readonly RuleDefinition[] = [
  countRule(
    'crc-errors',
    'errors',
    'CRC errors',
    'rx_crc_errors_phy counted on each receiver in every phase',
    'frames were lost on the wire: replace the cable',
    (s) => s.crcErrors,
  ),
  countRule(
    'post-fec-errors',
    'errors',
    'post-FEC errors',
    'rx_pcs_symbol_err_phy plus FEC uncorrectable blocks, on each receiver in every phase',
    'FEC could not correct every codeword: replace the cable',
    (s) => s.postFecErrors,
  ),
  countRule(
    'link-down-events',
    'events',
    'link down events',
    'link_down_events_phy (or a link seen going down) on each receiver in every phase',
    'the link flapped: replace the cable (check the other node too)',
    (s) => s.linkDownEvents,
  ),
  {
    id: 'fec-margin',
    kind: 'cable',
    unit: 'decades',
    direction: 'min',
    label: 'margin',
    fail: 1,
    marginal: 2,
    range: FEC_MARGIN_RANGE,
    advice: 'pre-FEC errors are close to what RS-FEC can correct',
    variants: {
      'worst-upper-bound': {
        measured:
          'decades between the RS(544,514) design input BER 2.4e-4 and the 95% upper bound of the BER of the worst lane (or of the corrected bits) of each receiver over each phase',
        params: {},
        measure: (m) => m.analysis.perNodePhase.map((s) => worstUpperBound(m, s)).filter((c): c is Check => c !== null),
      },
      bounds: {
        measured:
          'decades between the RS(544,514) design input BER 2.4e-4 and the worst lane of each receiver over each soak: MARGINAL when the 95% upper bound of its BER is within the marginal band, FAIL only when even its 95% lower bound is beyond the fail line',
        params: {},
        measure: (m) =>
          gradedOf(m.analysis)
            .map((s) => fecMargin(m, s))
            .filter((c): c is Check => c !== null),
      },
    },
  },
  {
    id: 'fec-window',
    kind: 'cable',
    unit: 'decades',
    direction: 'min',
    label: 'window margin',
    fail: 1,
    marginal: 2,
    range: FEC_MARGIN_RANGE,
    advice: 'the pre-FEC error rate came close to what RS-FEC can correct for a minute or more: replace the cable',
    variants: {
      'held-windows': {
        measured:
          'the same margin in sliding windows per receiver and lane over the soaks, from the window BER 95% lower bound: the worst level held for holdS is kept',
        params: {
          windowS: { default: 60, unit: 's', doc: 'length of the sliding window over the soaks', ...WINDOW_S },
          holdS: { default: 10, unit: 's', doc: 'how long a window must stay beyond a line before it counts', ...HOLD_S },
        },
        earlyStop: 'when a window is certainly beyond the fail line for holdS',
        limitNote: (p) => `${num(p['windowS']!)}-s windows held ${num(p['holdS']!)} s`,
        measure: (m) =>
          (m.analysis.windows ?? [])
            .filter((w) => w.rule === 'fec-window' && Number.isFinite(w.value))
            .map((w) => {
              const c = m.check(w.value);
              const where = w.lane === null ? 'corrected bits of all lanes' : `lane ${w.lane}`;
              return {
                value: w.value,
                grade: c.grade,
                node: w.node,
                phase: w.phase,
                ...(w.lane !== null ? { lane: w.lane } : {}),
                atS: w.atS,
                text: `${m.say(w.value, c.grade, `at most ${num(w.value)} decades`)}; worst ${num(w.windowS)}-s window held ${num(w.holdS)} s: ${where} BER at least ${sci(w.berLb95, 2)} (95% lower bound, ${w.windowErrors} errors in ${num(w.windowSeconds)} s)${runawayOf(m.analysis, w.node, w.lane)}`,
              };
            }),
      },
    },
  },
  {
    id: 'lane-ratio',
    kind: 'cable',
    unit: 'x',
    direction: 'max',
    label: 'lane ratio',
    fail: 1000,
    marginal: 100,
    range: {
      min: 1,
      minExclusive: true,
      max: 1e6,
      why: 'a ratio of lane error rates: 1 means equal lanes, so a line at or below 1 would flag every cable; beyond a million no 75-min soak has the errors to show it',
    },
    advice: 'one lane is much worse than the others: a single bad conductor pair or connector',
    variants: {
      'rate-ratio': {
        measured:
          "per receiver and phase, the worst lane's error rate over the median of the other lanes' rates (floored at one error per phase); the watch stops a run when one tick's ratio stays beyond the fail line for earlyStop.laneRatioConsecutiveTicks ticks",
        params: {},
        earlyStop: 'when the ratio of single ticks stays beyond the fail line for laneRatioConsecutiveTicks ticks in a row',
        measure: (m) =>
          m.analysis.perNodePhase
            .filter((s) => s.laneStats.length >= 2)
            .map((s) => {
              const value = s.worstLane !== null ? s.worstLaneRatio : 0;
              const c = m.check(value);
              const detail =
                s.worstLane !== null ? `lane rates ${s.laneStats.map((l) => l.ratePerS.toPrecision(3)).join(' / ')} errors/s` : 'no pre-FEC errors on any lane';
              return { value, ...c, text: `${c.text}; ${detail}`, node: s.node, phase: s.phase, ...(s.worstLane !== null ? { lane: s.worstLane } : {}) };
            }),
      },
      'certain-above-floors': {
        params: {
          marginalFloorBer: {
            default: 1e-9,
            unit: 'BER',
            doc: "the worst lane's BER 95% lower bound must reach this before a ratio can make a cable MARGINAL",
            ...BER_FLOOR,
          },
          failFloorBer: { default: 1e-6, unit: 'BER', doc: '... and this before a ratio can FAIL it', ...BER_FLOOR },
          growingDecades: {
            default: 1,
            unit: 'decades',
            doc: 'a ratio FAILs only a lane whose errors certainly grow this much from the coolest to the hottest third of the soak temperatures (a steady lane is MARGINAL at most)',
            ...GROWTH_DECADES,
          },
          runawayDecades: {
            default: 0.5,
            unit: 'decades',
            doc: "a growing lane whose growth beats the other lanes' by this much is named a runaway (the failing clone's signature)",
            ...GROWTH_DECADES,
          },
          minSpanC: {
            default: 5,
            unit: '°C',
            doc: 'growth with temperature is judged only over at least this range of NIC temperature',
            min: 0,
            minExclusive: true,
            max: 100,
            why: 'a span of NIC temperature: a NIC runs between about 0 and 105 °C, so a span over 100 °C is never seen and growth would never be judged',
          },
          windowS: { default: 60, unit: 's', doc: 'sliding window for the early stop and the worst window', ...WINDOW_S },
          holdS: { default: 10, unit: 's', doc: 'how long a window must stay beyond a line before it counts', ...HOLD_S },
        },
        measured:
          "per receiver, the worst lane's 95% lower bound over the 95% upper bound of the other lanes' median, over each soak and in sliding windows; counted only when the worst lane's BER lower bound is above a floor",
        earlyStop: 'when a window is beyond the fail ratio and floor for holdS and the lane grows with temperature',
        limitNote: (p) =>
          `counted above BER ${sci(p['marginalFloorBer']!, 0)}; fail needs ${sci(p['failFloorBer']!, 0)} and ${num(p['growingDecades']!)}+ decade growth with heat`,
        measure: (m) => {
          const p = m.limit.params;
          const out: Check[] = [];
          for (const s of gradedOf(m.analysis)) {
            if (s.laneStats.length < 2) continue;
            if (s.worstLane === null || s.worstLaneRatio <= 0) {
              out.push({ value: 0, grade: 'PASS', node: s.node, phase: s.phase, text: 'no errors on any lane' });
              continue;
            }
            const temp = laneTempOf(m.analysis, s.node);
            const g = temp.find((t) => t.lane === s.worstLane);
            const berLb = s.worstLaneBerLb95 ?? 0;
            const { grade, why } = ratioGrade(p, m.limit, s.worstLaneRatio, berLb, g?.growing ?? false);
            const growth = temp.length
              ? `; ${growthText(temp, s.worstLane, { growingDecades: p['growingDecades']!, runawayDecades: p['runawayDecades']! })}`
              : '';
            const tail = `; lane ${s.worstLane} BER at least ${sci(berLb, 2)} (95% lower bound)${growth}`;
            out.push({
              value: s.worstLaneRatio,
              grade,
              node: s.node,
              phase: s.phase,
              lane: s.worstLane,
              text: ratioText(m, s.worstLaneRatio, grade, s.ratioAgainstZero ?? false, why, tail),
            });
          }
          for (const w of (m.analysis.windows ?? []).filter((x) => x.rule === 'lane-ratio')) {
            if (w.lane === null) continue;
            const temp = laneTempOf(m.analysis, w.node);
            const g = temp.find((t) => t.lane === w.lane);
            const { why } = ratioGrade(p, m.limit, w.value, w.berLb95, w.grade === 'FAIL' || (g?.growing ?? false));
            const growth = temp.length ? `; ${growthText(temp, w.lane, { growingDecades: p['growingDecades']!, runawayDecades: p['runawayDecades']! })}` : '';
            const tail = `; worst ${num(w.windowS)}-s window held ${num(w.holdS)} s: lane ${w.lane} BER at least ${sci(w.berLb95, 2)} (95% lower bound)${growth}`;
            out.push({
              value: w.value,
              grade: w.grade,
              node: w.node,
              phase: w.phase,
              lane: w.lane,
              atS: w.atS,
              text: ratioText(m, w.value, w.grade, w.againstZero ?? false, why, tail),
            });
          }
          return out;
        },
      },
    },
  },
  {
    id: 'ib-write-bw-sum',
    kind: 'cable',
    unit: 'Gb/s',
    direction: 'min',
    label: 'ib_write_bw sum',
    fail: 170,
    marginal: 180,
    range: {
      min: 0,
      minExclusive: true,
      max: 400,
      why: 'Gb/s over both rails: a Spark moves about 200 Gb/s each way (400 both ways together), so a floor above 400 would fail every cable',
    },
    advice: 'throughput below what a good cable gives (185-190 Gb/s); check both rails are loaded',
    variants: {
      'sum-of-rails': {
        measured: 'median of each rail of ib_write_bw across the cable, summed over both rails; graded only when loopback showed no NIC throttled',
        params: {},
        measure: (m) => {
          const bw = m.benchmarks.ibWriteBw;
          return bw && m.loopbackNotThrottled ? [sumOfRails(m, bw)] : [];
        },
      },
      'per-direction': {
        measured:
          'median of each rail of ib_write_bw across the cable, summed over both rails, for each direction (one stream per rail and direction); graded only when loopback showed every rail of every node fine',
        params: {},
        measure: (m) => {
          const bw = m.benchmarks.ibWriteBw;
          if (!bw || !m.loopbackFine) return [];
          // The limit is a unidirectional figure: with one stream per direction, each direction is held to it (its
          // receiver names it); runs before per-direction streams have one figure.
          if (!bw.perDirection) return [sumOfRails(m, bw)];
          return bw.perDirection.map((d) => {
            const c = m.check(d.sumMedianGbps);
            return { value: d.sumMedianGbps, ...c, node: d.to, text: `${c.text}; ${d.from} -> ${d.to}: median of ${d.perRail.length} rails summed` };
          });
        },
      },
    },
  },
  {
    id: 'loopback-floor',
    kind: 'setup',
    unit: 'Gb/s',
    direction: 'min',
    label: 'loopback',
    fail: 90,
    range: {
      min: 0,
      minExclusive: true,
      max: 200,
      why: 'Gb/s on one rail: a fine card gives about 106, a rail never exceeds the 200 Gb/s port, so a floor above 200 would make every run ERROR',
    },
    advice: 'reboot both nodes with the cable attached (once it took two reboots, or 60 s unplugged), then run again',
    variants: {
      'per-rail': {
        measured: 'ib_write_bw with both ends on one node, per node and rail (does not use the wire): below it the NIC is throttled and the run is ERROR',
        params: {},
      },
    },
  },
  {
    id: 'gpu-util-min',
    kind: 'setup',
    unit: '%',
    direction: 'min',
    label: 'GPU utilisation',
    fail: 90,
    range: { min: 0, minExclusive: true, max: 100, why: 'a percentage: 0 would accept idle GPUs, above 100 is never reached' },
    advice: 'check the GPU load command runs on both nodes (gpu_burn or a PyTorch matmul loop)',
    variants: {
      mean: {
        measured: 'mean GPU utilisation of each node during a GPU-loaded soak: below it the GPUs were not loaded and the run is ERROR',
        params: {},
      },
      'after-load-start': {
        measured:
          "mean GPU utilisation of each node over a GPU-loaded soak, from its GPU load's start plus settleS to the soak's end; the load must run to the end and the utilisation may not stay below the limit longer than maxLowS: otherwise the GPUs were not loaded and the run is ERROR",
        params: {
          settleS: {
            default: 60,
            unit: 's',
            doc: 'time the GPUs get to ramp up after their load process started (half the rest of the soak when that is shorter); samples before it do not count',
            min: 0,
            max: 3600,
            why: 'seconds: 0 judges from the load start on; gpu_burn and a PyTorch loop are at full load within a minute, an hour is longer than any load takes to start',
          },
          maxLowS: {
            default: 60,
            unit: 's',
            doc: 'the longest stretch after the ramp-up that utilisation may stay below the limit (a load that stalled or stopped)',
            min: 10,
            max: 86_400,
            why: 'seconds: utilisation is read every 5 s, so below 10 s one reading would stop a run; a day outlasts any soak',
          },
        },
        limitNote: (p) => `from ${num(p['settleS']!)} s after the load started; below it at most ${num(p['maxLowS']!)} s`,
      },
    },
  },
  {
    id: 'soak-link-load',
    kind: 'setup',
    unit: '%',
    direction: 'min',
    label: 'soak link load',
    fail: 90,
    range: {
      min: 0,
      minExclusive: true,
      max: 100,
      why: "a percentage of the same direction's ib_write_bw benchmark figure: 0 would accept an idle link, above 100 a soak would have to beat its own benchmark",
    },
    advice:
      'look at the ib_write_bw output files under /tmp/cablequal/<run id>/ on the node named: a client that died, stalled or slowed leaves the cable idle',
    variants: {
      'median-per-direction': {
        measured:
          "median load of each direction over each soak (each rail's median of its ib_write_bw rows, summed), as a percentage of that direction's ib_write_bw benchmark figure; the rows must keep coming and no load process may end by itself: below it, or rows stopped, and the run is ERROR",
        params: {
          maxRowGapS: {
            default: 30,
            unit: 's',
            doc: 'the longest a soak may go without a new throughput row from a link-load client',
            min: 10,
            max: 3600,
            why: 'seconds: ib_write_bw --run_infinitely prints a row every 5 s (its -D default) and cablequal reads them every 10 s at most, so below 10 s a healthy load would stop a run; beyond an hour a stopped load outlasts a soak',
          },
        },
        limitNote: (p) => `rows at most ${num(p['maxRowGapS']!)} s apart`,
      },
    },
  },
  {
    // Rules version 5 (docs/protocol.md "PHY recoveries"): a recovery is the PHY losing the link's alignment and
    // winning it back within the port's reset cycle, the link never going down; the step before the resets a cable in
    // service showed. Counted where the kernel exposes total_success_recovery_phy; elsewhere the record says so.
    id: 'phy-recoveries',
    kind: 'cable',
    unit: 'recoveries',
    direction: 'max',
    label: 'PHY recoveries',
    fail: 2,
    marginal: 1,
    range: {
      min: 1,
      max: 1_000_000,
      integer: true,
      why: 'a count of recoveries: at 0 every cable would be judged (0 >= 0); a million in one run is no qualification',
    },
    advice:
      'the PHY had to recover the link without it going down (total_success_recovery_phy): reseat the cable at both ends and run again; a recovery that repeats is the step before link resets: replace the cable',
    variants: {
      'count-per-receiver': {
        measured:
          'total_success_recovery_phy counted on each receiver over the whole run (every phase; a receiver whose kernel does not expose the counter is not judged, and the record says so)',
        params: {},
        measure: (m) => recoveriesPerReceiver(m),
      },
    },
  },
];

// Each receiver's recoveries over the run, with the phases they came in (only receivers whose counter was read).
function recoveriesPerReceiver(m: MeasureInput): Check[] {
  const byNode = new Map<string, NodePhaseStats[]>();
  for (const s of m.analysis.perNodePhase) if (s.recoveries !== undefined) byNode.set(s.node, [...(byNode.get(s.node) ?? []), s]);
  return [...byNode].map(([node, stats]) => {
    const value = stats.reduce((a, s) => a + s.recoveries!, 0);
    const where = stats.filter((s) => s.recoveries! > 0).map((s) => `${s.recoveries} in ${s.phase}`);
    const c = m.check(value);
    return { value, ...c, text: `${c.text}${where.length ? ` (${where.join(', ')})` : ''}`, node };
  });
}

// The default limit of a rule, as a protocol would write it.
export function defaultLimit(r: RuleDeclaration): Limit & { params: Record<string, number> } {
  return {
    rule: r.id,
    direction: r.direction,
    fail: r.fail,
    ...(r.marginal !== undefined ? { marginal: r.marginal } : {}),
    unit: r.unit,
    params: Object.fromEntries(Object.entries(r.params).map(([k, p]) => [k, p.default])),
  };
}
