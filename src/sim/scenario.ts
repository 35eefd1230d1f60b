// Scenarios are data (samples/scenarios/<name>.json): what the simulated cable and nodes do, and what a run should conclude.
import { existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { didYouMean } from '../domain/suggest.js';
import { quoteInput } from '../domain/text.js';
import { nestingExceeds } from '../domain/json-depth.js';
import { problemOf } from '../io/json-schema.js';
import { readInputText } from '../io/read-input.js';
import { scenarioProblem } from './scenario-schema.js';
import { loadCluster } from './scenario-cluster.js';
import type { Rail } from '../domain/node.js';
import type { Outcome } from '../domain/outcome.js';

export const SCENARIOS_DIR = join(import.meta.dirname, '..', '..', 'samples', 'scenarios');

// A point of a rate-versus-NIC-temperature curve: [temperature C, events per second].
export type RateCurve = [number, number][];

export interface ScenarioNode {
  name: string;
  hostname?: string;
  user?: string;
  // IPv4 addresses of the cabled cage's two rails (PCIe 0000: function first).
  railIps: [string, string];
  // Every ib_write_bw touching this node is capped here (the ~13 Gb/s throttled-NIC state); loopback included.
  // A number caps both rails; a pair caps each rail (PCIe function) on its own, null for a rail that is not throttled.
  throttledGbps?: number | [number | null, number | null];
  // The cage (QSFP port) the cable is in on this node; 1 when absent. A 3-node triangle wires port 0 to port 1.
  cage?: 0 | 1;
  // gpu_burn runs but the GPU stays nearly idle.
  gpuLoadIneffective?: boolean;
  // `sudo -n` answers "a password is required".
  sudoRefuses?: boolean;
  // The programs this node's sudoers NOPASSWD line allows (e.g. ["ethtool"]); `sudo -n` of any other asks for a
  // password. Default: every program.
  sudoCommands?: string[];
  // Added to this node's NIC temperature (two boxes are never identical).
  nicTempOffsetC?: number;
  // Programs (names) or files (absolute paths) this node lacks, e.g. "all_reduce_perf" or the GPU load's compare kernel;
  // a shared library name (e.g. "libnccl.so.2") is one the loader cannot find in a non-interactive session.
  missing?: string[];
  // How this node answers SSH from the other node (mpirun's way in): "ok" (default), or the two ways a non-interactive
  // session fails: no key accepted ("needs-password") or the other node does not know this node's host key.
  sshFromPeer?: 'ok' | 'needs-password' | 'unknown-host-key';
  // Interface names when udev or the RDMA core named them otherwise: per cage, its two rails (PCIe 0000: function
  // first). Default: the DGX OS names (enp1s0f0np0/rocep1s0f0 ...).
  interfaces?: [[Rail, Rail], [Rail, Rail]];
  // What `ethtool <if>` reports as Speed for each PCIe function of the cabled cage: 200000, or 100000 as some
  // firmware and switch states show (docs/formats.md §0); default 200000.
  speedMbps?: 100000 | 200000;
  // NIC firmware version `ethtool -i` reports (default a generated 28.45.4028).
  nicFirmware?: string;
  // Contents of this node's /etc/nccl.conf (none when absent), e.g. "NCCL_IB_DISABLE=1\n".
  ncclConf?: string;
  // The NCCL this node's rank loads and prints (`NCCL version X`); default 2.28.9+cuda13.0.
  ncclVersion?: string;
  // Its kernel exposes total_success_recovery_phy in `ethtool -S` (mlx5 with the 2025-03 patch, firmware with the PPCNT
  // recovery group); default false: whether DGX OS's kernel has it is not verified (shared CLUSTERS.md).
  recoveryCounter?: boolean;
  // Lines this node's perftest build prints after the closing dashes of an ib_write_bw client run that completes (the
  // loopback's -D runs), e.g. ["Completed: ...", "Total run time: 10.002s"] (docs/formats.md §5a); generated text.
  perftestTrailer?: string[];
  // MTU of this node's CX-7 netdevs (`ip link`); default 1500, as NVIDIA's setup leaves a triangle (CLUSTERS.md).
  mtu?: number;
  // lldpd runs on this node (`lldpctl -f json0` answers): a switch scenario's nodes.
  lldpd?: boolean;
}

export interface ScenarioEeprom {
  vendorName: string;
  vendorOui: string; // "xx:xx:xx"
  vendorPn: string;
  vendorRev: string;
  vendorSn: string;
  dateCode: string; // YYMMDD (+ optional 2-char lot)
  lengthM: number;
  // In the memory map's own frequencies: SFF-8636 [2.5, 5.0, 7.0, 12.9] GHz, CMIS [5, 7, 12.9, 25.8] GHz; dB.
  attenuationDb: [number, number, number, number];
  // The module's memory map: SFF-8636 (identifier 0x11) or CMIS (0x1e). Default: SFF-8636 for QSFP56, CMIS for
  // QSFP112. The one recorded Spark QSFP112-class DAC reads as SFF-8636 (samples/ethtool-module/spark-dac-...).
  memoryMap?: 'sff8636' | 'cmis';
  // SFF-8636 only: byte 145, the copper attenuation at 25.78 GHz in dB (ethtool prints it as "Length (OM1 62.5um)").
  attenuation25gDb?: number;
}

export interface ScenarioSpec {
  name: string;
  generated: string;
  description: string;
  expected: { outcome: Outcome; why: string };
  // Two nodes (one cable, or one per cage), or 2-8 in a cluster (`cables`).
  nodes: [ScenarioNode, ScenarioNode, ...ScenarioNode[]];
  cable: {
    // What the link trains: QSFP56 4 x 50G PAM4, QSFP112 2 x 100G PAM4.
    family: 'QSFP56' | 'QSFP112';
    // What the EEPROM advertises when it differs from the trained family (a 400G-class cable training 4 x 50G).
    eepromClass?: 'QSFP28' | 'QSFP56' | 'QSFP112';
    eeprom: ScenarioEeprom;
    // Serial each end reports when they differ (eeprom-mismatch); default: eeprom.vendorSn at both.
    serialByNode?: Record<string, string>;
  };
  // NIC temperature: first order towards ambient + link load share x linkLoadC + GPU load share x gpuLoadC.
  thermal: { ambientC: number; linkLoadC: number; gpuLoadC: number; tauS: number };
  // Pre-FEC raw bit errors per second of each lane at each receiver, versus that receiver's NIC temperature
  // (log-linear between points, held below the first point, extended along the last segment above).
  lanes: RateCurve[];
  // Per receiver (node name): lane curves that replace \`lanes\` at that node. Each direction of a cable is its own set
  // of twinax pairs, so a defect in one direction shows at one receiver only.
  lanesByReceiver?: Record<string, RateCurve[]>;
  // Successful PHY recoveries (the link stays up), each counted by the receiver named at lab time atS; in ascending
  // atS. Seen only on a node whose kernel has the counter (recoveryCounter).
  recoveries?: { atS: number; node: string }[];
  // Pre-FEC errors come in bursts (DFE error propagation): points [pre-FEC BER of a lane, mean errored bits per error
  // event], log-log between points, held beyond the ends; absent = independent bit errors (1). Applies to every lane of
  // both receivers. With the lanes' rates it decides the RS(544,514) codeword statistics: corrected and uncorrectable
  // codewords, CRC and post-FEC errors, and link drops (src/sim/fec.ts).
  burstBits?: [number, number][];
  // An explicit override, not physics: extra uncorrectable codewords per second versus NIC temperature on top of those
  // the lanes and bursts give (to script a fault). They count like the others (post-FEC, CRC, link drop).
  uncorrectablePerS?: RateCurve;
  // Link flaps: after the link has carried load with idle GPUs for this long, it drops for downS seconds.
  flaps?: { afterIdleLinkLoadS: number; downS: number }[];
  // Seconds a dropped link takes to retrain.
  linkRecoverS: number;
  // Seconds a node commanded to reboot (`systemctl reboot --no-block`) stays unreachable; default 90.
  rebootS?: number;
  throughput: { railGbps: number; loopbackGbps: number };
  nccl: { busbwGBs: number; devices: 1 | 2 };
  gpu: { idleUtilPct: number; loadUtilPct: number; idleTempC: number; loadTempC: number; idlePowerW: number; loadPowerW: number };
  // A second cable between the same two nodes, in the other cage at both ends (what `run --port both` qualifies with
  // the first): the cable of another scenario (its EEPROM, lanes, bursts, flaps, throughput and NCCL figures) on these
  // nodes, their NIC, GPU and heat shared by both cables.
  secondCable?: SecondCable;
  // In service (what `cablequal watch --sim` watches): the cluster's own workload instead of a burn-in's loads.
  service?: ServiceSpec;
  // A cluster of 2-8 nodes (scenario-cluster.ts): every cable with its two ends, each its own scenario's cable. With
  // it, `cable` and the other cable fields are the bench's (the first cable's), never a cable of their own.
  cables?: ClusterCable[];
  // The switch of a switch cluster: every cable's second end is one of its ports.
  switch?: SimSwitch;
}

// A cluster in service: its workload (an inference engine over the cable, GPUs busy) on a daily cycle, which is what
// heats the NIC, and the engine dying with the link (a drop kills the distributed engine; it is restarted restartS
// after the link is back).
export interface ServiceSpec {
  // [hour since the lab started, GPU share 0..1, link share 0..1]: linear between points, repeating every 24 h.
  workload: [number, number, number][];
  restartS: number;
}

// The second cable of a two-cable scenario, as its file gives it (`scenario`, `serial`) and as loaded (`spec`).
export interface SecondCable {
  // The scenario whose cable this is (its nodes, thermal and GPU figures are not used: the bench is this scenario's).
  scenario: string;
  // Its EEPROM serial, when not the other scenario's (each shipped cable has its own).
  serial?: string;
  // Its cage at both nodes: the other one than the first cable's.
  cage: 0 | 1;
  // Each node's two rail addresses in that cage (PCIe 0000: function first), in the order of `nodes`.
  railIps: [[string, string], [string, string]];
  // What a run of this cable concludes, and why.
  expected: { outcome: Outcome; why: string };
  // The loaded scenario of `scenario` (with `serial`).
  spec: ScenarioSpec;
}

// One end of a cluster's cable at a Spark: its node and cage, that cage's two rail addresses (PCIe 0000: first) and,
// where it differs from the node's, the MTU of its two netdevs.
export interface CableEndSpec {
  node: string;
  cage: 0 | 1;
  railIps: [string, string];
  mtu?: number;
}

// The far end of a cable on a switch: the switch's port name (what LLDP names as the neighbour's port id).
export interface SwitchPortSpec {
  switch: string;
  port: string;
}

// One cable of a cluster: another scenario's cable (its EEPROM, lanes, bursts, flaps, throughput and NCCL figures),
// between two Spark cages or from a Spark cage to a switch port (always the second end).
export interface ClusterCable {
  scenario: string;
  serial?: string;
  ends: [CableEndSpec, CableEndSpec | SwitchPortSpec];
  // Serials each end reports when a module's EEPROM was reprogrammed (two ends of one cable that disagree).
  serialByEnd?: [string, string];
  expected: { outcome: Outcome; why: string };
  spec: ScenarioSpec;
}

export interface SimSwitch {
  name: string; // its LLDP system name
  chassisMac: string;
}

export const isSwitchPort = <T extends object>(e: T | SwitchPortSpec): e is SwitchPortSpec => 'switch' in e;

function fail(where: string, what: string): never {
  throw new UsageError(`${where}: ${what}`);
}

// A curve is read between its points in the order of their first value (curveAt): out of order, a curve becomes a
// constant (every temperature at or below a first point that is the hottest) without a word. Refused, the point named.
function ascending(curve: RateCurve, field: string, where: string, x: string): void {
  for (let i = 1; i < curve.length; i++) {
    if (curve[i]![0] <= curve[i - 1]![0]) {
      fail(where, `${field}[${i}]: ${x} ${curve[i]![0]} after ${curve[i - 1]![0]}: a curve's points must be in increasing ${x}, each point once`);
    }
  }
}

function isCurve(v: unknown): v is RateCurve {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((p) => Array.isArray(p) && p.length === 2 && p.every((x) => typeof x === 'number' && Number.isFinite(x) && x >= 0))
  );
}

