// A run's result: every figure an output shows of a finished run, computed once from the record (src/rules/result.ts,
// the record builder's last step) and stored as `record.result`. The terminal, --json, the certificate, the CSVs,
// compare, the store row, the dashboard, the metrics and JUnit render it; none computes a figure of its own.
// docs/outputs.md documents each field.
import type { Grade, Outcome, Reason } from './outcome.js';

// The version of this shape: a stored result of another version is computed again from its record.
export const RESULT_VERSION = 1;

// What a run is: a qualification (the whole burn-in), a set-up check (a protocol short of it: qualifies no cable), or
// a preflight (checks the nodes; not a run of a cable: never imported, compared or counted).
export type ResultKind = 'qualification' | 'setup-check' | 'preflight';

// A figure and where it was seen: the receiver (node), the phase, the lane (null: all lanes together).
export interface Located {
  value: number;
  node: string;
  phase: string;
  lane: number | null;
}

// One reason as every JSON output and the store give it: each field always present (null when it does not apply).
export interface ReasonJson {
  rule: string;
  grade: Grade | null; // PASS, MARGINAL, FAIL; null for a reason that is not a grade (why a run could not judge)
  node: string | null;
  phase: string | null;
  lane: number | null;
  rail: number | null;
  value: number | string | null;
  unit: string | null;
  limit: string | null;
  atS: number | null; // seconds into the run when it was seen (a window's hold, an early stop)
  message: string; // the full sentence (the certificate's)
  advice: string | null;
}

// Per soak that was graded: the worst receiver's pre-FEC BER (point estimate and 95% upper bound) over it.
export interface SoakFigures {
  phase: string;
  seconds: number; // the shortest receiver's
  preFecBer: number | null;
  preFecBerUb95: number | null;
}

export interface RunResult {
  version: typeof RESULT_VERSION;
  kind: ResultKind;
  role: 'cable' | 'golden'; // golden: the batch's reference cable, run first and last to check the bench
  outcome: Outcome;
  judged: boolean; // PASS, MARGINAL or FAIL: the cable was judged
  // Judged, a qualification, and a cable (not the golden reference): what every count of qualified cables, yield and
  // histogram counts.
  qualifies: boolean;
  gradedPhases: string[]; // the soaks error rates were graded on (empty: no soak, so no bound and no headline)
  headlinePhase: string | null; // the soak a certificate states first: the last GPU-loaded soak, else the last soak
  // "FEC margin": log10(2.4e-4 / the worst lane's pre-FEC BER 95% upper bound) over the graded soaks, decades.
  fecMargin: Located | null;
  // "loaded-soak FEC margin": the same over the headline soak only (what the certificate's headline table shows).
  headlineMargin: Located | null;
  // "worst-lane BER": the worst lane's pre-FEC BER 95% upper bound over the graded soaks (and its point estimate).
  worstLaneBer: (Located & { ber: number }) | null;
  // "loaded-soak worst-lane BER": the same over the headline soak only (the certificate's headline table's "below").
  headlineWorstLaneBer: Located | null;
  // "lane ratio": the worst lane against the others' median over the graded soaks, with its one text.
  laneRatio: (Located & { text: string; againstZero: boolean }) | null;
  // The reason that decided a FAIL or MARGINAL (or why an ERROR or ABORTED could not judge); null for a PASS.
  deciding: ReasonJson | null;
  decidedAtS: number | null;
  // Counts as the count rules count them: every phase, both receivers, summed (null: no phase analysed).
  crcErrors: number | null;
  postFecErrors: number | null;
  linkDownEvents: number | null;
  // Successful PHY recoveries without a link drop, as the phy-recoveries rule counts them (null: no receiver's kernel
  // exposed total_success_recovery_phy).
  recoveries: number | null;
  // The hottest NIC over the graded soaks (null: nothing graded).
  nicTempMaxC: number | null;
  soaks: SoakFigures[]; // every graded soak, in run order
  loadedSoak: SoakFigures | null; // the headline soak's
  idleSoak: SoakFigures | null; // the graded soak before it (the idle soak of the burn-in), if any
  ibWriteBwGbps: number | null; // ib_write_bw, the weaker direction's sum of the per-rail medians, Gb/s
  ncclBusbwGBs: number | null; // NCCL all_reduce average bus bandwidth, GB/s (bytes)
  // A cable of a cluster: the cluster's check across every node (all_gather_perf), held to NVIDIA's figure for the
  // topology; it does not grade the cable. Absent: no cluster check ran (every run but run --cluster).
  clusterCheck?: ClusterCheckResult;
}

export interface ClusterCheckResult {
  topology: string;
  nodes: string[];
  busbwGBs: number | null; // all_gather_perf's average bus bandwidth, GB/s; null: it gave none (problem says why)
  minBusbwGBs: number; // the topology's limit
  met: boolean | null; // null: no figure to hold to it
  problem: string | null;
  text: string; // the one sentence every output states
}

// A run's clock as every live output gives it: the terminal, live.json, `status`, the store's live row, /live, the
// run page and the metrics.
export interface LiveProgress {
  phase: string;
  elapsedS: number;
  phaseRemainingS: number | null; // of the current timed phase (null: it has no set duration)
  runRemainingS: number | null; // of the whole procedure (at least: an early stop ends it sooner)
}

// The one mapping of a reason to JSON.
export function reasonJson(r: Reason): ReasonJson {
  return {
    rule: r.rule,
    grade: r.grade ?? null,
    node: r.node ?? null,
    phase: r.phase ?? null,
    lane: r.lane ?? null,
    rail: r.rail ?? null,
    value: typeof r.value === 'number' ? (Number.isFinite(r.value) ? r.value : null) : (r.value ?? null),
    unit: r.unit ?? null,
    limit: r.limit ?? null,
    atS: r.atS ?? null,
    message: r.message,
    advice: r.advice ?? null,
  };
}
