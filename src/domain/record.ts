import type { ClusterCheckRecord } from './cluster-check.js';
import type { CableIdentity, CableFamily, EepromChecksums } from './cable.js';
import type { Cage, CableEnd } from './node.js';
import type { Measurement } from './limit.js';
import type { Grade, Outcome, Reason } from './outcome.js';
import type { RunResult } from './result.js';

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
  berLb95?: number; // 95% lower confidence bound (0 for zero errors); rules version 2 on
}

// One receiver (node) over one phase.
// One extra reading over one node-phase (n: how many values were read).
export interface ReadingStats {
  min: number;
  mean: number;
  max: number;
  n: number;
}

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
  // Successful PHY recoveries without a link drop (total_success_recovery_phy); absent where the receiver's kernel does
  // not expose the counter (mlx5 before the 2025-03 patch) and in records of journals that never read it.
  recoveries?: number;
  counterResets: number;
  worstLane: number | null;
  // Rules version 2: the certain ratio, worst lane's 95% lower bound over the others' median 95% upper bound (0: no
  // errors on any lane). Version 1: worst lane rate / median of the others, floored at one error per phase.
  worstLaneRatio: number;
  ratioAgainstZero?: boolean; // the others' median had no errors: the ratio is only a lower bound ("at least")
  worstLaneBerLb95?: number; // the worst lane's BER 95% lower bound (what the lane-ratio floors are checked against)
  nicTempMaxC: number | null;
  nicTempMeanC: number | null;
  gpuUtilMeanPct: number | null;
  gpuTempMaxC: number | null;
  // Registered extra readings (src/probes/readings.ts) over the phase: id -> min, mean, max of the values read.
  readings?: Record<string, ReadingStats>;
}

// Throughput figures from a benchmark: keep min, median and max, not only the average.
export interface ThroughputStats {
  minGbps: number;
  medianGbps: number;
  maxGbps: number;
  samples: number;
}

// One rail's ib_write_bw figures (its RDMA device names it).
export type RailThroughput = ThroughputStats & { rail: number; device: string };

// One direction of the cable (sender to receiver): its rails and their medians summed; startS-endS when it ran alone.
export interface DirectionThroughput {
  from: string;
  to: string;
  perRail: RailThroughput[];
  sumMedianGbps: number;
  startS?: number;
  endS?: number;
}

export interface BenchmarkRecord {
  loopback: { node: string; rail: number; gbps: number }[];
  // perRail and sumMedianGbps: the weaker direction (the figure graded); perDirection: each direction on its own, one
  // ib_write_bw stream per rail and direction. directions 'one-at-a-time': each direction was measured alone, one after
  // the other, each over its own startS-endS (runs since one-way benchmarks); absent with perDirection: both directions
  // ran at once. Runs before per-direction streams: perRail is a -b sum halved, and no perDirection.
  ibWriteBw: {
    perRail: RailThroughput[];
    sumMedianGbps: number;
    perDirection?: DirectionThroughput[];
    directions?: 'one-at-a-time';
  } | null;
  nccl: {
    busbwGBs: number | null; // Avg bus bandwidth
    maxBusbwGBs: number | null;
    network: string | null;
    devices: string[]; // every device any rank named in its NET/IB lines
    ranks?: { node: string; network: string | null; devices: string[] }[]; // each node's rank on its own (runs since per-node ranks)
  } | null;
}

// One lane's growth with temperature, as a lab reads it: "4.1e3/s at 58-64 °C, 3.2e5/s at 72-78 °C: grew 1.9 decades".
export interface LaneGrowth {
  lane: number;
  coolC: [number, number];
  hotC: [number, number];
  coolSeconds: number;
  hotSeconds: number;
  coolErrors: number;
  hotErrors: number;
  growthDecades: number; // log10(hot rate / cool rate), half an error added to each count (0 when both are zero)
  growthLbDecades: number | null; // at least this, 95%: hot 97.5% lower bound over cool 97.5% upper bound; null: no hot errors
  slopeDecadesPerC: number;
}

// How one lane of one receiver followed the NIC temperature over the graded phases: the coolest third of the range
// seen against the hottest third (rules version 2).
export interface LaneTempStats extends LaneGrowth {
  node: string;
  othersGrowthDecades: number; // median growth of the receiver's other lanes
  growing: boolean; // certainly grew by the lane-ratio rule's growingDecades: a ratio may FAIL it
  runaway: boolean; // growing, and by runawayDecades more than the others: the failing clone's signature
}

// The worst sliding window of one receiver (per lane for fec-window), held for holdS (rules version 2).
export interface WindowStats {
  rule: 'fec-window' | 'lane-ratio';
  node: string;
  lane: number | null; // null: corrected bits of all lanes (no per-lane counters)
  phase: string;
  windowS: number;
  holdS: number;
  value: number; // fec-window: decades of FEC margin from the window's BER 95% lower bound; lane-ratio: certain ratio (x)
  grade: Grade;
  atS: number; // seconds into the run when it had held for holdS
  berLb95: number; // the lane's BER 95% lower bound in that window
  windowErrors: number;
  windowSeconds: number;
  againstZero?: boolean;
}