// Check the parts the model relies on; a bad file is a usage error naming the field.
export function validateScenario(raw: unknown, where: string): ScenarioSpec {
  if (typeof raw !== 'object' || raw === null) fail(where, 'expected a JSON object');
  const s = raw as Partial<ScenarioSpec>;
  if (typeof s.name !== 'string' || !/^[a-z0-9][a-z0-9-]*$/.test(s.name)) fail(where, 'name must be [a-z0-9-]+');
  if (typeof s.generated !== 'string' || !s.generated.includes('not a recording'))
    fail(where, 'field "generated" must say it is a simulator scenario, not a recording');
  if (!s.expected || !['PASS', 'MARGINAL', 'FAIL', 'ERROR', 'ABORTED'].includes(s.expected.outcome)) fail(where, 'expected.outcome missing or unknown');
  const cluster = Array.isArray((raw as { cables?: unknown }).cables);
  if (!Array.isArray(s.nodes) || (cluster ? s.nodes.length < 2 || s.nodes.length > 8 : s.nodes.length !== 2))
    fail(where, cluster ? 'nodes must list 2 to 8 nodes' : 'nodes must list exactly two nodes');
  for (const n of s.nodes) {
    if (typeof n?.name !== 'string' || !Array.isArray(n.railIps) || n.railIps.length !== 2) fail(where, 'each node needs name and two railIps');
    if (n.cage !== undefined && n.cage !== 0 && n.cage !== 1) fail(where, `nodes[${n.name}].cage must be 0 or 1`);
    if (n.missing !== undefined && (!Array.isArray(n.missing) || !n.missing.every((x) => typeof x === 'string' && x !== '')))
      fail(where, `nodes[${n.name}].missing must list program names or absolute paths`);
    if (n.sshFromPeer !== undefined && !['ok', 'needs-password', 'unknown-host-key'].includes(n.sshFromPeer))
      fail(where, `nodes[${n.name}].sshFromPeer must be ok, needs-password or unknown-host-key`);
    const t = n.throttledGbps;
    const rate = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x > 0;
    if (t !== undefined && !rate(t) && !(Array.isArray(t) && t.length === 2 && t.every((x) => x === null || rate(x)))) {
      fail(where, `nodes[${n.name}].throttledGbps must be a rate in Gb/s (both rails) or [rail 0, rail 1] with null for a rail that is not throttled`);
    }
    if (n.sudoCommands !== undefined && !(Array.isArray(n.sudoCommands) && n.sudoCommands.every((c) => typeof c === 'string')))
      fail(where, `nodes[${n.name}].sudoCommands must list program names`);
    if (n.speedMbps !== undefined && n.speedMbps !== 100000 && n.speedMbps !== 200000) fail(where, `nodes[${n.name}].speedMbps must be 100000 or 200000`);
    if (n.nicFirmware !== undefined && (typeof n.nicFirmware !== 'string' || !/^[\x20-\x7e]{1,64}$/.test(n.nicFirmware)))
      fail(where, `nodes[${n.name}].nicFirmware must be printable text`);
    if (n.interfaces !== undefined) checkInterfaces(n.interfaces, `${where}: nodes[${n.name}].interfaces`);
  }
  if (new Set(s.nodes.map((n) => n.name)).size !== s.nodes.length)
    fail(where, cluster ? 'every node needs a name of its own' : 'the two nodes need different names');
  if (!s.cable || !['QSFP56', 'QSFP112'].includes(s.cable.family)) fail(where, 'cable.family must be QSFP56 or QSFP112');
  if (s.cable.eepromClass !== undefined && !['QSFP28', 'QSFP56', 'QSFP112'].includes(s.cable.eepromClass))
    fail(where, 'cable.eepromClass must be QSFP28, QSFP56 or QSFP112');
  if (s.rebootS !== undefined && !(typeof s.rebootS === 'number' && s.rebootS > 0)) fail(where, 'rebootS must be a number of seconds > 0');
  const mm = s.cable.eeprom?.memoryMap;
  if (mm !== undefined && mm !== 'sff8636' && mm !== 'cmis') fail(where, 'cable.eeprom.memoryMap must be "sff8636" or "cmis"');
  const a25 = s.cable.eeprom?.attenuation25gDb;
  if (a25 !== undefined && (!Number.isInteger(a25) || a25 < 0 || a25 > 255)) fail(where, 'cable.eeprom.attenuation25gDb must be a whole number of dB (0..255)');
  if (a25 !== undefined && (mm ?? (s.cable.family === 'QSFP56' ? 'sff8636' : 'cmis')) !== 'sff8636')
    fail(where, 'cable.eeprom.attenuation25gDb is an SFF-8636 byte: set memoryMap "sff8636"');
  const lanes = s.cable.family === 'QSFP56' ? 4 : 2;
  if (!Array.isArray(s.lanes) || s.lanes.length !== lanes || !s.lanes.every(isCurve)) fail(where, `lanes must hold ${lanes} rate curves`);
  s.lanes.forEach((c, i) => ascending(c, `lanes[${i}]`, where, 'NIC temperature'));
  if (s.lanesByReceiver !== undefined) {
    if (typeof s.lanesByReceiver !== 'object' || s.lanesByReceiver === null || Array.isArray(s.lanesByReceiver))
      fail(where, 'lanesByReceiver must map node names to lane curves');
    for (const [node, curves] of Object.entries(s.lanesByReceiver)) {
      if (!s.nodes.some((n) => n.name === node)) fail(where, `lanesByReceiver.${node}: no such node (nodes: ${s.nodes.map((n) => n.name).join(', ')})`);
      if (!Array.isArray(curves) || curves.length !== lanes || !curves.every(isCurve)) fail(where, `lanesByReceiver.${node} must hold ${lanes} rate curves`);
      curves.forEach((c, i) => ascending(c, `lanesByReceiver.${node}[${i}]`, where, 'NIC temperature'));
    }
  }
  if (s.uncorrectablePerS !== undefined && !isCurve(s.uncorrectablePerS)) fail(where, 'uncorrectablePerS must be a rate curve');
  if (s.uncorrectablePerS !== undefined) ascending(s.uncorrectablePerS, 'uncorrectablePerS', where, 'NIC temperature');
  if (s.burstBits !== undefined && !(isCurve(s.burstBits) && s.burstBits.every(([ber, bits]) => ber > 0 && ber < 1 && bits >= 1 && bits <= 1000))) {
    fail(where, 'burstBits must be a list of [pre-FEC BER (0..1, increasing), mean errored bits per error event (1..1000)] points');
  }
  if (s.burstBits !== undefined) ascending(s.burstBits, 'burstBits', where, 'pre-FEC BER');
  for (const [i, r] of (s.recoveries ?? []).entries()) {
    if (!s.nodes.some((n) => n.name === r.node))
      fail(where, `recoveries[${i}].node: no such node ${JSON.stringify(r.node)} (nodes: ${s.nodes.map((n) => n.name).join(', ')})`);
    const before = s.recoveries![i - 1];
    if (before && r.atS < before.atS) fail(where, `recoveries[${i}].atS: ${r.atS} after ${before.atS}: recoveries must be in ascending atS`);
  }
  if (!s.thermal || !(s.thermal.tauS > 0)) fail(where, 'thermal.tauS must be > 0');
  if (!s.throughput || !s.nccl || !s.gpu) fail(where, 'throughput, nccl and gpu are required');
  return { linkRecoverS: 6, ...s } as ScenarioSpec;
}

