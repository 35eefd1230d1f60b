// Grading a journal's samples with a rules version (src/rules/versions.ts): its analysis and watch over the samples,
// its rules over the analysis, the watch's decision when no rule already FAILs. The record builder calls this;
// `verify` picks the version the certificate names.
import type { Grade, Reason } from '../domain/outcome.js';
import type { AnalysisRecord, BenchmarkRecord, Headline } from '../domain/record.js';
import type { Measurement } from '../domain/limit.js';
import type { NodeSample } from '../domain/sample.js';
import type { Protocol } from '../protocol/types.js';
import { RunAnalyzer, functionsRuleOf, gradedPhasesOf, watchOf } from '../analysis/analyze.js';
import type { EarlyStopDecision, RunWatch } from '../analysis/watch.js';
import { RULES_VERSION, rulesVersionOf, type RulesVersion } from '../rules/versions.js';
import { formatLimit } from '../rules/in-range.js';
import { watchConfigOf } from '../rules/watch-config.js';
import { gradeRun } from './grade-run.js';

// A journal's samples as the record builder hands them over: per node what one pass over the lines told (canonical
// netdev, lane count, whether its samples are in time order), then every sample in journal order with its line's tS.
export interface JournalSamples {
  count: number;
  nodes: ReadonlyMap<string, { netdev: string | undefined; lanes: number | null; ordered: boolean }>;
  forEach(fn: (phase: string, sample: NodeSample, tS: number) => void, canonicalOnly: boolean): void;
}

// What a version of the rules concluded from the samples.
export interface GradedJournal {
  version: number;
  analysis: AnalysisRecord;
  outcome: Grade;
  reasons: Reason[];
  measurements: Measurement[];
  decidedAtS: number | null;
  decision: Reason | null; // the watch's first certain FAIL (what stopped the run early), when the version confirms stops
  headline: Headline | null;
}

// The live run's watch: the same watch a re-grade with today's rules runs, configured from the protocol.
export function liveWatch(protocol: Pick<Protocol, 'limits' | 'phases' | 'earlyStop'>, lanes: number | null): RunWatch {
  const graded = gradedPhasesOf(protocol.phases);
  return watchOf(watchConfigOf(rulesVersionOf(RULES_VERSION)!, protocol.limits, protocol.earlyStop), graded ? new Set(graded) : null, lanes ?? undefined);
}

// The watch's decision as a FAIL reason, with the limit text the certificate prints beside the value (and when it was
// decided, for the versions that say so).
export function decisionReason(d: EarlyStopDecision, protocol: Pick<Protocol, 'limits'>, withTime = true): Reason {
  const limit = protocol.limits.find((l) => l.rule === d.rule);
  return {
    rule: d.rule,
    grade: 'FAIL',
    message: d.message,
    node: d.node,
    phase: d.phase,
    value: d.value,
    ...(withTime ? { atS: d.tS } : {}),
    ...(limit ? { unit: limit.unit, limit: formatLimit(limit) } : {}),
    ...(d.lane !== undefined ? { lane: d.lane } : {}),
  };
}

// Grade with a rules version: analysis and watch in one pass over the samples (streamed when every node's samples are
// in time order), the version's rules over the analysis, and the watch's decision when no rule already FAILs. The
// protocol was read with the version's rules (its limits hold each of them).
export function gradeWithVersion(
  version: number,
  samples: JournalSamples,
  protocol: Protocol,
  benchmarks: BenchmarkRecord,
  lanes: number | null,
): GradedJournal {
  const v: RulesVersion | undefined = rulesVersionOf(version);
  if (!v) throw new RangeError(`rules version ${version} is not known to this cablequal`);
  const analyzer = new RunAnalyzer(protocol.phases, watchConfigOf(v, protocol.limits, protocol.earlyStop), lanes ?? undefined, v.analysis);
  for (const [node, n] of samples.nodes) analyzer.node(node, n.netdev, n.lanes ?? lanes ?? null);
  // The canonical rail's counters alone, unless the version reads every function of the cage.
  const canonicalOnly = functionsRuleOf(v.analysis) === 'first';
  if ([...samples.nodes.values()].every((n) => n.ordered)) {
    samples.forEach((phase, sample, tS) => analyzer.push(phase, sample, tS), canonicalOnly);
  } else {
    // Out of order (clock steps, merged journals): each node's samples sorted by its own clock, nodes one after the other.
    const byNode = new Map<string, { phase: string; sample: NodeSample; tS: number }[]>();
    samples.forEach((phase, sample, tS) => {
      const list = byNode.get(sample.node) ?? [];
      list.push({ phase, sample, tS });
      byNode.set(sample.node, list);
    }, canonicalOnly);
    for (const list of byNode.values()) {
      list.sort((a, b) => a.sample.tMs - b.sample.tMs);
      for (const x of list) analyzer.push(x.phase, x.sample, x.tS);
    }
  }
  const analysis = analyzer.finish();
  const graded = gradeRun(analysis, benchmarks, protocol, v);
  const decision = analyzer.decision ? decisionReason(analyzer.decision, protocol, v.decisionTime) : null;
  let outcome = graded.outcome;
  let reasons = graded.reasons;
  if (decision && !reasons.some((r) => r.grade === 'FAIL')) {
    outcome = 'FAIL';
    // Version 1 kept the figures a PASS would have stated after the decision; later versions keep what was not PASS.
    reasons = [decision, ...(v.confirmsStop ? reasons.filter((r) => r.grade !== 'PASS') : reasons)];
  }
  return {
    version,
    analysis,
    outcome,
    reasons,
    measurements: graded.measurements,
    decidedAtS: decision && outcome === 'FAIL' ? analyzer.decision!.tS : null,
    decision: v.confirmsStop ? decision : null,
    headline: graded.headline,
  };
}
