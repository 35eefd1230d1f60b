// Rules version 1, FROZEN: a copy of what cablequal 0.1.0 graded with (see engine.ts). Do not change it.
// The cable verdict: every analysis figure checked against the protocol's limits, worst grade wins, each non-PASS named.
import type { Limit, Measurement } from './types.js';
import type { Grade, Reason } from '../../domain/outcome.js';
import { worstGrade } from '../../domain/outcome.js';
import type { BenchmarkRecord } from '../../domain/record.js';
import type { AnalysisRecord, NodePhaseStats, ProtocolV1 } from './types.js';
import { fecMarginOf } from './analyze.js';
import { checkLimit, formatLimit } from './in-range.js';
import { checkLoopback } from './setup-checks.js';

export interface CableVerdict {
  outcome: Grade;
  reasons: Reason[];
  measurements: Measurement[];
}

// What each rule advises when it is not PASS.
const ADVICE: Record<string, string> = {
  'crc-errors': 'frames were lost on the wire: replace the cable',
  'post-fec-errors': 'FEC could not correct every codeword: replace the cable',
  'link-down-events': 'the link flapped: replace the cable (check the other node too)',
  'fec-margin': 'pre-FEC errors are close to what RS-FEC can correct',
  'lane-ratio': 'one lane is much worse than the others: a single bad conductor pair or connector',
  'ib-write-bw-sum': 'throughput below what a good cable gives (185-190 Gb/s); check both rails are loaded',
};

function limitFor(protocol: Pick<ProtocolV1, 'limits'>, rule: string): Limit {
  const l = protocol.limits.find((x) => x.rule === rule);
  if (!l) throw new RangeError(`protocol has no limit "${rule}"`);
  return l;
}

// Grade the cable from a complete run. ERROR/ABORTED are decided by the run, never here.
export function gradeRun(analysis: AnalysisRecord, benchmarks: BenchmarkRecord, protocol: Pick<ProtocolV1, 'limits'>): CableVerdict {
  const measurements: Measurement[] = [];
  const reasons: Reason[] = [];
  const measure = (rule: string, value: number, where: { node?: string; phase?: string; lane?: number | null }, extra?: string) => {
    const limit = limitFor(protocol, rule);
    const { grade, text } = checkLimit(limit, value);
    const m: Measurement = { rule, value, unit: limit.unit, grade, limitText: formatLimit(limit) };
    if (where.node !== undefined) m.node = where.node;
    if (where.phase !== undefined) m.phase = where.phase;
    if (where.lane != null) m.lane = where.lane;
    measurements.push(m);
    return { m, text: extra ? `${text}; ${extra}` : text };
  };
  const reasonOf = ({ m, text }: { m: Measurement; text: string }): Reason => {
    const at = [m.node, m.phase, m.lane !== undefined ? `lane ${m.lane}` : undefined].filter(Boolean).join(' ');
    const r: Reason = { rule: m.rule, grade: m.grade, message: at ? `${at}: ${text}` : text, value: m.value, unit: m.unit, limit: m.limitText };
    if (m.node !== undefined) r.node = m.node;
    if (m.phase !== undefined) r.phase = m.phase;
    if (m.lane !== undefined) r.lane = m.lane;
    if (m.grade !== 'PASS' && ADVICE[m.rule]) r.advice = ADVICE[m.rule];
    return r;
  };

  const headline: { m: Measurement; text: string }[] = [];
  const worstOf = (xs: { m: Measurement; text: string }[], worse: (a: number, b: number) => boolean) =>
    xs.reduce<{ m: Measurement; text: string } | null>((w, x) => (w === null || worse(x.m.value, w.m.value) ? x : w), null);

  const margins: { m: Measurement; text: string }[] = [];
  const ratios: { m: Measurement; text: string }[] = [];
  for (const s of analysis.perNodePhase) {
    const where = { node: s.node, phase: s.phase };
    for (const [rule, v] of [
      ['crc-errors', s.crcErrors],
      ['post-fec-errors', s.postFecErrors],
      ['link-down-events', s.linkDownEvents],
    ] as const) {
      const x = measure(rule, v, where);
      if (x.m.grade !== 'PASS') reasons.push(reasonOf(x));
    }
    const fm = fecMarginOf(s);
    if (fm) margins.push(measure('fec-margin', fm.decades, { ...where, lane: fm.lane }, marginSource(s, fm.lane)));
    if (s.laneStats.length >= 2 && s.worstLane !== null) {
      ratios.push(measure('lane-ratio', s.worstLaneRatio, { ...where, lane: s.worstLane }, ratioDetail(s)));
    } else if (s.laneStats.length >= 2) {
      ratios.push(measure('lane-ratio', 0, where, 'no pre-FEC errors on any lane'));
    }
  }
  for (const x of [...margins, ...ratios]) if (x.m.grade !== 'PASS') reasons.push(reasonOf(x));
  const wm = worstOf(margins, (a, b) => a < b);
  const wr = worstOf(ratios, (a, b) => a > b);
  if (wm) headline.push(wm);
  if (wr) headline.push(wr);

  // Throughput says only "not broken"; it is graded only when loopback showed the NICs are not throttled.
  const loopbackFine = benchmarks.loopback.length > 0 && checkLoopback(benchmarks.loopback, limitFor(protocol, 'loopback-floor')).length === 0;
  if (benchmarks.ibWriteBw && loopbackFine) {
    const x = measure('ib-write-bw-sum', benchmarks.ibWriteBw.sumMedianGbps, {}, `median of ${benchmarks.ibWriteBw.perRail.length} rails summed`);
    if (x.m.grade !== 'PASS') reasons.push(reasonOf(x));
    headline.push(x);
  }

  for (const s of analysis.perNodePhase) {
    if (s.counterResets > 0) {
      reasons.push({
        rule: 'counter-reset',
        node: s.node,
        phase: s.phase,
        value: s.counterResets,
        message: `${s.node} ${s.phase}: counters went backwards ${s.counterResets} time(s) (mlxlink --pc or a driver reset); those intervals were left out`,
      });
    }
  }

  const outcome = worstGrade(measurements.map((m) => m.grade));
  // A PASS still says why: the figures closest to their limits.
  if (outcome === 'PASS') reasons.unshift(...headline.map(reasonOf));
  reasons.sort((a, b) => rank(a.grade) - rank(b.grade));
  return { outcome, reasons, measurements };
}

const rank = (g: Grade | undefined) => (g === 'FAIL' ? 0 : g === 'MARGINAL' ? 1 : g === 'PASS' ? 2 : 3);

function marginSource(s: NodePhaseStats, lane: number | null): string {
  if (lane === null) return `from corrected bits (${s.correctedBits} over ${Math.round(s.seconds)} s)`;
  const l = s.laneStats[lane];
  return l ? `${l.errors} pre-FEC errors over ${Math.round(s.seconds)} s, BER upper bound ${l.berUb95.toExponential(2)}` : '';
}

function ratioDetail(s: NodePhaseStats): string {
  const rates = s.laneStats.map((l) => l.ratePerS.toPrecision(3)).join(' / ');
  return `lane rates ${rates} errors/s`;
}
