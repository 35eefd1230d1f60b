// Rules version 1, FROZEN: the analysis, grading and early-stop detector that cablequal 0.1.0 graded cables with,
// copied unchanged (only import paths and types made local) from src/analysis and src/grading at commit 9335ccf.
// `cablequal verify` re-grades a certificate signed by version 1 with this module, and `grade --rules 1` uses it.
// Never change what it concludes: a lab holds version 1 certificates for years. Fix bugs in today's rules instead.
import type { Grade, Reason } from '../../domain/outcome.js';
import type { BenchmarkRecord } from '../../domain/record.js';
import type { NodeSample } from '../../domain/sample.js';
import { analyzeRun, RunAnalyzer, type LabelledSample } from './analyze.js';
import { EarlyStopDetector } from './early-stop.js';
import { gradeRun } from './grade-run.js';
import { formatLimit } from './in-range.js';
import type { AnalysisRecord, Limit, Measurement, ProtocolV1 } from './types.js';

export type { AnalysisRecord as AnalysisRecordV1, ProtocolV1 } from './types.js';

export const RULES_VERSION_1 = 1;

// A journal's samples as the record builder hands them over: per node what one pass told, then every sample in journal order.
export interface JournalSamplesV1 {
  count: number;
  nodes: ReadonlyMap<string, { netdev: string | undefined; lanes: number | null; ordered: boolean }>;
  forEach(fn: (phase: string, sample: NodeSample, tS: number) => void, canonicalOnly: boolean): void;
}

// What version 1 concluded from the samples.
export interface GradedV1 {
  analysis: AnalysisRecord;
  outcome: Grade;
  reasons: Reason[];
  measurements: Measurement[];
  decidedAtS: number | null;
}

// What version 1 read of a protocol file's JSON (it was validated when the run started).
export function protocolV1(json: unknown): ProtocolV1 {
  const o = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const phases = Array.isArray(o['phases']) ? (o['phases'] as Record<string, unknown>[]) : [];
  const limits = Array.isArray(o['limits']) ? (o['limits'] as Limit[]).filter((l) => typeof l?.rule === 'string' && typeof l.fail === 'number') : [];
  const es = (o['earlyStop'] ?? {}) as Record<string, unknown>;
  const interval = typeof o['samplingIntervalS'] === 'number' ? o['samplingIntervalS'] : 1;
  // A later protocol says how long in seconds; version 1 counted ticks.
  const ticks = typeof es['laneRatioConsecutiveTicks'] === 'number' ? es['laneRatioConsecutiveTicks'] : typeof es['holdS'] === 'number' ? Math.max(1, Math.round(es['holdS'] / interval)) : 5;
  return {
    phases: phases.map((p) => ({ name: String(p['name']), kind: String(p['kind']), ...(typeof p['gpuLoad'] === 'boolean' ? { gpuLoad: p['gpuLoad'] } : {}) })),
    limits,
    laneRatioConsecutiveTicks: ticks,
  };
}

// Grade a journal's samples with the version 1 rules. The early-stop detector is run again over the samples (its
// decision was also journaled as a `decision` line; re-running it gives the same FAIL from the samples themselves).
export function gradeWithV1(samples: JournalSamplesV1, protocol: ProtocolV1, benchmarks: BenchmarkRecord, lanes: number | null): GradedV1 {
  const detector = new EarlyStopDetector({ limits: protocol.limits, laneRatioConsecutiveTicks: protocol.laneRatioConsecutiveTicks, ...(lanes ? { lanes } : {}) });
  let decision: { reason: Reason; tS: number } | null = null;
  const detect = (phase: string, sample: NodeSample, tS: number) => {
    if (decision) return;
    const d = detector.push(sample);
    if (!d) return;
    const limit = protocol.limits.find((l) => l.rule === d.rule);
    const reason: Reason = {
      rule: d.rule,
      grade: 'FAIL',
      message: d.message,
      node: d.node,
      phase,
      value: d.value,
      ...(limit ? { unit: limit.unit, limit: formatLimit(limit) } : {}),
      ...(d.lane !== undefined ? { lane: d.lane } : {}),
    };
    decision = { reason, tS };
  };

  let analysis: AnalysisRecord;
  if ([...samples.nodes.values()].some((n) => !n.ordered)) {
    const all: LabelledSample[] = [];
    samples.forEach((phase, sample, tS) => {
      all.push({ phase, sample });
      detect(phase, sample, tS);
    }, false);
    analysis = analyzeRun({ samples: all, phases: protocol.phases, ...(lanes ? { lanes } : {}) });
  } else {
    const analyzer = new RunAnalyzer(protocol.phases);
    for (const [node, n] of samples.nodes) analyzer.node(node, n.netdev, n.lanes ?? lanes ?? null);
    samples.forEach((phase, sample, tS) => {
      analyzer.push(phase, sample);
      detect(phase, sample, tS);
    }, true);
    analysis = analyzer.finish();
  }

  const graded = gradeRun(analysis, benchmarks, protocol);
  let outcome = graded.outcome;
  let reasons = graded.reasons;
  const d = decision as { reason: Reason; tS: number } | null;
  if (d && !reasons.some((r) => r.grade === 'FAIL')) {
    outcome = 'FAIL';
    reasons = [d.reason, ...reasons];
  }
  return { analysis, outcome, reasons, measurements: graded.measurements, decidedAtS: d && outcome === 'FAIL' ? d.tS : null };
}