// Four distinct interface names, two per cage, that commands can name (Linux IFNAMSIZ, RDMA device names).
function checkInterfaces(v: unknown, where: string): void {
  const cages = Array.isArray(v) && v.length === 2 && v.every((c) => Array.isArray(c) && c.length === 2) ? (v as Rail[][]) : null;
  if (!cages) throw new UsageError(`${where} must be [[rail 0, rail 1] of cage 0, [rail 0, rail 1] of cage 1]`);
  const rails = cages.flat();
  for (const r of rails) {
    if (typeof r?.netdev !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$/.test(r.netdev))
      throw new UsageError(`${where}: netdev ${JSON.stringify(r?.netdev)} is not an interface name`);
    if (typeof r.rdmaDevice !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(r.rdmaDevice))
      throw new UsageError(`${where}: rdmaDevice ${JSON.stringify(r.rdmaDevice)} is not an RDMA device name`);
  }
  const names = rails.flatMap((r) => [r.netdev, r.rdmaDevice]);
  if (new Set(names).size !== names.length) throw new UsageError(`${where}: every netdev and RDMA device name must be distinct`);
}

// Load a scenario by name (from samples/scenarios/) or by path to a JSON file: a regular file of at most 1 MiB
// (io/read-input.ts), checked against its JSON Schema (scenario-schema.ts); a bad file is one line naming the field.
// A file may take another scenario's fields (`extends`, its own replacing them; `serial` replaces the cable's EEPROM
// serial) and name a second cable (`secondCable`, the cable of another scenario in the other cage).
export function loadScenario(nameOrPath: string): ScenarioSpec {
  const { raw, label } = resolvedRaw(nameOrPath, 0);
  if (Array.isArray(raw['cables'])) return loadCluster(raw, label, loadScenario, validateScenario);
  const spec = validateScenario(raw, label);
  const second = (raw as { secondCable?: Omit<SecondCable, 'spec'> }).secondCable;
  return second ? { ...spec, secondCable: secondCableOf(spec, second, label) } : spec;
}

