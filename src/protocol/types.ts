import type { Limit } from '../domain/limit.js';
import { RULES } from '../rules/versions.js';

// The phase kinds the run orchestrator knows how to execute, in the order a burn-in uses them.
export const PHASE_KINDS = ['preflight', 'identity', 'loopback', 'ib_write_bw', 'nccl', 'soak'] as const;

// Checks that nothing is misconfigured before load starts (links up, rails paired, tools present).
export interface PreflightPhase {
  name: string;
  kind: 'preflight';
  durationS?: number; // time budget, not a load duration
}

// Reads the cable EEPROM at both ends.
export interface IdentityPhase {
  name: string;
  kind: 'identity';
  durationS?: number;
}

// ib_write_bw with both ends on one node: tells a throttled NIC (~13 Gb/s) from a bad cable.
export interface LoopbackPhase {
  name: string;
  kind: 'loopback';
  durationS: number;
  msgSize: number; // below the loopback-floor limit on any rail the run is ERROR (setup), not a cable FAIL
}

// Both rails loaded at once across the cable, one direction at a time (durationS each); the per-rail rows are summed.
export interface IbWriteBwPhase {
  name: string;
  kind: 'ib_write_bw';
  durationS: number;
  msgSize: number;
  bidirectional: boolean;
}

// all_reduce_perf across the two nodes; catches NCCL using one rail only.
export interface NcclPhase {
  name: string;
  kind: 'nccl';
  durationS?: number; // time budget
}

// Full link load for a long time, with or without GPU load; the phases the cable is graded on.
export interface SoakPhase {
  name: string;
  kind: 'soak';
  durationS: number;
  gpuLoad: boolean;
  linkLoad: boolean; // ib_write_bw on both rails during the soak (default true)
  msgSize: number;
  bidirectional: boolean; // a GPU-loaded soak below the gpu-util-min limit is ERROR (GPUs were not loaded)
}

export type Phase = PreflightPhase | IdentityPhase | LoopbackPhase | IbWriteBwPhase | NcclPhase | SoakPhase;

// A program started with an argument vector (no shell): each argument is quoted on its own when the command line is
// built, so an argument may hold spaces, quotes or a Python one-liner without any of it reaching a shell as syntax.
export interface ProgramLoad {
  form: 'program';
  program: string; // a name looked up on the node's PATH, or an absolute path
  args: string[]; // may hold {durationS}
  cwd?: string; // absolute directory to start it in (else the run's scratch directory)
  requires: string[]; // absolute paths that must be readable on each node before anything is loaded (preflight)
  check?: string[]; // a read-only command preflight runs on each node; it must exit 0 (e.g. docker image inspect <image>)
}

// The form protocols written before the program form use: one command template, started in the run's scratch
// directory. Kept so that their journals re-grade; gpu_burn started this way never finds its compare kernel.
export interface LineLoad {
  form: 'line';
  line: string;
}

// The GPU load of a loaded soak.
export type GpuLoad = ProgramLoad | LineLoad;

// Command templates with {placeholders}; the simulator parses these exact shapes.
export interface ProtocolCommands {
  ibWriteBwServer: string;
  ibWriteBwClient: string;
  loopbackServer: string;
  loopbackClient: string;
  // mpirun with global options; {ranks} is ncclRank rendered once per node, joined by " : " (OpenMPI app contexts).
  nccl: string;
  // One app context per node, with that node's own device and interface names; absent in protocols written before it.
  ncclRank?: string;
  gpuLoad: GpuLoad;
}

// The string templates and the placeholders each may use (a typo in a template is a usage error, not a broken
// command on a node). nccl's {ipA} {ipB} {netdevA} {hcaList} are the single-context form of older protocols: they
// name node A's devices for both ranks, so a run refuses them when the two nodes' cages differ.
export const COMMAND_PLACEHOLDERS = {
  ibWriteBwServer: ['rdmaDevice', 'tcpPort', 'msgSize', 'bidirectional'],
  ibWriteBwClient: ['rdmaDevice', 'tcpPort', 'msgSize', 'bidirectional', 'serverIp'],
  loopbackServer: ['rdmaDevice', 'tcpPort', 'msgSize', 'durationS'],
  loopbackClient: ['rdmaDevice', 'tcpPort', 'msgSize', 'durationS', 'serverIp'],
  nccl: ['oobInclude', 'ranks', 'ipA', 'ipB', 'netdevA', 'hcaList'],
  ncclRank: ['ip', 'netdev', 'hcaList'],
} as const satisfies Record<Exclude<keyof ProtocolCommands, 'gpuLoad'>, readonly string[]>;

// The placeholder a GPU load's arguments may use.
export const GPU_LOAD_PLACEHOLDERS = ['durationS'] as const;

// What happens once the run's watch has seen a certain FAIL (which FAILs are certain, and how long a window must hold,
// is each rule's own setting: src/rules/definitions.ts). Protocols of rules version 1 said `laneRatioConsecutiveTicks`;
// the loader reads it as the lane-ratio rule's holdS (ticks x samplingIntervalS) and notes it.
export interface EarlyStopConfig {
  keepSamplingS: number; // keep sampling this long after the decision, for the record
  laneRatioConsecutiveTicks?: number; // as a version 1 file wrote it: what version 1's watch counts
}

// Tolerances for comparing a run with an earlier run of the same cable (used by later tooling).
export interface RegressionTolerances {
  throughputPct: number;
  busbwPct: number;
  berDecades: number;
  tempC: number;
}

// Rule ids are a contract: the certificate and the CSVs name them (declared in src/rules/definitions.ts).
export const LIMIT_RULES: readonly string[] = RULES.map((r) => r.id);

// `cablequal watch` over cables in service (docs/protocol.md "watch"): how often it samples, how long a condition must
// be gone before its alarm clears, how often each cable's status is printed, the window its counts (CRC, post-FEC,
// link down) are taken over, and `limits`: thresholds of the watched rules where they differ from the qualification's
// (a rule not listed is watched at its qualification limit, its windows, floors and growth included).
export interface ServiceWatchConfig {
  intervalS: number;
  clearAfterS: number;
  statusEveryS: number;
  countWindowS: number;
  limits: WatchLimitOverride[];
}

// One watched rule's thresholds in service, over its qualification limit.
export interface WatchLimitOverride {
  rule: string;
  fail?: number;
  marginal?: number;
  params?: Readonly<Record<string, number>>;
}

// A loaded, validated protocol: every command line, duration, interval and limit of a run.
export interface Protocol {
  name: string;
  description: string;
  samplingIntervalS: number;
  // How long a node may give no sample before the run ends ERROR node-lost: a lab decision (flaky management
  // Wi-Fi wants more, a quick set-up check less), so it is procedure data like the interval.
  maxSampleGapS: number;
  phases: Phase[];
  commands: ProtocolCommands;
  limits: Limit[]; // one per rule of the registry, every setting filled in (a rule the file leaves out has its defaults)
  earlyStop: EarlyStopConfig;
  regression: RegressionTolerances;
  // Only when the file has a `watch` section (watch fills the defaults otherwise, from DEFAULT_SERVICE_WATCH).
  watch?: ServiceWatchConfig;
  file: string; // label the protocol was loaded from
  sha256: string; // of the file bytes, recorded in the run record
  // What loading had to decide for the file: defaults for rules it leaves out, a version 1 setting converted, a rule
  // this version does not know (ignored when reading a journal). Shown by `grade` and kept in the record.
  notes: string[];
}
