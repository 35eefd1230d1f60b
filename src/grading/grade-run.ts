// The cable verdict: every cable rule of a rules version measures the run and grades it against the protocol's limit,
// worst grade wins, each non-PASS named with where, value, limit and advice; a PASS states what was proven, as the
// version states it.
import type { Limit, Measurement } from '../domain/limit.js';
import type { Grade, Reason } from '../domain/outcome.js';
import { worstGrade } from '../domain/outcome.js';
import type { AnalysisRecord, BenchmarkRecord, Headline, HeadlineReceiver, NodePhaseStats } from '../domain/record.js';
import type { Protocol } from '../protocol/types.js';
import { SERIAL_RATE_BPS, berBounds, decadesBelowFecLimit } from '../analysis/counters.js';
import { resetRuleOf } from '../analysis/analyze.js';
import { defaultLimit, type Check, type RuleDeclaration } from '../rules/definitions.js';
import { RULES_VERSION, rulesOf, rulesVersionOf, type RulesVersion } from '../rules/versions.js';
import { checkLimit, formatLimit, sayLimit } from '../rules/in-range.js';
import { checkLoopback, loopbackCoversRails } from './setup-checks.js';
import { formatNumber } from '../domain/number-format.js';
import { sci } from '../domain/number-format.js';

export interface CableVerdict {
  outcome: Grade;
  reasons: Reason[];
  measurements: Measurement[];
  headline: Headline | null;
}

// The protocol's limit of a rule with every setting filled in (its declared default when the protocol lacks it).
function limitFor(protocol: Pick<Protocol, 'limits'>, decl: RuleDeclaration): Limit & { params: Readonly<Record<string, number>> } {
  const d = defaultLimit(decl);
  const l = protocol.limits.find((x) => x.rule === decl.id);
  return l ? { ...l, params: { ...d.params, ...l.params } } : d;
}

type Checked = { decl: RuleDeclaration; m: Measurement; c: Check };

// Grade the cable from a complete run with a rules version (today's unless given). ERROR/ABORTED are decided by the
// run, never here.
export function gradeRun(
  analysis: AnalysisRecord,
  benchmarks: BenchmarkRecord,
  protocol: Pick<Protocol, 'limits' | 'phases'>,
  version: RulesVersion = rulesVersionOf(RULES_VERSION)!,
  rules: readonly RuleDeclaration[] = rulesOf(version.version), // a test adds a rule here to show what adding one takes
): CableVerdict {
  const measurements: Measurement[] = [];
  const checked: Checked[] = [];
  const limitOf = (rule: string): Limit => {
    const decl = rules.find((r) => r.id === rule);
    if (!decl) throw new RangeError(`no rule "${rule}"`);
    return limitFor(protocol, decl);
  };
  // Throughput says only "not broken": it is graded only when loopback showed the NICs are not throttled (on every
  // rail of every node, for the rules that ask it).
  const rails = benchmarks.ibWriteBw?.perRail.map((r) => r.rail) ?? [];
  const loopbackNotThrottled = benchmarks.loopback.length > 0 && checkLoopback(benchmarks.loopback, limitOf('loopback-floor')).length === 0;
  const loopbackFine = loopbackNotThrottled && loopbackCoversRails(benchmarks.loopback, rails);
  for (const decl of rules) {
    if (!decl.measure) continue;
    const limit = limitFor(protocol, decl);
    const checks = decl.measure({
      analysis,
      benchmarks,
      loopbackFine,
      loopbackNotThrottled,
      limit,
      limitOf,
      check: (v) => checkLimit(limit, v, decl),
      say: (v, g, text) => sayLimit(limit, v, g, text, decl),
    });
    for (const c of checks) {
      const m = measurementOf(decl, limit, c);
      measurements.push(m);
      checked.push({ decl, m, c });
    }
  }
  const reasons =
    version.reasons === 'every-check'
      ? everyCheck(checked, analysis)
      : rules.flatMap((d) =>
          worstPerReceiver(
            d,
            checked.filter((x) => x.decl === d),
          ),
        );
  // Version 1 listed the measurements receiver and phase first, then rule by rule; later versions rule by rule.
  if (version.reasons === 'every-check') sortByPlace(measurements, analysis, (m) => m);

  // A counter reset is an event, never a grade: how its interval was read is the version's analysis.
  const counted =
    resetRuleOf(version.analysis) === 'from-zero'
      ? 'counted from zero after each (only what the counters held between the reading before a clearing and the clearing itself could not be read)'
      : 'those intervals were left out';
  for (const s of analysis.perNodePhase) {
    if (s.counterResets > 0) {
      reasons.push({
        rule: 'counter-reset',
        node: s.node,
        phase: s.phase,
        value: s.counterResets,
        message: `${s.node} ${s.phase}: counters went backwards ${s.counterResets} time(s) (mlxlink --pc or a driver reset); ${counted}`,
      });
    }
  }

  const outcome = worstGrade(measurements.map((m) => m.grade));
  const headline = version.pass === 'loaded-soak' ? headlineOf(analysis, protocol.phases, limitOf('fec-margin'), limitOf('lane-ratio')) : null;
  if (outcome === 'PASS') {
    const bw = checked.filter((x) => x.decl.id === 'ib-write-bw-sum');
    if (version.pass === 'loaded-soak') {
      // What was proven: the loaded soak per receiver, and the throughput when it was graded.
      reasons.unshift(...passStatement(headline, limitOf('fec-margin')), ...bw.map((x) => reasonOf(x.decl, x.m, x.c)));
    } else {
      // The figures closest to their limits: the worst margin, the worst lane ratio, the throughput.
      const closest = (rule: string, worse: (a: number, b: number) => boolean) =>
        checked.filter((x) => x.decl.id === rule).reduce<Checked | null>((w, x) => (w === null || worse(x.m.value, w.m.value) ? x : w), null);
      const figures = [closest('fec-margin', (a, b) => a < b), closest('lane-ratio', (a, b) => a > b), ...bw].filter((x): x is Checked => x !== null);
      reasons.unshift(...figures.map((x) => reasonOf(x.decl, x.m, x.c)));
    }
  }
  reasons.sort((a, b) => rank(a.grade) - rank(b.grade));
  return { outcome, reasons, measurements, headline };
}

