// The rules versions, each a declaration over the one registry (src/rules/definitions.ts) and the one set of pure
// functions in src/analysis: which rules it grades with and which variant of each, which variant of the analysis and
// of the watch, and how it states its verdict. Every record and certificate names the version that produced it, and
// `verify` grades a certificate again with the version that signed it. A version never changes once released: the
// compat journals and their golden grades (test/compat) hold each one to what it concluded. Adding one is an entry
// here (usually the last one with a change) and its golden grades (`npx tsx scripts/golden-grades.ts`).
import type { AnalysisVariant } from '../analysis/analyze.js';
import { RULE_DEFINITIONS, type RuleDeclaration } from './definitions.js';

// How a version states its verdict and treats the journal's stop.
export interface RulesVersion {
  version: number;
  // Rule id -> the variant of its measuring this version grades with; the order of the reasons follows it.
  rules: Readonly<Record<string, string>>;
  analysis: AnalysisVariant;
  // The early-stop watch: version 2's held sliding windows, or version 1's lane ratio of single ticks held for
  // earlyStop.laneRatioConsecutiveTicks ticks (5 when the protocol does not say).
  watch: 'held-windows' | 'tick-streak';
  // 'worst-per-receiver': one reason per rule and receiver (the others listed in it); 'every-check': one reason per
  // check that is not PASS, the count rules of each receiver and phase first.
  reasons: 'worst-per-receiver' | 'every-check';
  // What a PASS states: the loaded soak per receiver (the record's headline), or the figures closest to their limits.
  pass: 'loaded-soak' | 'closest-figures';
  // A stop the journal records but this version's watch does not confirm makes the run ERROR (the soaks never ran);
  // the watch's decision is kept in the record. Version 1 did neither.
  confirmsStop: boolean;
  // The version states the decision's time in its reason and what loading the protocol had to decide in notes.
  decisionTime: boolean;
  protocolNotes: boolean;
}

const V1: RulesVersion = {
  version: 1,
  rules: {
    'crc-errors': 'count',
    'post-fec-errors': 'count',
    'link-down-events': 'count',
    'fec-margin': 'worst-upper-bound',
    'lane-ratio': 'rate-ratio',
    'ib-write-bw-sum': 'sum-of-rails',
    'loopback-floor': 'per-rail',
    'gpu-util-min': 'mean',
  },
  analysis: { bounds: 'exact', laneRatio: 'rate', summaryPhases: 'all', tempSlope: 'regression' },
  watch: 'tick-streak',
  reasons: 'every-check',
  pass: 'closest-figures',
  confirmsStop: false,
  decisionTime: false,
  protocolNotes: false,
};

const V2: RulesVersion = {
  version: 2,
  rules: {
    'crc-errors': 'count',
    'post-fec-errors': 'count',
    'link-down-events': 'count',
    'fec-margin': 'bounds',
    'fec-window': 'held-windows',
    'lane-ratio': 'certain-above-floors',
    'ib-write-bw-sum': 'per-direction',
    'loopback-floor': 'per-rail',
    'gpu-util-min': 'mean',
  },
  analysis: { bounds: 'fast', laneRatio: 'certain', summaryPhases: 'graded', tempSlope: 'lane-bins' },
  watch: 'held-windows',
  reasons: 'worst-per-receiver',
  pass: 'loaded-soak',
  confirmsStop: true,
  decisionTime: true,
  protocolNotes: true,
};

// Version 3: a verdict stands on the conditions the run measured. The link load of every soak is checked from the
// throughput rows the run journals as it goes (soak-link-load); GPU load is judged only on samples after the load
// started, over the whole loaded soak, and a load that stops is noticed; counters cleared without a reboot (mlxlink
// --pc, a driver reset) count from zero, so the errors counted after a clearing are never lost (versions 1 and 2 left
// the interval of a clearing out).
const V3: RulesVersion = {
  ...V2,
  version: 3,
  rules: { ...V2.rules, 'gpu-util-min': 'after-load-start', 'soak-link-load': 'median-per-direction' },
  analysis: { ...V2.analysis, counterResets: 'from-zero' },
};

// Version 4: both PCIe functions of the cabled cage are read every tick, and each counter is graded as the larger of
// the two (whether both report the one physical port's counters is documented nowhere: docs/formats.md §0); where
// they counted differently the record and the certificate say so (analysis.functionDivergence). Journals whose second
// function matches the first (every one written before) grade as under version 3.
const V4: RulesVersion = { ...V3, version: 4, analysis: { ...V3.analysis, functions: 'larger' } };

// Version 5: successful PHY recoveries without a link drop (total_success_recovery_phy, newer mlx5 kernels) are graded
// per receiver over the run: one is MARGINAL, a second FAIL (docs/protocol.md "PHY recoveries"). A journal without the
// counter grades as under version 4, and its record says the recoveries were not counted.
const V5: RulesVersion = { ...V4, version: 5, rules: { ...V4.rules, 'phy-recoveries': 'count-per-receiver' } };

// Every released version, oldest first; the last is today's.
export const RULES_VERSIONS: readonly RulesVersion[] = [V1, V2, V3, V4, V5];

// Today's rules version: what a new run is graded with.
export const RULES_VERSION = RULES_VERSIONS.at(-1)!.version;

// The version numbers this cablequal can grade with.
export const KNOWN_RULES_VERSIONS: readonly number[] = RULES_VERSIONS.map((v) => v.version);

// The declaration of a version, or undefined for one this cablequal does not know.
export function rulesVersionOf(version: number): RulesVersion | undefined {
  return RULES_VERSIONS.find((v) => v.version === version);
}

const resolved = new Map<number, readonly RuleDeclaration[]>();

// The rules a version grades with, each with the variant it picked (one array per version, so it can key caches).
export function rulesOf(version: number): readonly RuleDeclaration[] {
  let out = resolved.get(version);
  if (out) return out;
  const v = rulesVersionOf(version);
  if (!v) throw new RangeError(`rules version ${version} is not known (known: ${KNOWN_RULES_VERSIONS.join(', ')})`);
  out = Object.entries(v.rules).map(([id, variant]) => {
    const def = RULE_DEFINITIONS.find((r) => r.id === id);
    const m = def?.variants[variant];
    if (!def || !m) throw new RangeError(`rules version ${v.version}: ${def ? `rule ${id} has no variant "${variant}"` : `no rule "${id}" in the registry`}`);
    const since = RULES_VERSIONS.find((x) => x.rules[id] !== undefined)!.version;
    const { variants: _all, ...rest } = def;
    return { ...rest, ...m, variant, since };
  });
  resolved.set(version, out);
  return out;
}

// Today's rules (what a new run is graded with, validated against and documented).
export const RULES: readonly RuleDeclaration[] = rulesOf(RULES_VERSION);

// Today's declaration of a rule id, or undefined for one today's rules do not grade with.
export function ruleOf(id: string): RuleDeclaration | undefined {
  return RULES.find((r) => r.id === id);
}