// A scenario file's fields with what it extends filled in, checked against the schema (depth: extends followed so far).
function resolvedRaw(nameOrPath: string, depth: number): { raw: Record<string, unknown>; label: string } {
  const file = nameOrPath.endsWith('.json') ? nameOrPath : join(SCENARIOS_DIR, `${nameOrPath}.json`);
  if (!existsSync(file)) {
    const guess = didYouMean(nameOrPath, scenarioNames());
    throw new UsageError(`unknown scenario ${quoteInput(nameOrPath, 60)}${guess || ' (`cablequal sim scenarios` lists them)'}`);
  }
  const label = nameOrPath.endsWith('.json') ? nameOrPath : basename(file);
  let raw: unknown;
  try {
    raw = JSON.parse(readInputText(file, 'scenario', label));
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`${label}: not valid JSON (${(e as Error).message})`);
  }
  const parent = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>)['extends'] : undefined;
  if (typeof parent === 'string') {
    if (depth >= 3) throw new UsageError(`${label}: extends: more than 3 scenarios deep (a loop?)`);
    if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(parent)) throw new UsageError(`${label}: extends: "${parent}" is not a shipped scenario's name`);
    const { extends: _e, serial, ...own } = raw as Record<string, unknown>;
    const base = resolvedRaw(parent, depth + 1).raw;
    const { secondCable: _s, ...inherited } = base;
    raw = { ...inherited, ...own };
    if (typeof serial === 'string') raw = withRawSerial(raw as Record<string, unknown>, serial);
    else if (serial !== undefined) throw new UsageError(`${label}: serial must be the cable's EEPROM serial (text)`);
  }
  // The file's JSON Schema first (every field, type and range), then what a schema cannot say.
  const problem = nestingExceeds(raw, 16) ? ': nested deeper than 16 levels: not a scenario' : scenarioProblem(raw);
  if (problem) throw new UsageError(problemOf(label, problem));
  return { raw: raw as Record<string, unknown>, label };
}

