// A run's result computed once from its record (the record builder's last step, src/run/record-builder.ts): what
// kind of run it was, whether it qualifies a cable, and each figure under its one name and definition
// (src/domain/result.ts). Every output reads it through resultOfRecord, which computes it for records written before
// it was stored. Pure: no I/O, no clock.
import { fecMarginOf } from '../analysis/analyze.js';
import { CABLE_VERDICTS } from '../domain/outcome.js';
import type { NodePhaseStats, RunRecord } from '../domain/record.js';
import { clusterCheckText, type ClusterCheckRecord } from '../domain/cluster-check.js';
import { RESULT_VERSION, reasonJson, type ClusterCheckResult, type Located, type ResultKind, type RunResult, type SoakFigures } from '../domain/result.js';

// A lane ratio as a reader should see it: "no errors" when no lane had any, "at least" when only bounded.
export function laneRatioText(p: { laneStats: readonly unknown[]; worstLane: number | null; worstLaneRatio: number; ratioAgainstZero?: boolean }): string {
  if (p.laneStats.length < 2) return '—';
  if (p.worstLane === null || !(p.worstLaneRatio > 0)) return 'no errors';
  const v = p.worstLaneRatio >= 100 ? p.worstLaneRatio.toFixed(0) : String(Number(p.worstLaneRatio.toPrecision(2)));
  return `${p.ratioAgainstZero ? 'at least ' : ''}${v}x`;
}

// What the run was: a preflight (only the preflight phase ran: records before the kind said so too), else the kind the
// record states (records before set-up checks were told apart got a certificate: a qualification).
function kindOf(record: RunRecord): ResultKind {
  if (record.kind === 'preflight') return 'preflight';
  if (record.phases.length > 0 && record.phases.every((p) => p.kind === 'preflight')) return 'preflight';
  return record.kind === 'setup-check' ? 'setup-check' : 'qualification';
}

// The worst of `stats` by `score` (highest), located; null when none scores.
function worstOf(stats: readonly NodePhaseStats[], score: (s: NodePhaseStats) => { value: number; lane: number | null } | null): Located | null {
  let best: Located | null = null;
  for (const s of stats) {
    const x = score(s);
    if (x && (best === null || x.value > best.value)) best = { value: x.value, node: s.node, phase: s.phase, lane: x.lane };
  }
  return best;
}

// "FEC margin" over some receiver-phases: the worst lane's bound, as decades below the RS(544,514) input limit.
function marginOver(stats: readonly NodePhaseStats[]): Located | null {
  const worst = worstOf(stats, (s) => {
    const m = fecMarginOf(s);
    return m ? { value: -m.decades, lane: m.lane } : null;
  });
  return worst ? { ...worst, value: -worst.value } : null;
}