// Everything the analysis derived from the journal.
export interface AnalysisRecord {
  perNodePhase: NodePhaseStats[];
  fecMarginDecades: number | null; // log10(2.4e-4 / worst pre-FEC BER upper bound)
  maxLaneRatio: number | null;
  loadedVsIdleRatio: number | null;
  logRateVsTempSlope: number | null; // decades of error rate per degree C
  // Rules version 2 on:
  gradedPhases?: string[]; // the phases error rates are graded on (the soaks; every phase when there is none)
  windows?: WindowStats[];
  laneTemp?: LaneTempStats[];
  // Rules version 4 on, which grades the larger of the cage's PCIe functions for every counter: the counters whose
  // counts the functions disagree on (empty: they agreed on every one).
  functionDivergence?: FunctionDivergence[];
}

// A *_phy counter the two PCIe functions of one cage counted differently over the run: each function's count from its
// first reading to its last (counted from zero after a counter went backwards).
export interface FunctionDivergence {
  node: string;
  counter: string; // its ethtool -S name
  counts: { netdev: string; count: number }[];
}

// One receiver in the loaded soak, as a PASS certificate states it first (rules version 2).
export interface HeadlineReceiver {
  node: string;
  seconds: number;
  errors: number; // pre-FEC errors of all lanes (or corrected bits without per-lane counters)
  berUb95: number; // of all lanes together, at 212.5 Gb/s
  lanes: { lane: number; errors: number; berUb95: number }[];
  fecMarginDecades: number | null; // worst lane, from its BER 95% upper bound
  nicTempMeanC: number | null;
  nicTempMaxC: number | null;
  crcErrors: number;
  postFecErrors: number;
  linkDownEvents: number;
  laneRatio: string; // "no errors", "at least 1200x", "1.8x"
  statement: string;
}

// What was proven, per receiver and lane, in the phase the procedure exists for: the GPU-loaded soak (else the last
// soak, else the longest phase). Short phases are reported in the tables, never here.
export interface Headline {
  phase: string;
  receivers: HeadlineReceiver[];
}

// The load one direction of the cable carried over a soak: each rail's median of its ib_write_bw rows, summed, against
// the same direction's ib_write_bw benchmark figure (rules version 3 on).
export interface DirectionLoadRecord {
  phase: string;
  from: string;
  to: string;
  rails: number;
  rows: number;
  medianGbps: number | null;
  benchmarkGbps: number | null;
  // Of the benchmark figure, or with sharedBy of its share (benchmarkGbps / sharedBy).
  pctOfBenchmark: number | null;
  longestGapS: number; // the longest a read of the rows found none new on one of its rails
  // How many cables carried the nodes' traffic from the soak's start (two cables qualified at once: 2), and when the
  // other cable's load stopped (its early FAIL; absent when it ran to the end): absent alone. pctOfBenchmark then judges
  // each row against its cable's share when it was read.
  sharedBy?: number;
  sharedUntilS?: number;
}

// The GPU utilisation judged on one node over a GPU-loaded soak: from fromS (its load's start plus the ramp-up) to
// the soak's end (rules version 3 on).
export interface GpuLoadRecord {
  node: string;
  phase: string;
  fromS: number;
  samples: number;
  meanPct: number | null;
}

// The loads the soaks measured, as the record and the certificate state them.
export interface SoakLoadRecord {
  link: DirectionLoadRecord[];
  gpu: GpuLoadRecord[];
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
  gpuDriverVersion?: string; // NVIDIA GPU driver (nvidia-smi's table header), e.g. 580.95.05
  cudaVersion?: string; // the highest CUDA version that driver supports (nvidia-smi's "CUDA Version"), e.g. 13.0
  openMpiVersion?: string; // Open MPI (mpirun --version), read when the protocol runs NCCL
  // The NCCL this node's rank loaded (its `NCCL version` line in the NCCL run); runs before per-rank versions: rank 0's,
  // on the first node only.
  ncclVersion?: string;
  ncclTestsVersion?: string; // nccl-tests prints its version from rank 0: the first node
  lanes?: number | null;
  speedMbps?: number | null;
  fecActive?: string | null;
  // DMI/SMBIOS: what machine and BIOS (sys_vendor, product_name, bios_version, ...); null where unreadable.
  dmi?: NodeDmi;
  // The node said it is the simulated lab (DMI sys_vendor): every artifact of the run is marked simulated.
  simulated?: boolean;
}

export interface SamplingStats {
  ticks: number;
  intervalP50Ms: number | null;
  intervalP99Ms: number | null;
  // Cross-node skew p99: how far apart in real time the nodes read their counters (node times with the clock offsets
  // the sampler calibrated removed; records before this field: raw node times).
  skewP99Ms: number | null;
  rawSkewP99Ms?: number | null; // the same from the node clocks as read (their offsets included)
  gaps: { node: string; fromS: number; toS: number; reason: string }[];
}