// The fields with the cable's EEPROM serial replaced.
function withRawSerial(raw: Record<string, unknown>, serial: string): Record<string, unknown> {
  const cable = (raw['cable'] ?? {}) as Record<string, unknown>;
  return { ...raw, cable: { ...cable, eeprom: { ...((cable['eeprom'] ?? {}) as object), vendorSn: serial } } };
}

// Rail addresses for a second cable's cage when none are given: each node's first-cable addresses two /24s up
// (192.168.100.10 and 192.168.101.10 beside 192.168.102.10 and 192.168.103.10), as dual-cage.json has them.
export function secondCageIps(nodes: ScenarioSpec['nodes']): SecondCable['railIps'] {
  const up = (ip: string) => ip.replace(/^(\d+\.\d+\.)(\d+)(\.\d+)$/, (_m, a: string, c: string, d: string) => `${a}${(Number(c) + 2) % 256}${d}`);
  return [nodes[0].railIps.map(up) as [string, string], nodes[1].railIps.map(up) as [string, string]];
}

// The second cable loaded: another scenario's cable, in the other cage at both nodes of this one.
function secondCableOf(spec: ScenarioSpec, raw: Omit<SecondCable, 'spec'>, label: string): SecondCable {
  const where = `${label}: secondCable`;
  let cable = loadScenario(raw.scenario);
  if (cable.secondCable) fail(where, `${raw.scenario} has a second cable itself: name a one-cable scenario`);
  if (raw.serial !== undefined) cable = { ...cable, cable: { ...cable.cable, eeprom: { ...cable.cable.eeprom, vendorSn: raw.serial } } };
  for (const n of spec.nodes) if ((n.cage ?? 1) === raw.cage) fail(where, `cage ${raw.cage} holds the first cable at ${n.name}: give the other cage`);
  const ips = [...spec.nodes.flatMap((n) => n.railIps), ...raw.railIps.flat()];
  if (new Set(ips).size !== ips.length) fail(where, 'railIps: every rail of both cages needs an address of its own');
  return { ...raw, spec: cable };
}