// Sort (stably) by the receiver and phase each item was measured on, in the analysis' order; the ones measured on
// none (throughput) last.
function sortByPlace<T>(xs: T[], analysis: AnalysisRecord, m: (x: T) => Measurement): void {
  const place = (x: T) => {
    const i = analysis.perNodePhase.findIndex((s) => s.node === m(x).node && s.phase === m(x).phase);
    return i < 0 ? Infinity : i;
  };
  xs.sort((a, b) => place(a) - place(b));
}

// One reason per check that is not PASS: the count rules of each receiver and phase in the analysis' order, then the
// others rule by rule (how rules version 1 listed them).
function everyCheck(checked: readonly Checked[], analysis: AnalysisRecord): Reason[] {
  const bad = checked.filter((x) => x.c.grade !== 'PASS');
  const counts = bad.filter((x) => x.decl.variant === 'count');
  sortByPlace(counts, analysis, (x) => x.m);
  return [...counts, ...bad.filter((x) => x.decl.variant !== 'count')].map((x) => reasonOf(x.decl, x.m, x.c));
}

// One reason per rule and receiver, for its worst check; the other non-PASS checks of the same rule and receiver are
// listed after it ("also FAIL: lane 0, lane 1"), and every check stays in the measurements.
function worstPerReceiver(decl: RuleDeclaration, checks: Checked[]): Reason[] {
  const bad = checks.filter((x) => x.c.grade !== 'PASS');
  const byNode = new Map<string, typeof bad>();
  for (const x of bad) byNode.set(x.m.node ?? '', [...(byNode.get(x.m.node ?? '') ?? []), x]);
  const out: Reason[] = [];
  for (const xs of byNode.values()) {
    const worse = (a: (typeof xs)[number], b: (typeof xs)[number]) =>
      rank(a.c.grade) < rank(b.c.grade) || (a.c.grade === b.c.grade && (decl.direction === 'min' ? a.m.value < b.m.value : a.m.value > b.m.value));
    const worst = xs.reduce((w, x) => (worse(x, w) ? x : w));
    const r = reasonOf(decl, worst.m, worst.c);
    const others = xs
      .filter((x) => x !== worst)
      .map((x) => `${x.c.grade} ${[x.m.phase, x.m.lane !== undefined ? `lane ${x.m.lane}` : undefined].filter(Boolean).join(' ')}`);
    const uniq = [...new Set(others)];
    if (uniq.length) r.message += `; also ${uniq.slice(0, 6).join(', ')}${uniq.length > 6 ? ', ...' : ''}`;
    out.push(r);
  }
  return out;
}

const rank = (g: Grade | undefined) => (g === 'FAIL' ? 0 : g === 'MARGINAL' ? 1 : g === 'PASS' ? 2 : 3);

function measurementOf(decl: RuleDeclaration, limit: Limit, c: Check): Measurement {
  const m: Measurement = { rule: decl.id, value: c.value, unit: decl.unit, grade: c.grade, limitText: formatLimit(limit, decl) };
  if (c.node !== undefined) m.node = c.node;
  if (c.phase !== undefined) m.phase = c.phase;
  if (c.lane !== undefined) m.lane = c.lane;
  return m;
}

function reasonOf(decl: RuleDeclaration, m: Measurement, c: Check): Reason {
  const at = [m.node, m.phase, m.lane !== undefined ? `lane ${m.lane}` : undefined].filter(Boolean).join(' ');
  const r: Reason = { rule: m.rule, grade: m.grade, message: at ? `${at}: ${c.text}` : c.text, value: m.value, unit: m.unit, limit: m.limitText };
  if (m.node !== undefined) r.node = m.node;
  if (m.phase !== undefined) r.phase = m.phase;
  if (m.lane !== undefined) r.lane = m.lane;
  if (c.atS !== undefined) r.atS = c.atS;
  if (m.grade !== 'PASS') r.advice = decl.advice;
  return r;
}

