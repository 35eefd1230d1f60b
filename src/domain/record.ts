import type { CableIdentity, CableFamily, EepromChecksums } from './cable.js';
import type { Cage } from './node.js';
import type { Measurement } from './limit.js';
import type { Outcome, Reason } from './outcome.js';

// Statistics of one lane of one receiver over one phase.
export interface LaneStats {
  node: string;
  phase: string;
  lane: number;
  errors: number; // pre-FEC raw errors counted (rx_err_lane_N_phy delta)
  seconds: number;
  ratePerS: number;
  ber: number; // errors / (seconds x lane bit rate)
  berUb95: number; // 95% upper confidence bound (Poisson), > 0 even for zero errors
}

// One receiver (node) over one phase.
export interface NodePhaseStats {
  node: string;
  phase: string;
  seconds: number;
  lanes: number; // lanes in use, from `ethtool <if>`
  laneStats: LaneStats[];
  correctedBits: number;
  preFecBer: number;
  preFecBerUb95: number;
  correctedBitsBerUb95?: number | null; // rx_corrected_bits_phy / bits, 95% upper bound (null: counter absent)
  postFecErrors: number; // rx_pcs_symbol_err_phy + uncorrectable blocks
  crcErrors: number;
  symbolErrors: number;
  linkDownEvents: number;
  counterResets: number;
  worstLane: number | null;
  worstLaneRatio: number; // worst lane rate / median of the others (floored)
  nicTempMaxC: number | null;
  nicTempMeanC: number | null;
  gpuUtilMeanPct: number | null;
  gpuTempMaxC: number | null;
}

// Throughput figures from a benchmark: keep min, median and max, not only the average.
export interface ThroughputStats {
  minGbps: number;
  medianGbps: number;
  maxGbps: number;
  samples: number;
}

export interface BenchmarkRecord {
  loopback: { node: string; rail: number; gbps: number }[];
  // perRail and sumMedianGbps: the weaker direction (the figure graded); perDirection: each direction on its own, one
  // ib_write_bw stream per rail and direction. Runs before per-direction streams: perRail is a -b sum halved, and no
  // perDirection.
  ibWriteBw: {
    perRail: (ThroughputStats & { rail: number; device: string })[];
    sumMedianGbps: number;
    perDirection?: { from: string; to: string; perRail: (ThroughputStats & { rail: number; device: string })[]; sumMedianGbps: number }[];
  } | null;
  nccl: {
    busbwGBs: number | null; // Avg bus bandwidth
    maxBusbwGBs: number | null;
    network: string | null;
    devices: string[]; // every device any rank named in its NET/IB lines
    ranks?: { node: string; network: string | null; devices: string[] }[]; // each node's rank on its own (runs since per-node ranks)
  } | null;
}

// Everything the analysis derived from the journal.
export interface AnalysisRecord {
  perNodePhase: NodePhaseStats[];
  fecMarginDecades: number | null; // log10(2.4e-4 / worst pre-FEC BER upper bound)
  maxLaneRatio: number | null;
  loadedVsIdleRatio: number | null;
  logRateVsTempSlope: number | null; // decades of error rate per degree C
}

export interface PhaseRecord {
  name: string;
  kind: string;
  startS: number;
  endS: number | null;
  status: 'done' | 'stopped-early' | 'error' | 'skipped' | 'aborted';
  note?: string;
}

// What each end of the cable told us.
export interface CableEndRecord {
  node: string;
  netdev: string;
  identity: CableIdentity | null;
  checksums?: EepromChecksums;
  error?: string;
}

export interface NodeRecord {
  name: string;
  host: string;
  cage: Cage | null;
  kernel?: string;
  osRelease?: string; // DGX OS release (/etc/dgx-release) and Ubuntu release (/etc/os-release)
  driver?: string; // NIC driver and its version (ethtool -i), e.g. "mlx5_core 6.17.0-1032-nvidia"
  firmware?: string; // NIC firmware (ethtool -i firmware-version)
  ethtoolVersion?: string;
  perftestVersion?: string;
  ncclVersion?: string; // from the NCCL run's output (rank 0, on the first node)
  ncclTestsVersion?: string;
  lanes?: number | null;
  speedMbps?: number | null;
  fecActive?: string | null;
  // DMI/SMBIOS: what machine and BIOS (sys_vendor, product_name, bios_version, ...); null where unreadable.
  dmi?: { sysVendor: string | null; productName: string | null; productVersion: string | null; boardName: string | null; biosVendor: string | null; biosVersion: string | null; biosDate: string | null };
  // The node said it is the simulated lab (DMI sys_vendor): every artifact of the run is marked simulated.
  simulated?: boolean;
}

export interface SamplingStats {
  ticks: number;
  intervalP50Ms: number | null;
  intervalP99Ms: number | null;
  skewP99Ms: number | null;
  gaps: { node: string; fromS: number; toS: number; reason: string }[];
}

// One record per run, handed to the output writers (certificate, CSV, JSON) that only serialise it.
export interface RunRecord {
  schema: 'cablequal.run/1';
  runId: string;
  label: string | null;
  outcome: Outcome;
  reasons: Reason[];
  decidedAtS: number | null;
  simulated: boolean;
  scenario?: string;
  startedAt: string;
  endedAt: string | null;
  protocol: { name: string; sha256: string; file: string };
  nodes: NodeRecord[];
  cable: {
    family: CableFamily; // what the EEPROM advertises (records before rules version 2: from the trained lane count)
    familyBasis?: string; // the EEPROM bytes that said so, or why they did not
    lanes: number | null; // as trained (ethtool Lanes)
    trainedSpeedMbps?: number | null; // as trained (ethtool Speed of the cabled functions, the higher of the two nodes)
    ends: CableEndRecord[];
    serial: string | null;
    vendor: string | null;
    partNumber: string | null;
  };
  phases: PhaseRecord[];
  benchmarks: BenchmarkRecord;
  analysis: AnalysisRecord | null;
  measurements: Measurement[];
  sampling: SamplingStats;
  journal: { file: string; lines: number; bytes: number };
  // Nodes this run shared with another cable under test at the same time (batch with one node in two pairs):
  // their 200 Gb/s was shared, the benchmarks ran one after the other, the soaks overlapped.
  sharedNodes?: string[];
}