function scenarioNames(): string[] {
  return readdirSync(SCENARIOS_DIR)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -5))
    .sort();
}

// What `cablequal sim list` prints: every shipped scenario and the outcome a correct run reaches.
export function listScenarios(): { name: string; description: string; expectedOutcome: Outcome }[] {
  return scenarioNames().map((n) => {
    const s = loadScenario(n);
    return { name: s.name, description: s.description, expectedOutcome: s.expected.outcome };
  });
}

// The lane curves of one receiver: its own (lanesByReceiver) or the cable's.
export function receiverLanes(spec: ScenarioSpec, node: string): RateCurve[] {
  return spec.lanesByReceiver?.[node] ?? spec.lanes;
}

// The cap of one rail of a node in Gb/s (throttled NIC), or null when that rail runs at full speed.
export function railCapGbps(n: ScenarioNode, rail: number): number | null {
  const t = n.throttledGbps;
  if (t === undefined) return null;
  return typeof t === 'number' ? t : (t[rail === 0 ? 0 : 1] ?? null);
}

// Per-lane serial bit rate: 212.5 Gb/s split over the lanes the family trains.
export function laneBitRate(family: ScenarioSpec['cable']['family']): number {
  return family === 'QSFP56' ? 53.125e9 : 106.25e9;
}

