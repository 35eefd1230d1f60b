// The data shapes rules version 1 read and wrote, copied so that nothing changed later can change a version 1 verdict.
import type { Grade } from '../../domain/outcome.js';

// A limit with a marginal band, as version 1 protocols wrote them.
export interface Limit {
  rule: string;
  direction: 'min' | 'max';
  fail: number;
  marginal?: number;
  unit: string;
  description?: string;
}

// A value checked against a limit.
export interface Measurement {
  rule: string;
  value: number;
  unit: string;
  grade: Grade;
  limitText: string;
  node?: string;
  phase?: string;
  lane?: number;
}

// Statistics of one lane of one receiver over one phase.
export interface LaneStats {
  node: string;
  phase: string;
  lane: number;
  errors: number;
  seconds: number;
  ratePerS: number;
  ber: number;
  berUb95: number;
}

// One receiver (node) over one phase.
export interface NodePhaseStats {
  node: string;
  phase: string;
  seconds: number;
  lanes: number;
  laneStats: LaneStats[];
  correctedBits: number;
  preFecBer: number;
  preFecBerUb95: number;
  correctedBitsBerUb95?: number | null;
  postFecErrors: number;
  crcErrors: number;
  symbolErrors: number;
  linkDownEvents: number;
  counterResets: number;
  worstLane: number | null;
  worstLaneRatio: number;
  nicTempMaxC: number | null;
  nicTempMeanC: number | null;
  gpuUtilMeanPct: number | null;
  gpuTempMaxC: number | null;
}

// Everything the version 1 analysis derived from the journal.
export interface AnalysisRecord {
  perNodePhase: NodePhaseStats[];
  fecMarginDecades: number | null;
  maxLaneRatio: number | null;
  loadedVsIdleRatio: number | null;
  logRateVsTempSlope: number | null;
}

// What version 1 read of a protocol: its phases, limits and the lane-ratio streak in ticks.
export interface ProtocolV1 {
  phases: { name: string; kind: string; gpuLoad?: boolean }[];
  limits: Limit[];
  laneRatioConsecutiveTicks: number;
}