// What a run may claim (src/rules/qualification.ts): a qualification runs the whole burn-in; a set-up check (the quick
// protocol, a soak shorter than 60 minutes or without GPU load) shows the set-up works and qualifies no cable; a
// preflight (`cablequal preflight`) checks the nodes and is not a run of a cable (records before it said so: kind
// qualification or setup-check, and only a preflight phase).
export type RunKind = 'qualification' | 'setup-check' | 'preflight';

// One record per run, handed to the output writers (certificate, CSV, JSON) that only serialise it.
export interface RunRecord {
  schema: 'cablequal.run/1';
  // The cablequal that built the record, and the one that wrote its journal (absent in records and journals older than
  // these fields).
  cablequalVersion?: string;
  journalWrittenBy?: string;
  runId: string;
  label: string | null;
  outcome: Outcome;
  reasons: Reason[];
  decidedAtS: number | null;
  simulated: boolean;
  scenario?: string;
  startedAt: string;
  endedAt: string | null;
  protocol: { name: string; sha256: string; file: string }; // the protocol whose limits graded the run
  protocolRecorded?: { name: string; sha256: string; file: string }; // what ran, when graded with another (--protocol)
  // From the protocol that ran; shortOfQualification: what a set-up check's protocol lacks, one sentence per minimum.
  // Absent in records written before set-up checks were told apart (their runs got a certificate whatever the protocol).
  kind?: RunKind;
  shortOfQualification?: string[];
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
    // The two ends in different cages (e.g. a:0,b:1), each node with its cage; absent when both use the same cage.
    differentCages?: CableEnd[];
  };
  phases: PhaseRecord[];
  benchmarks: BenchmarkRecord;
  analysis: AnalysisRecord | null;
  measurements: Measurement[];
  // The grading rules that produced outcome and reasons (absent in records of rules version 1), and what loading the
  // protocol had to decide (defaults for rules it lacks, settings converted from version 1).
  rules?: { version: number; notes: string[] };
  headline?: Headline | null;
  sampling: SamplingStats;
  // problems: journal lines left out on reading (not JSON, or fields missing), first 50 with their line numbers.
  // tickGaps: ticks missing between a node's first and last sample; explained when the run journaled a gap or a skip.
  journal: {
    file: string;
    lines: number;
    bytes: number;
    badLines?: number;
    problems?: { line: number; reason: string }[];
    tickGaps?: { count: number; ranges: { node: string; fromTick: number; toTick: number; explained: boolean }[] };
    // The hash chain (each line's `prev`): lastHash is the SHA-256 of the last line; breaks name the lines at fault.
    chain?: { status: 'intact' | 'broken' | 'unchained'; lastHash: string | null; breaks?: { line: number; reason: string }[]; note?: string };
  };
  // The load each soak measured (rules version 3 on: absent when no check of the version measured one).
  soakLoad?: SoakLoadRecord;
  // Counters that went backwards during the run, as the run journaled them (rules version 3 on): a clearing on a running
  // node (counted from zero) or a reboot (ERROR).
  counterResets?: { tS: number; node: string; phase: string; rebooted: boolean }[];
  // Nodes this run shared with another cable under test at the same time (batch with one node in two pairs):
  // their 200 Gb/s was shared, the benchmarks ran one after the other, the soaks overlapped.
  sharedNodes?: string[];
  // Qualified at once with the cable in the nodes' other cage (run --port both): this cable's cage, and the other
  // cable's cage, run and (once a soak shared it) serial.
  together?: TogetherRecord;
  // A cable of a cluster (run --cluster): the cluster's check across every node, read from the journal's raw text
  // (src/domain/cluster-check.ts); it does not grade the cable. Absent: no cluster check ran.
  clusterCheck?: ClusterCheckRecord;
  // The batch's golden reference cable (run first and last to check the bench), not a cable of the box; absent: a cable.
  role?: 'golden';
  // Every figure an output shows, computed once from the rest of the record as its last step (src/rules/result.ts);
  // absent in records written before it: read through resultOfRecord.
  result?: RunResult;
}

// The mode of a cable qualified beside another between the same two nodes (src/run/together.ts).
export interface TogetherRecord {
  cage: number;
  with: { cage: number; runId: string; serial: string | null; link?: string }[];
  // A cable of a cluster (run --cluster): the cluster's topology and this cable's link id (node:cage--node:cage); each
  // other cable's link id in `with`.
  topology?: string;
  link?: string;
}

// A node's DMI/SMBIOS identity as /sys/class/dmi/id gives it; null where unreadable (src/probes/dmi.ts reads it).
export interface NodeDmi {
  sysVendor: string | null;
  productName: string | null;
  productVersion: string | null;
  boardName: string | null;
  biosVendor: string | null;
  biosVersion: string | null;
  biosDate: string | null;
}
