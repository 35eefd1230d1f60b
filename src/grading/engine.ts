// Grading a journal's samples with a given version of the rules: today's (the registry, version 2) or version 1
// (frozen in ./v1). The record builder calls this; `verify` picks the version the certificate names.
import type { Grade, Reason } from '../domain/outcome.js';
import type { AnalysisRecord, BenchmarkRecord, Headline } from '../domain/record.js';
import type { Measurement } from '../domain/limit.js';
import type { NodeSample } from '../domain/sample.js';
import type { Protocol } from '../protocol/types.js';
import { RunAnalyzer, gradedPhasesOf } from '../analysis/analyze.js';
import { EarlyStopDetector, type EarlyStopDecision } from '../analysis/early-stop.js';
import { RULES_VERSION } from '../rules/registry.js';
import { formatLimit } from '../rules/in-range.js';
import { watchSettingsOf } from '../rules/watch.js';
import { gradeRun } from './grade-run.js';
import { gradeWithV1, protocolV1 } from './v1/engine.js';

// The rules versions this code can grade with (1 frozen, 2 today's).
export const KNOWN_RULES_VERSIONS = [1, RULES_VERSION] as const;

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
  decision: Reason | null; // the watch's first certain FAIL (what stopped the run early), from the samples
  headline: Headline | null;
}

// The live run's watch: the same detector a re-grade runs, configured from the protocol.
export function liveWatch(protocol: Pick<Protocol, 'limits' | 'phases'>, lanes: number | null): EarlyStopDetector {
  const graded = gradedPhasesOf(protocol.phases);
  return new EarlyStopDetector({ ...watchSettingsOf(protocol.limits), gradedPhases: graded ? new Set(graded) : null, ...(lanes ? { lanes } : {}) });
}

// The watch's decision as a FAIL reason, with the limit text the certificate prints beside the value.
export function decisionReason(d: EarlyStopDecision, protocol: Pick<Protocol, 'limits'>): Reason {
  const limit = protocol.limits.find((l) => l.rule === d.rule);
  return {
    rule: d.rule,
    grade: 'FAIL',
    message: d.message,
    node: d.node,
    phase: d.phase,
    value: d.value,
    atS: d.tS,
    ...(limit ? { unit: limit.unit, limit: formatLimit(limit) } : {}),
    ...(d.lane !== undefined ? { lane: d.lane } : {}),
  };
}

// Grade with today's rules: analysis and watch in one pass over the samples (streamed when every node's samples are
// in time order), the registry's rules over the analysis, and the watch's decision when no rule already FAILs.
export function gradeWithCurrent(samples: JournalSamples, protocol: Protocol, benchmarks: BenchmarkRecord, lanes: number | null): GradedJournal {
  const analyzer = new RunAnalyzer(protocol.phases, watchSettingsOf(protocol.limits), lanes ?? undefined);
  for (const [node, n] of samples.nodes) analyzer.node(node, n.netdev, n.lanes ?? lanes ?? null);
  if ([...samples.nodes.values()].every((n) => n.ordered)) {
    samples.forEach((phase, sample, tS) => analyzer.push(phase, sample, tS), true);
  } else {
    // Out of order (clock steps, merged journals): each node's samples sorted by its own clock, nodes one after the other.
    const byNode = new Map<string, { phase: string; sample: NodeSample; tS: number }[]>();
    samples.forEach((phase, sample, tS) => {
      const list = byNode.get(sample.node) ?? [];
      list.push({ phase, sample, tS });
      byNode.set(sample.node, list);
    }, true);
    for (const list of byNode.values()) {
      list.sort((a, b) => a.sample.tMs - b.sample.tMs);
      for (const x of list) analyzer.push(x.phase, x.sample, x.tS);
    }
  }
  const analysis = analyzer.finish();
  const graded = gradeRun(analysis, benchmarks, protocol);
  const decision = analyzer.decision ? decisionReason(analyzer.decision, protocol) : null;
  let outcome = graded.outcome;
  let reasons = graded.reasons;
  if (decision && !reasons.some((r) => r.grade === 'FAIL')) {
    outcome = 'FAIL';
    reasons = [decision, ...reasons.filter((r) => r.grade !== 'PASS')];
  }
  return {
    version: RULES_VERSION,
    analysis,
    outcome,
    reasons,
    measurements: graded.measurements,
    decidedAtS: decision && outcome === 'FAIL' ? analyzer.decision!.tS : null,
    decision,
    headline: graded.headline,
  };
}

// Grade with the rules of `version`: today's, or version 1 frozen (it reads the protocol text as version 1 did).
export function gradeWithVersion(
  version: number,
  samples: JournalSamples,
  protocol: Protocol,
  protocolText: string,
  benchmarks: BenchmarkRecord,
  lanes: number | null,
): GradedJournal {
  if (version === RULES_VERSION) return gradeWithCurrent(samples, protocol, benchmarks, lanes);
  if (version === 1) {
    const g = gradeWithV1(samples, protocolV1(JSON.parse(protocolText)), benchmarks, lanes);
    return {
      version: 1,
      analysis: g.analysis,
      outcome: g.outcome,
      reasons: g.reasons,
      measurements: g.measurements,
      decidedAtS: g.decidedAtS,
      decision: null,
      headline: null,
    };
  }
  throw new RangeError(`rules version ${version} is not known to this cablequal (it grades with versions ${KNOWN_RULES_VERSIONS.join(' and ')})`);
}