function soakFigures(phase: string, stats: readonly NodePhaseStats[]): SoakFigures {
  const of = stats.filter((s) => s.phase === phase);
  const max = (xs: number[]) => (xs.length ? Math.max(...xs) : null);
  return {
    phase,
    seconds: of.length ? Math.min(...of.map((s) => s.seconds)) : 0,
    preFecBer: max(of.map((s) => s.preFecBer).filter(Number.isFinite)),
    preFecBerUb95: max(of.map((s) => s.preFecBerUb95).filter(Number.isFinite)),
  };
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

// Records of rules version 1 (their analysis names no graded phases) stated their FEC margin by another definition (the
// worst receiver-phase's BER bound of all lanes together, over every phase): it is read as they stated it, at the
// receiver-phase whose bound it is. Later records state it over the graded soaks, as marginOver computes it.
function recordedMargin(record: RunRecord, stats: readonly NodePhaseStats[]): Located | null {
  const a = record.analysis;
  if (!a || a.gradedPhases !== undefined || a.fecMarginDecades === null || !Number.isFinite(a.fecMarginDecades)) return null;
  const at = stats.reduce<NodePhaseStats | null>((w, s) => (w === null || s.preFecBerUb95 > w.preFecBerUb95 ? s : w), null);
  return at ? { value: a.fecMarginDecades, node: at.node, phase: at.phase, lane: null } : null;
}

// The result of a finished record.
export function resultOf(record: RunRecord): RunResult {
  const kind = kindOf(record);
  const role = record.role === 'golden' ? 'golden' : 'cable';
  const judged = CABLE_VERDICTS.includes(record.outcome);
  const stats = kind === 'preflight' ? [] : (record.analysis?.perNodePhase ?? []);
  // The graded phases are the soaks, and only those with data (a run with no soak has no bound and no headline).
  const soakNames = record.phases.filter((p) => p.kind === 'soak').map((p) => p.name);
  const gradedPhases = [...new Set(soakNames)].filter((name) => stats.some((s) => s.phase === name));
  const graded = stats.filter((s) => gradedPhases.includes(s.phase));
  // The headline is the record's, when it is a graded soak (a record without one, as of rules version 1, states none).
  const headlinePhase = record.headline && gradedPhases.includes(record.headline.phase) ? record.headline.phase : null;
  const worstLaneOf = (s: NodePhaseStats) => {
    const l = s.laneStats.reduce<(typeof s.laneStats)[number] | null>((w, x) => (w === null || x.berUb95 > w.berUb95 ? x : w), null);
    return l ? { value: l.berUb95, lane: l.lane } : null;
  };
  const worstLane = worstOf(graded, worstLaneOf);
  const worstLaneStats = worstLane ? graded.find((s) => s.node === worstLane.node && s.phase === worstLane.phase) : undefined;
  const ratioStats = graded
    .filter((s) => s.laneStats.length >= 2)
    .reduce<NodePhaseStats | null>((w, s) => (w === null || s.worstLaneRatio > w.worstLaneRatio ? s : w), null);
  const soaks = gradedPhases.map((p) => soakFigures(p, graded));
  // The loaded soak: the headline soak, else (records without a headline) the last graded soak.
  const loadedAt = soaks.findIndex((s) => s.phase === (headlinePhase ?? gradedPhases.at(-1)));
  const deciding =
    record.outcome === 'PASS'
      ? undefined
      : record.outcome === 'FAIL' || record.outcome === 'MARGINAL'
        ? (record.reasons.find((r) => r.grade === record.outcome) ?? record.reasons[0])
        : record.reasons[0];
  // The counts are the count rules' own: every phase, both receivers (a CRC error in a benchmark fails the cable too).
  const counted = stats.length > 0;
  const recovered = stats.filter((s) => s.recoveries !== undefined);
  const temps = graded.map((s) => s.nicTempMaxC).filter((t): t is number => t !== null && Number.isFinite(t));
  return {
    version: RESULT_VERSION,
    kind,
    role,
    outcome: record.outcome,
    judged,
    qualifies: judged && kind === 'qualification' && role === 'cable',
    gradedPhases,
    headlinePhase,
    fecMargin: recordedMargin(record, stats) ?? marginOver(graded),
    headlineMargin: headlinePhase === null ? null : marginOver(graded.filter((s) => s.phase === headlinePhase)),
    worstLaneBer: worstLane && worstLaneStats ? { ...worstLane, ber: worstLaneStats.laneStats.find((l) => l.lane === worstLane.lane)?.ber ?? 0 } : null,
    headlineWorstLaneBer:
      headlinePhase === null
        ? null
        : worstOf(
            graded.filter((s) => s.phase === headlinePhase),
            worstLaneOf,
          ),
    laneRatio: ratioStats
      ? {
          value: ratioStats.worstLaneRatio,
          node: ratioStats.node,
          phase: ratioStats.phase,
          lane: ratioStats.worstLane,
          text: laneRatioText(ratioStats),
          againstZero: ratioStats.ratioAgainstZero === true,
        }
      : null,
    deciding: deciding ? reasonJson(deciding) : null,
    decidedAtS: record.decidedAtS,
    crcErrors: counted ? sum(stats.map((s) => s.crcErrors)) : null,
    postFecErrors: counted ? sum(stats.map((s) => s.postFecErrors)) : null,
    linkDownEvents: counted ? sum(stats.map((s) => s.linkDownEvents)) : null,
    recoveries: recovered.length ? sum(recovered.map((s) => s.recoveries!)) : null,
    nicTempMaxC: temps.length ? Math.max(...temps) : null,
    soaks,
    loadedSoak: loadedAt >= 0 ? soaks[loadedAt]! : null,
    idleSoak: loadedAt > 0 ? soaks[loadedAt - 1]! : null,
    ibWriteBwGbps: record.benchmarks.ibWriteBw?.sumMedianGbps ?? null,
    ncclBusbwGBs: record.benchmarks.nccl?.busbwGBs ?? null,
    ...(record.clusterCheck ? { clusterCheck: clusterCheckResult(record.clusterCheck) } : {}),
  };
}

// The cluster's check as every output states it: its figure against the topology's limit (src/domain/cluster-check.ts).
function clusterCheckResult(c: ClusterCheckRecord): ClusterCheckResult {
  const { met, limit, text } = clusterCheckText(c);
  return { topology: c.topology, nodes: c.nodes, busbwGBs: c.busbwGBs, minBusbwGBs: limit.minBusbwGBs, met, problem: c.problem, text };
}

// The one reader of a record's result: the stored one when it is of this version, else computed from the record
// (records written before results were stored, or by another version).
export function resultOfRecord(record: RunRecord): RunResult {
  const stored = record.result;
  return stored && stored.version === RESULT_VERSION ? stored : resultOf(record);
}