// Mean errored bits per error event of a lane at pre-FEC BER `ber` (see ScenarioSpec.burstBits), rounded to 1/64
// of an octave so that codeword statistics can be cached.
export function burstBitsAt(spec: ScenarioSpec, ber: number): number {
  const pts = spec.burstBits;
  if (!pts || pts.length === 0 || !(ber > 0)) return 1;
  let b: number;
  if (ber <= pts[0]![0]) b = pts[0]![1];
  else if (ber >= pts[pts.length - 1]![0]) b = pts[pts.length - 1]![1];
  else {
    const i = pts.findIndex((p) => p[0] >= ber);
    const [x0, y0] = pts[i - 1]!;
    const [x1, y1] = pts[i]!;
    const f = Math.log(ber / x0) / Math.log(x1 / x0);
    b = Math.exp(Math.log(y0) + f * (Math.log(y1) - Math.log(y0)));
  }
  return Math.max(1, 2 ** (Math.round(Math.log2(b) * 64) / 64));
}

// Rate at temperature t on a curve (see ScenarioSpec.lanes for the interpolation rule).
export function curveAt(curve: RateCurve, t: number): number {
  const first = curve[0]!;
  if (curve.length === 1 || t <= first[0]) return first[1];
  for (let i = 1; i < curve.length; i++) {
    const a = curve[i - 1]!;
    const b = curve[i]!;
    if (t <= b[0] || i === curve.length - 1) {
      if (b[0] === a[0]) return b[1];
      const f = (t - a[0]) / (b[0] - a[0]);
      if (t > b[0] && (a[1] <= 0 || b[1] <= 0)) return b[1];
      if (a[1] > 0 && b[1] > 0) return Math.exp(Math.log(a[1]) + f * (Math.log(b[1]) - Math.log(a[1])));
      return a[1] + f * (b[1] - a[1]);
    }
  }
  return curve[curve.length - 1]![1];
}