// The phase a PASS is stated for: the last GPU-loaded soak, else the last soak, else the longest phase with data.
export function headlinePhase(stats: readonly NodePhaseStats[], phases: readonly { name: string; kind: string; gpuLoad?: boolean }[]): string | null {
  const has = (name: string) => stats.some((s) => s.phase === name);
  const soaks = phases.filter((p) => p.kind === 'soak' && has(p.name));
  const loaded = soaks.filter((p) => p.gpuLoad === true).at(-1) ?? soaks.at(-1);
  if (loaded) return loaded.name;
  const longest = [...stats].sort((a, b) => b.seconds - a.seconds)[0];
  return longest?.phase ?? null;
}

// Per receiver of the headline phase: BER upper bound of all lanes and of each lane, NIC temperature, FEC margin, counts.
export function headlineOf(
  analysis: AnalysisRecord,
  phases: readonly { name: string; kind: string; gpuLoad?: boolean }[],
  fecLimit: Limit,
  ratioLimit?: Limit,
): Headline | null {
  const phase = headlinePhase(analysis.perNodePhase, phases);
  if (phase === null) return null;
  const floor = ratioLimit?.params?.['marginalFloorBer'];
  const receivers = analysis.perNodePhase.filter((s) => s.phase === phase).map((s) => receiverOf(s, fecLimit, floor));
  return { phase, receivers };
}

function receiverOf(s: NodePhaseStats, fecLimit: Limit, ratioFloorBer: number | undefined): HeadlineReceiver {
  const errors = s.laneStats.length ? s.laneStats.reduce((a, l) => a + l.errors, 0) : s.correctedBits;
  const all = berBounds(errors, s.seconds * SERIAL_RATE_BPS);
  const lanes = s.laneStats.map((l) => ({ lane: l.lane, errors: l.errors, berUb95: l.berUb95 }));
  const worstUb = lanes.length ? Math.max(...lanes.map((l) => l.berUb95)) : (s.correctedBitsBerUb95 ?? null);
  const fecMarginDecades = worstUb === null ? null : decadesBelowFecLimit(worstUb);
  const belowFloor = ratioFloorBer !== undefined && s.worstLaneBerLb95 !== undefined && s.worstLaneBerLb95 < ratioFloorBer;
  const laneRatio =
    s.laneStats.length < 2
      ? 'one lane'
      : s.worstLane === null
        ? 'no errors'
        : `${s.ratioAgainstZero ? 'at least ' : ''}${formatNumber(s.worstLaneRatio)}x (lane ${s.worstLane}${belowFloor ? `, below the ${ratioFloorBer!.toExponential(0)} floor: not graded` : ''})`;
  const temp = s.nicTempMeanC !== null ? `NIC ${s.nicTempMeanC.toFixed(1)} °C mean, ${s.nicTempMaxC!.toFixed(1)} max` : 'NIC temperature not read';
  const laneText = !lanes.length
    ? 'no per-lane counters: corrected bits of all lanes'
    : errors === 0
      ? `no errors on ${lanes.length} lanes, each below ${sci(Math.max(...lanes.map((l) => l.berUb95)))}`
      : lanes.map((l) => `lane ${l.lane} below ${sci(l.berUb95)}${l.errors ? ` (${l.errors} errors)` : ''}`).join(', ');
  const margin = fecMarginDecades === null ? '' : `, FEC margin ${fecMarginDecades.toFixed(1)} decades (${formatLimit(fecLimit)})`;
  const statement =
    `${s.node}, ${s.phase} (${duration(s.seconds)} at ${SERIAL_RATE_BPS / 1e9} Gb/s, ${temp}): pre-FEC BER below ${sci(all.ub95)} ` +
    `(95% upper bound, ${errors} errors; ${laneText})${margin}; ${s.crcErrors} CRC, ${s.postFecErrors} post-FEC, ${s.linkDownEvents} link-down; lane ratio: ${laneRatio}`;
  return {
    node: s.node,
    seconds: s.seconds,
    errors,
    berUb95: all.ub95,
    lanes,
    fecMarginDecades,
    nicTempMeanC: s.nicTempMeanC,
    nicTempMaxC: s.nicTempMaxC,
    crcErrors: s.crcErrors,
    postFecErrors: s.postFecErrors,
    linkDownEvents: s.linkDownEvents,
    laneRatio,
    statement,
  };
}

// The reasons of a PASS: one statement per receiver of the headline phase.
function passStatement(headline: Headline | null, fecLimit: Limit): Reason[] {
  return (headline?.receivers ?? []).map((r) => ({
    rule: 'fec-margin',
    grade: 'PASS',
    node: r.node,
    phase: headline!.phase,
    message: r.statement,
    ...(r.fecMarginDecades !== null && Number.isFinite(r.fecMarginDecades) ? { value: r.fecMarginDecades } : {}),
    unit: 'decades',
    limit: formatLimit(fecLimit),
  }));
}

function duration(s: number): string {
  return s >= 120 ? `${formatNumber(Math.round(s / 6) / 10)} min` : `${formatNumber(Math.round(s))} s`;
}
