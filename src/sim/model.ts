// The physical model of the simulated lab: two nodes joined by one cable (cage 1 unless a node names its cage), or by
// two (one per cage: a scenario's second cable), stepped one second at a time from the event timeline (loads started
// and stopped, faults). Each cable has its own link, lanes and port counters; the nodes' NIC (its temperature, from
// the traffic of both cables), GPU, PCIe rails (a rail's bandwidth shared by the streams of both cables through it)
// and boots are shared. State is computed lazily up to clock.now(): nothing runs in the background, and the same
// scenario and seed always give the same counters.
import type { Fault } from './faults.js';
import { BLOCKS_PER_CODEWORD, codewordStats, HI_BER_UNCORRECTABLE, HI_BER_WINDOW_S, laneCountOf, type CodewordStats, type LaneErrors } from './fec.js';
import { drawSecond } from './fec-draws.js';
import { binomial, poisson, normal, streamId, uniform } from './prng.js';
import { burstBitsAt, curveAt, laneBitRate, receiverLanes, type ScenarioSpec } from './scenario.js';

// One ib_write_bw client/server pair (or a loopback pair on one node).
export interface Session {
  id: number;
  clientNode: string;
  serverNode: string;
  clientRail: number;
  serverRail: number;
  // The cage of each end's device, and the cable (link index) between them.
  clientCage: number;
  serverCage: number;
  link: number;
  bidir: boolean;
  loopback: boolean;
  startS: number;
  plannedEndS: number | null; // -D runs end on their own
  stoppedS: number | null;
  diedS: number | null; // killed by a link drop or a reboot
  quitS: number | null; // the client exited by itself (a link-load-stop fault)
  gbpsPerDir: number;
}

// A GPU load generator (gpu_burn) on one node.
export interface GpuLoad {
  id: number;
  node: string;
  startS: number;
  plannedEndS: number | null;
  stoppedS: number | null;
  exitedS: number | null; // the process exited by itself (a gpu-load-stop fault)
}

// One entry of the lab's timeline, for tests and for `sim serve` logs.
export interface LabEvent {
  tS: number;
  kind: string;
  node?: string;
  detail?: string;
  // Which cable's cage, in a lab of two cables.
  cage?: number;
}

// The physical-port (PPCNT) counters of a cabled cage: both netdevs of the cage read these.
export interface PortCounters {
  rxBytes: number;
  txBytes: number;
  rxPackets: number;
  txPackets: number;
  lanes: [number, number, number, number]; // errored bits per lane (rx_err_lane_N_phy)
  correctedBits: number; // their sum (rx_corrected_bits_phy)
  correctedBlocks: number; // RS codewords with 1..15 symbol errors
  uncorrectable: number; // RS codewords with 16 or more
  pcsSymbolErrors: number; // rx_pcs_symbol_err_phy: on mlx5 the frames lost as crcFrames (see step())
  crcFrames: number; // frames that overlapped an uncorrectable codeword (rx_crc_errors_phy)
  linkDown: number;
  recoveries: number; // successful PHY recoveries, the link staying up (total_success_recovery_phy)
}

// Per-rail (per PCIe function) RDMA traffic counters (vport).
export interface RailCounters {
  rxBytes: number;
  txBytes: number;
  rxPackets: number;
  txPackets: number;
}

interface NodeSim {
  name: string;
  index: number;
  temp: number;
  gpuTemp: number;
  // Per cage, its two PCIe functions' traffic counters.
  rails: [RailCounters, RailCounters][];
  baseline: number; // traffic counted before the lab started (seeded)
  bootCount: number;
  bootS: number; // lab time of the last boot (negative: before the lab)
  // The hot-plug trap: a cable plugged into this node while it ran; every transfer crawls until it reboots with the cable in.
  hotplugThrottled: boolean;
}

// One end of a cable: its port's counters and the last uncorrectable codeword there (for the PCS's BER monitor).
interface PortEnd {
  counters: PortCounters;
  lastUncorrectableS: number;
}

// One cable of the lab, between a cage of one node and a cage of another (or a switch port): the scenario its cable
// comes from (its EEPROM, lanes, bursts, flaps, link recovery, throughput and NCCL figures), its link state and each
// end's port. A two-node lab's cables have their ends at the scenario's nodes in order (end 0 at the first node).
export interface LinkSim {
  readonly index: number;
  spec: ScenarioSpec;
  readonly at: [number, number]; // per end, the index of its node (-1: a switch port, no receiver of the lab)
  readonly cages: [number, number]; // per end, its cage (-1 at a switch port)
  laneCount: 4 | 2;
  plugged: boolean;
  linkUp: boolean;
  // What `ethtool <if>` says after `Link detected: no` while the link is down (SIM_LINK_DOWN_REASONS).
  downReason: string;
  downUntil: number;
  idleLoadRunS: number;
  flapsFired: Set<number>;
  ends: [PortEnd, PortEnd];
  readonly keys: [number, number]; // per end, the noise stream of this cable's receiver there
}

// The end of a link at a node (by its index), or -1 when the link does not reach it.
export const endAt = (link: LinkSim, node: number): number => (link.at[0] === node ? 0 : link.at[1] === node ? 1 : -1);

// A reboot a node was told to do (`systemctl reboot --no-block`): down from atS for durationS.
interface CommandedReboot {
  node: string;
  atS: number;
  durationS: number;
}

// Per-rail rate of a Spark in the hot-plug trap: 13.22 Gb/s in the real degraded rows (samples/ib_write_bw/
// spark-hotplug-degraded-single-rail-1MiB-5000-iters.txt), 13.23 with iperf; counters stay clean.
export const HOTPLUG_THROTTLE_GBPS = 13.2;
// The reason `ethtool <if>` prints after `Link detected: no` for each way the lab's link goes down: the names ethtool
// gives the kernel's link extended states (ethtool netlink/settings.c names_link_ext_state and the substate tables),
// for the PDDR status mlx5 would report in that case (mlx5 en_ethtool.c, mlx5e_link_ext_state_opcode_map: opcode 17
// bad signal integrity with many physical errors, 1024 no cable, 1031 cable issue, 14 remote side not ready).
export const SIM_LINK_DOWN_REASONS = {
  hiBer: 'Bad signal integrity, Large number of physical errors', // the PCS's hi_ber: the failing clone's drop
  flap: 'Cable issue', // a scenario's scheduled flap (link-flap)
  noCable: 'No cable', // pulled, or a cage without a cable
  peerDown: 'Link training failure, Remote side is not ready yet', // the other end is rebooting
  training: 'Link training failure, Remote side is not ready yet', // a cable just plugged, still training
} as const;

// Seconds between `systemctl reboot --no-block` returning and the node going down.
const SHUTDOWN_S = 3;
// The cage a cable is in when the scenario does not say.
export const DEFAULT_CABLED_CAGE = 1;

// What a session's bytes pass through that another session may share: each end's PCIe rail, per direction.
function resourcesOf(s: Session): string[] {
  const out = [`${s.clientNode}/${s.clientRail}/tx`, `${s.serverNode}/${s.serverRail}/rx`];
  if (s.bidir) out.push(`${s.clientNode}/${s.clientRail}/rx`, `${s.serverNode}/${s.serverRail}/tx`);
  return out;
}

// What lab.state(node) returns: a snapshot for tests.
export interface SimNodeState {
  tS: number;
  linkUp: boolean;
  nicTempC: number;
  gpuUtilPct: number;
  gpuTempC: number;
  gpuPowerW: number;
  laneErrorRates: number[]; // pre-FEC raw errors per second now, per lane in use
  laneBer: number[];
  // Codeword statistics of this receiver now (expected rates; the counters are seeded draws around them).
  fec: CodewordStats;
  port: PortCounters;
  rails: [RailCounters, RailCounters];
  bootId: string;
  uptimeS: number;
  rebooting: boolean;
}

// A port's counters as a freshly booted (or uncabled) port shows them.
export const ZERO_PORT = (): PortCounters => ({
  rxBytes: 0,
  txBytes: 0,
  rxPackets: 0,
  txPackets: 0,
  lanes: [0, 0, 0, 0],
  correctedBits: 0,
  correctedBlocks: 0,
  uncorrectable: 0,
  pcsSymbolErrors: 0,
  crcFrames: 0,
  linkDown: 0,
  recoveries: 0,
});
const NO_SERVICE = { gpu: 0, link: 0 } as const;
const ZERO_RAIL = (): RailCounters => ({ rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0 });
const ZERO_RAILS = (): [RailCounters, RailCounters][] => [
  [ZERO_RAIL(), ZERO_RAIL()],
  [ZERO_RAIL(), ZERO_RAIL()],
];
const freshEnd = (): PortEnd => ({ counters: ZERO_PORT(), lastUncorrectableS: -Infinity });
const WIRE_FRAME_BYTES = 1024 + 58; // RoCE MTU 1024 payload + headers and FCS
const FRAME_SLOT_BYTES = WIRE_FRAME_BYTES + 20; // + preamble, SFD and inter-frame gap
// MAC bytes one codeword carries (80 x 66b blocks of 8 bytes).
const CODEWORD_BYTES = BLOCKS_PER_CODEWORD * 8;

export class LabModel {
  readonly events: LabEvent[] = [];
  readonly sessions: Session[] = [];
  readonly gpuLoads: GpuLoad[] = [];
  private readonly nodes: NodeSim[];
  // The cables: the scenario's, then its second cable (another cage at both nodes).
  readonly links: LinkSim[];
  private k = 0; // seconds stepped so far
  private nextId = 1;
  // Reboots the nodes were told to do, kept across cable swaps (the nodes stay the same).
  private readonly commandedReboots: CommandedReboot[] = [];
  // In service: the workload's engine is off until then (a link drop kills it; it restarts restartS after the link is back).
  private engineOffUntilS = 0;

  constructor(
    // The bench: the nodes, their thermal and GPU figures (replaced with the cable's scenario when the first cable is
    // swapped, as a cable's scenario describes the bench it was seen on).
    public spec: ScenarioSpec,
    readonly seed: number,
    readonly faults: Fault[],
  ) {
    this.nodes = spec.nodes.map((n, index) => ({
      name: n.name,
      index,
      temp: spec.thermal.ambientC + (n.nicTempOffsetC ?? 0),
      gpuTemp: spec.gpu.idleTempC,
      rails: ZERO_RAILS(),
      baseline: Math.floor(1e9 + uniform(seed, streamId(n.name), 7) * 5e10),
      bootCount: 0,
      bootS: -Math.floor(86400 + uniform(seed, streamId(n.name), 8) * 4 * 86400),
      hotplugThrottled: false,
    }));
    if (spec.cables) {
      // A cluster: each cable between the cages its ends name (a switch port is no node of the lab).
      const ix = (name: string) => spec.nodes.findIndex((n) => n.name === name);
      this.links = spec.cables.map((c, i) => {
        const [a, b] = c.ends;
        const far: [number, number] = 'switch' in b ? [-1, -1] : [ix(b.node), b.cage];
        return this.newLink(i, c.spec, [a.cage, far[1]], [ix(a.node), far[0]]);
      });
      return;
    }
    const first: [number, number] = [spec.nodes[0].cage ?? DEFAULT_CABLED_CAGE, spec.nodes[1].cage ?? DEFAULT_CABLED_CAGE];
    this.links = [this.newLink(0, spec, first)];
    const second = spec.secondCable;
    if (second) this.links.push(this.newLink(1, second.spec, [second.cage, second.cage]));
  }

  private newLink(index: number, spec: ScenarioSpec, cages: [number, number], at: [number, number] = [0, 1]): LinkSim {
    // The first cable's noise streams are the node's own (a one-cable lab draws as it always has).
    const key = (end: number) => {
      const name = at[end]! >= 0 ? this.spec.nodes[at[end]!]!.name : `switch/${index}`;
      return streamId(index === 0 ? name : `${name}/cable${index}`);
    };
    return {
      index,
      spec,
      at,
      cages,
      laneCount: laneCountOf(spec.cable.family),
      plugged: true,
      linkUp: true,
      downReason: SIM_LINK_DOWN_REASONS.noCable,
      downUntil: 0,
      idleLoadRunS: 0,
      flapsFired: new Set(),
      ends: [freshEnd(), freshEnd()],
      keys: [key(0), key(1)],
    };
  }

  // The cable in a node's cage, or undefined for an empty cage (one the scenario puts no cable in).
  linkAt(node: string, cage: number): LinkSim | undefined {
    const i = this.node(node).index;
    return this.links.find((l) => l.at.some((x, e) => x === i && l.cages[e] === cage));
  }

  // Whether any cable is in (false once every cable has been pulled: no link, no EEPROM, no CX-7 functions).
  get anyPlugged(): boolean {
    return this.links.some((l) => l.plugged);
  }

  // The links a cage names (every one when none is given).
  private linksIn(cage?: number): LinkSim[] {
    return this.links.filter((l) => cage === undefined || l.cages.includes(cage));
  }

  // Pull the cable (of one cage, or every cable): the link goes down and stays down; the EEPROM can no longer be read.
  unplug(tS: number, cage?: number): void {
    this.advance(tS);
    for (const link of this.linksIn(cage)) {
      if (!link.plugged) continue;
      if (link.linkUp) this.dropLink(link, tS, 'cable unplugged', Infinity, SIM_LINK_DOWN_REASONS.noCable);
      else link.downUntil = Infinity;
      link.downReason = SIM_LINK_DOWN_REASONS.noCable;
      link.plugged = false;
      this.events.push({ tS, kind: 'cable-unplugged', ...this.cageOf(link) });
    }
  }

  // A new cable in a cage of the same nodes (the first cable's when none is named): node state (temperatures, boots,
  // per-function traffic, reboots under way) carries over, the port's PPCNT counters restart from zero as on a
  // re-plugged Spark, and the link trains for linkRecoverS. The hot-plug trap: every node that was running when the
  // cable went in is throttled until it reboots.
  plug(cable: ScenarioSpec, tS: number, cage?: number): void {
    this.advance(tS);
    // A cage that had no cable: a second link, in that cage at both nodes (its rail addresses are the lab's to give).
    if (cage !== undefined && this.linksIn(cage).length === 0)
      this.links.push({ ...this.newLink(this.links.length, cable, [cage, cage]), plugged: false, linkUp: false });
    const link = cage === undefined ? this.links[0]! : this.linksIn(cage)[0]!;
    this.unplug(tS, cage ?? link.cages[0]);
    link.spec = cable;
    link.laneCount = laneCountOf(cable.cable.family);
    link.ends = [freshEnd(), freshEnd()];
    link.idleLoadRunS = 0;
    link.flapsFired = new Set();
    link.plugged = true;
    link.downUntil = Math.ceil(tS + cable.linkRecoverS);
    link.downReason = SIM_LINK_DOWN_REASONS.training;
    for (const n of this.nodesOf(link)) n.hotplugThrottled = !this.rebooting(n.name, tS);
    this.events.push({ tS, kind: 'cable-plugged', detail: `${cable.name} serial ${cable.cable.eeprom.vendorSn}`, ...this.cageOf(link) });
  }

  // The nodes a cable reaches (its ends at Sparks), end 0 first.
  private nodesOf(link: LinkSim): NodeSim[] {
    return link.at.filter((i) => i >= 0).map((i) => this.nodes[i]!);
  }

  // Whether a session's bytes cross a cable: one of its two ends sits in a cage the cable is in.
  private crosses(s: Session, link: LinkSim): boolean {
    return link.at.some((i, e) => {
      const name = i >= 0 ? this.nodes[i]!.name : null;
      return (name === s.clientNode && link.cages[e] === s.clientCage) || (name === s.serverNode && link.cages[e] === s.serverCage);
    });
  }

  // Whether a node's side of a session is in a cable's cage at that node.
  private sideOn(link: LinkSim, node: string, cage: number): boolean {
    return link.at.some((i, e) => i >= 0 && this.nodes[i]!.name === node && link.cages[e] === cage);
  }

  // The cage of a link for its events, in a lab of two cables.
  private cageOf(link: LinkSim): { cage?: number } {
    return this.links.length > 1 ? { cage: link.cages[0] } : {};
  }

  // `systemctl reboot --no-block` on a node at tS: it goes down a few seconds later and answers again after the
  // scenario's rebootS. False when the node is already down.
  requestReboot(node: string, tS: number): boolean {
    this.advance(tS);
    this.node(node);
    if (this.rebooting(node, tS) || this.commandedReboots.some((r) => r.node === node && r.atS > tS)) return false;
    this.commandedReboots.push({ node, atS: Math.ceil(tS + SHUTDOWN_S), durationS: this.spec.rebootS ?? 90 });
    this.events.push({ tS, kind: 'reboot-requested', node });
    return true;
  }

  // Whether a node is in the hot-plug trap now.
  hotplugThrottled(node: string, tS: number): boolean {
    this.advance(tS);
    return this.node(node).hotplugThrottled;
  }

  // Whether a node rebooted in (sinceS, tS]: what it ran before is gone.
  rebootedSince(node: string, sinceS: number, tS: number): boolean {
    this.advance(tS);
    return this.events.some((e) => e.kind === 'reboot' && e.node === node && e.tS > sinceS && e.tS <= tS);
  }

  private node(name: string): NodeSim {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no simulated node ${name}`);
    return n;
  }

  // ---- timeline input (called by the runner at the current time)

  addSession(s: Omit<Session, 'id' | 'stoppedS' | 'diedS' | 'quitS'>): Session {
    this.advance(s.startS);
    const session: Session = { ...s, id: this.nextId++, stoppedS: null, diedS: null, quitS: null };
    if (!session.loopback && !this.links[s.link]!.linkUp) session.diedS = s.startS;
    this.sessions.push(session);
    this.events.push({
      tS: s.startS,
      kind: 'ib_write_bw-start',
      node: s.clientNode,
      detail: `rail ${s.clientRail} -> ${s.serverNode}${s.loopback ? ' (loopback)' : ''}`,
    });
    return session;
  }

  stopSession(s: Session, tS: number): void {
    this.advance(tS);
    if (s.stoppedS === null && s.diedS === null && (s.plannedEndS === null || tS < s.plannedEndS)) {
      s.stoppedS = tS;
      this.events.push({ tS, kind: 'ib_write_bw-stop', node: s.clientNode });
    }
  }

  addGpuLoad(node: string, startS: number, durationS: number | null): GpuLoad {
    this.advance(startS);
    const g: GpuLoad = { id: this.nextId++, node, startS, plannedEndS: durationS === null ? null : startS + durationS, stoppedS: null, exitedS: null };
    this.gpuLoads.push(g);
    this.events.push({ tS: startS, kind: 'gpu-load-start', node });
    return g;
  }

  stopGpuLoad(g: GpuLoad, tS: number): void {
    this.advance(tS);
    if (g.stoppedS === null && (g.plannedEndS === null || tS < g.plannedEndS)) {
      g.stoppedS = tS;
      this.events.push({ tS, kind: 'gpu-load-stop', node: g.node });
    }
  }

  // ---- derived quantities

  sessionEnd(s: Session): number {
    return Math.min(s.plannedEndS ?? Infinity, s.stoppedS ?? Infinity, s.diedS ?? Infinity, s.quitS ?? Infinity);
  }

  gpuLoadEnd(g: GpuLoad): number {
    return Math.min(g.plannedEndS ?? Infinity, g.stoppedS ?? Infinity, g.exitedS ?? Infinity);
  }

  // True while a reboot (a fault, or one the node was told to do) keeps the node down.
  rebooting(node: string, tS: number): boolean {
    const down = (atS: number, durationS: number) => tS >= atS && tS < atS + durationS;
    return (
      this.faults.some((f) => f.kind === 'node-reboot' && this.faultNode(f) === node && down(f.atS, f.durationS)) ||
      this.commandedReboots.some((r) => r.node === node && down(r.atS, r.durationS))
    );
  }

  faultNode(f: Fault): string {
    return f.node ?? this.nodes[1]!.name;
  }

  // Share of the GPU load generator's effect on one node at time t (0 idle .. 1 fully loaded); in service, at least the
  // workload's.
  gpuShare(node: string, tS: number): number {
    const active = this.gpuLoads.some((g) => g.node === node && g.startS <= tS && tS < this.gpuLoadEnd(g));
    const service = this.serviceLoad(tS).gpu;
    if (!active) return service;
    const n = this.spec.nodes.find((x) => x.name === node);
    return Math.max(service, n?.gpuLoadIneffective ? 0.04 : 1);
  }

  // The service workload at lab time tS (zero without a `service`, while the engine is down, or after its restart):
  // GPU and link shares interpolated on the daily cycle.
  serviceLoad(tS: number): { gpu: number; link: number } {
    const w = this.spec.service?.workload;
    if (!w || tS < this.engineOffUntilS) return NO_SERVICE;
    const h = (tS / 3600) % 24;
    let i = 0;
    while (i < w.length && w[i]![0] <= h) i++;
    const [a, b] = [w[(i + w.length - 1) % w.length]!, w[i % w.length]!];
    const span = (b[0] - a[0] + 24) % 24 || 24;
    const f = ((h - a[0] + 24) % 24) / span;
    return { gpu: a[1] + (b[1] - a[1]) * f, link: a[2] + (b[2] - a[2]) * f };
  }

  // The sessions on the wire over [a, b) (loopback aside: it never leaves the node).
  private wireSessions(a: number, b: number): Session[] {
    return this.sessions.filter((s) => !s.loopback && s.startS < b && this.sessionEnd(s) > a);
  }

  // The share of its own rate a session gets, averaged over its time within [a, b): a PCIe rail carries one rate per
  // direction, shared equally by the streams of both cables through it (exactly 1 with no other stream there).
  shareOver(s: Session, a: number, b: number, live: Session[] = this.wireSessions(a, b)): number {
    if (s.loopback) return 1;
    const mine = resourcesOf(s);
    const rivals = live.filter((x) => x !== s && resourcesOf(x).some((r) => mine.includes(r)));
    if (rivals.length === 0) return 1;
    const from = Math.max(a, s.startS);
    const to = Math.min(b, this.sessionEnd(s));
    if (!(to > from)) return 1;
    const cuts = [from, to, ...rivals.flatMap((x) => [x.startS, this.sessionEnd(x)]).filter((t) => t > from && t < to)].sort((x, y) => x - y);
    let sum = 0;
    for (let i = 1; i < cuts.length; i++) {
      const mid = (cuts[i - 1]! + cuts[i]!) / 2;
      const on = rivals.filter((x) => x.startS <= mid && mid < this.sessionEnd(x));
      const crowd = Math.max(...mine.map((r) => 1 + on.filter((x) => resourcesOf(x).includes(r)).length));
      sum += (cuts[i]! - cuts[i - 1]!) / crowd;
    }
    return sum / (to - from);
  }

  // Wire traffic into and out of a node over [a, b), in Gb/s averaged over the interval, per rail (PCIe function);
  // of one cable's sessions when a link is given, else of every cable (what the NIC carries).
  private traffic(node: string, a: number, b: number, link?: LinkSim): { rx: [number, number]; tx: [number, number] } {
    const rx: [number, number] = [0, 0];
    const tx: [number, number] = [0, 0];
    const live = this.wireSessions(a, b);
    for (const s of live) {
      const client = s.clientNode === node && (!link || this.sideOn(link, node, s.clientCage));
      const server = s.serverNode === node && (!link || this.sideOn(link, node, s.serverCage));
      if (!client && !server) continue;
      const overlap = Math.max(0, Math.min(b, this.sessionEnd(s)) - Math.max(a, s.startS)) / (b - a);
      if (overlap <= 0) continue;
      const g = s.gbpsPerDir * overlap * this.shareOver(s, a, b, live);
      const cr = s.clientRail === 0 ? 0 : 1;
      const sr = s.serverRail === 0 ? 0 : 1;
      if (client) {
        tx[cr] += g;
        if (s.bidir) rx[cr] += g;
      }
      if (server) {
        rx[sr] += g;
        if (s.bidir) tx[sr] += g;
      }
    }
    return { rx, tx };
  }

  private thermalTarget(n: NodeSim, a: number, b: number): number {
    const { rx, tx } = this.traffic(n.name, a, b);
    const linkShare = Math.max(this.serviceLoad((a + b) / 2).link, Math.min(1, (rx[0] + rx[1] + tx[0] + tx[1]) / (4 * this.spec.throughput.railGbps)));
    const th = this.spec.thermal;
    const off = this.spec.nodes[n.index]!.nicTempOffsetC ?? 0;
    return th.ambientC + off + linkShare * th.linkLoadC + this.gpuShare(n.name, (a + b) / 2) * th.gpuLoadC;
  }

  // Pre-FEC raw errors per second of each lane of a cable at one receiver (node) at its NIC temperature tempC.
  laneRates(link: LinkSim, node: string, tempC: number): number[] {
    return receiverLanes(link.spec, node).map((c) => curveAt(c, tempC));
  }

  // RS(544,514) codeword statistics of one receiver of a cable whose lanes run at these raw error rates.
  fecStats(link: LinkSim, rates: number[]): CodewordStats {
    return codewordStats(link.laneCount, this.laneErrors(link, rates));
  }

  // Each lane's error process: its raw error rate and the cable's mean burst length at that rate.
  private laneErrors(link: LinkSim, rates: number[]): LaneErrors[] {
    const rate = laneBitRate(link.spec.cable.family);
    return rates.slice(0, link.laneCount).map((r) => ({ bitsPerS: r, meanBits: burstBitsAt(link.spec, r / rate) }));
  }

  // ---- the integrator

  // Step the model until `tS` (lab seconds); counters change once per whole second, like a polled register.
  advance(tS: number): void {
    while (this.k + 1 <= tS) this.step(this.k++);
  }

  private step(k: number): void {
    const mid = k + 0.5;
    for (const f of this.faults) {
      if (f.atS < k || f.atS >= k + 1) continue;
      if (f.kind === 'node-reboot') this.reboot(this.faultNode(f), f.atS);
      else if (f.kind === 'link-load-stop') this.loadClientsQuit(this.faultNode(f), f.atS);
      else if (f.kind === 'gpu-load-stop') this.gpuLoadExits(this.faultNode(f), f.atS);
      else if (f.kind === 'counter-reset') this.resetCounters(this.faultNode(f), f.atS);
      else if (f.kind === 'uncorrectable') this.uncorrectableAt(this.faultNode(f), f.atS);
      else if (f.kind === 'link-drop' && this.links[0]!.linkUp)
        this.dropLink(this.links[0]!, f.atS, 'simulated fault', f.durationS, SIM_LINK_DOWN_REASONS.flap);
      else if (f.kind === 'phy-recovery') this.recover(this.faultNode(f), f.atS);
    }
    for (const r of this.spec.recoveries ?? []) if (r.atS >= k && r.atS < k + 1) this.recover(r.node, r.atS);
    for (const r of this.commandedReboots) if (r.atS >= k && r.atS < k + 1) this.reboot(r.node, r.atS);
    for (const link of this.links) {
      const anyRebooting = this.nodesOf(link).some((n) => this.rebooting(n.name, mid));
      if (!link.linkUp && k >= link.downUntil && !anyRebooting) {
        link.linkUp = true;
        if (this.spec.service && this.engineOffUntilS === Infinity) this.engineOffUntilS = k + this.spec.service.restartS;
        this.events.push({ tS: k, kind: 'link-up', ...this.cageOf(link) });
      }
      if (link.linkUp && anyRebooting) this.dropLink(link, k, 'peer rebooting', link.spec.linkRecoverS, SIM_LINK_DOWN_REASONS.peerDown);
      // The link trains again only once both ends are up.
      if (anyRebooting) link.downUntil = Math.max(link.downUntil, Math.ceil(k + 1 + link.spec.linkRecoverS));
    }

    const targets = this.nodes.map((n) => this.thermalTarget(n, k, k + 1));
    const tau = this.spec.thermal.tauS;
    const midTemps = this.nodes.map((n, i) => targets[i]! + (n.temp - targets[i]!) * Math.exp(-0.5 / tau));

    for (const link of this.links) if (link.linkUp) this.stepLink(link, k, midTemps);

    for (const n of this.nodes) {
      const target = targets[n.index]!;
      n.temp = target + (n.temp - target) * Math.exp(-1 / tau);
      const g = this.spec.gpu;
      const gTarget = g.idleTempC + this.gpuShare(n.name, mid) * (g.loadTempC - g.idleTempC);
      n.gpuTemp = gTarget + (n.gpuTemp - gTarget) * Math.exp(-1 / 40);
    }
  }

  // One second of one cable whose link is up: each receiver's lane errors and codewords at its NIC's temperature, the
  // traffic it carried, and the link drops they cause (two uncorrectable codewords close together, a scheduled flap).
  private stepLink(link: LinkSim, k: number, midTemps: number[]): void {
    const mid = k + 0.5;
    let hiBer: string | null = null;
    for (const e of [0, 1] as const) {
      if (link.at[e]! < 0) continue; // a switch port: its receiver is the switch's, not the lab's
      const n = this.nodes[link.at[e]!]!;
      const temp = midTemps[n.index]!;
      const key = link.keys[e]!;
      const port = link.ends[e]!.counters;
      const lanes = this.laneErrors(link, this.laneRates(link, n.name, temp));
      const drawn = drawSecond(lanes, codewordStats(link.laneCount, lanes), this.seed, key, k);
      let bits = 0;
      for (let l = 0; l < link.laneCount; l++) {
        port.lanes[l as 0 | 1 | 2 | 3] += drawn.laneBits[l]!;
        bits += drawn.laneBits[l]!;
      }
      // The scenario's scripted uncorrectable codewords (not physics: no errored bits come with them).
      const extra = link.spec.uncorrectablePerS ? poisson(curveAt(link.spec.uncorrectablePerS, temp), this.seed, key, 19, k) : 0;
      const unc = drawn.uncorrectable + extra;
      port.correctedBits += bits;
      port.correctedBlocks += drawn.corrected;
      port.uncorrectable += unc;
      const { rx, tx } = this.traffic(n.name, k, k + 1, link);
      // Frames an uncorrectable codeword overlaps: with frames on the line (the share of the receiver's line time that
      // carries them; idle codewords hit none) its 640 bytes lie in one frame slot, or across two for 640 of every
      // 1102 places. A frame it overlaps fails its FCS; mlx5 counts it in rx_crc_errors_phy, rx_symbol_err_phy and
      // rx_pcs_symbol_err_phy alike (the real degraded port of samples/ethtool-stats/mlx5-100g-annotated-...: 386 each).
      const busy = Math.max(this.serviceLoad(mid).link, Math.min(1, (rx[0] + rx[1]) / 200));
      const lost = binomial(unc, busy, this.seed, key, 13, k) + binomial(unc, (busy * CODEWORD_BYTES) / FRAME_SLOT_BYTES, this.seed, key, 17, k);
      port.crcFrames += lost;
      port.pcsSymbolErrors += lost;
      if (!hiBer && this.uncorrectableBurst(link, e, unc, k)) hiBer = n.name;
      const rails = n.rails[link.cages[e]!]!;
      for (const r of [0, 1] as const) {
        const rb = (rx[r] * 1e9) / 8;
        const tb = (tx[r] * 1e9) / 8;
        rails[r].rxBytes += Math.round(rb);
        rails[r].txBytes += Math.round(tb);
        rails[r].rxPackets += Math.round(rb / WIRE_FRAME_BYTES);
        rails[r].txPackets += Math.round(tb / WIRE_FRAME_BYTES);
        port.rxBytes += Math.round(rb);
        port.txBytes += Math.round(tb);
        port.rxPackets += Math.round(rb / WIRE_FRAME_BYTES);
        port.txPackets += Math.round(tb / WIRE_FRAME_BYTES);
      }
    }
    // Idle-GPU link load run, for the scenario's scheduled flaps.
    const { rx, tx } = this.traffic(this.nodes[link.at[0]]!.name, k, k + 1, link);
    const loaded = rx[0] + rx[1] + tx[0] + tx[1] >= 3.6 * link.spec.throughput.railGbps * 0.5;
    const gpusIdle = this.nodesOf(link).every((n) => this.gpuShare(n.name, mid) === 0);
    link.idleLoadRunS = loaded && gpusIdle ? link.idleLoadRunS + 1 : 0;
    const flap = (link.spec.flaps ?? []).findIndex((f, i) => !link.flapsFired.has(i) && link.idleLoadRunS >= f.afterIdleLinkLoadS);
    if (hiBer) {
      this.dropLink(
        link,
        k + 1,
        `hi_ber at ${hiBer}: ${HI_BER_UNCORRECTABLE} uncorrectable RS(544,514) codewords within ${HI_BER_WINDOW_S * 1e6} us`,
        link.spec.linkRecoverS,
        SIM_LINK_DOWN_REASONS.hiBer,
      );
    } else if (flap >= 0) {
      link.flapsFired.add(flap);
      this.dropLink(link, k + 1, 'link flap', link.spec.flaps![flap]!.downS, SIM_LINK_DOWN_REASONS.flap);
    }
  }

  // Whether this second's `count` uncorrectable codewords at a receiver (at seeded times within the second) put two
  // within the PCS's BER-monitor window, counting the last one of earlier seconds.
  private uncorrectableBurst(link: LinkSim, e: number, count: number, k: number): boolean {
    if (count <= 0) return false;
    if (count > 1 / HI_BER_WINDOW_S + 1) return true; // more than fit a second without two in one window
    const key = link.keys[e]!;
    const end = link.ends[e]!;
    const times = Array.from({ length: count }, (_, i) => k + uniform(this.seed, key, 14, k, i)).sort((a, b) => a - b);
    let last = end.lastUncorrectableS;
    let burst = false;
    for (const t of times) {
      if (t - last < HI_BER_WINDOW_S) burst = true;
      last = t;
    }
    end.lastUncorrectableS = last;
    return burst;
  }

  private dropLink(link: LinkSim, tS: number, why: string, downS: number, reason: string): void {
    link.linkUp = false;
    // In service the link's drop kills the distributed engine (DOMAIN.md: each reset killed the inference engine).
    if (this.spec.service) this.engineOffUntilS = Infinity;
    link.downReason = reason;
    link.downUntil = Math.ceil(tS + downS);
    for (const n of this.nodesOf(link)) {
      if (!this.rebooting(n.name, tS)) link.ends[endAt(link, n.index)]!.counters.linkDown += 1;
      this.events.push({ tS, kind: 'link-down', node: n.name, detail: why, ...this.cageOf(link) });
    }
    for (const s of this.sessions) {
      if (!s.loopback && (s.link === link.index || this.crosses(s, link)) && s.diedS === null && s.startS <= tS && tS < this.sessionEnd(s)) s.diedS = tS;
    }
  }

  // The node's ib_write_bw clients over the cable exit by themselves (their servers see the session end).
  private loadClientsQuit(node: string, tS: number): void {
    for (const s of this.sessions) {
      if (s.clientNode !== node || s.loopback || s.startS > tS || tS >= this.sessionEnd(s)) continue;
      s.quitS = tS;
      this.events.push({ tS, kind: 'ib_write_bw-exit', node, detail: `rail ${s.clientRail} -> ${s.serverNode} (simulated fault)` });
    }
  }

  // One uncorrectable RS codeword at the node's receiver of its first cable (a scripted fault, as a scenario's
  // uncorrectablePerS: no errored bits come with it, and it is taken to fall between frames: the FEC counter alone).
  private uncorrectableAt(node: string, tS: number): void {
    const i = this.node(node).index;
    const link = this.links.find((l) => endAt(l, i) >= 0);
    if (!link?.linkUp) return;
    link.ends[endAt(link, i)]!.counters.uncorrectable += 1;
    this.events.push({ tS, kind: 'uncorrectable', node, detail: 'simulated fault' });
  }

  // The node's GPU load process exits by itself: the GPU falls idle.
  private gpuLoadExits(node: string, tS: number): void {
    for (const g of this.gpuLoads) {
      if (g.node !== node || g.startS > tS || tS >= this.gpuLoadEnd(g)) continue;
      g.exitedS = tS;
      this.events.push({ tS, kind: 'gpu-load-exit', node, detail: 'simulated fault' });
    }
  }

  // Every physical-port (*_phy) and FEC counter of the node back to 0, as `mlxlink --pc` clears them (docs/formats.md
  // §1); the link, the per-function (vport) counters and the node's boot stay as they were.
  private resetCounters(node: string, tS: number): void {
    const i = this.node(node).index;
    for (const link of this.links) if (endAt(link, i) >= 0) link.ends[endAt(link, i)]!.counters = ZERO_PORT();
    this.events.push({ tS, kind: 'counter-reset', node });
  }

  // The node's PHY recovers each of its links that is up without it going down (the port's reset cycle succeeded).
  private recover(node: string, tS: number): void {
    const i = this.node(node).index;
    for (const link of this.links) if (link.linkUp) link.ends[i]!.counters.recoveries += 1;
    this.events.push({ tS, kind: 'phy-recovery', node });
  }

  private reboot(node: string, tS: number): void {
    const n = this.node(node);
    for (const link of this.links) if (endAt(link, n.index) >= 0) link.ends[endAt(link, n.index)]!.counters = ZERO_PORT();
    n.rails = ZERO_RAILS();
    n.baseline = 0;
    n.bootCount += 1;
    n.bootS = tS;
    // Booting with the cable in clears the hot-plug trap (docs/formats.md §0: a reboot of both nodes with the cable attached).
    if (this.anyPlugged) n.hotplugThrottled = false;
    this.events.push({ tS, kind: 'reboot', node });
    for (const s of this.sessions) {
      if ((s.clientNode === node || s.serverNode === node) && s.diedS === null && tS < this.sessionEnd(s)) s.diedS = tS;
    }
    for (const g of this.gpuLoads) if (g.node === node && tS < this.gpuLoadEnd(g)) g.stoppedS = tS;
  }

  // ---- queries (each advances the model to tS first)

  // Why a cable's link is down, as `ethtool <if>` prints it (null while it is up).
  linkDownReason(tS: number, link: LinkSim = this.links[0]!): string | null {
    this.advance(tS);
    return link.linkUp ? null : link.downReason;
  }

  // Whether a cable's link is up (the first cable's when none is given).
  isLinkUp(tS: number, link: LinkSim = this.links[0]!): boolean {
    this.advance(tS);
    return link.linkUp;
  }

  nicTemp(node: string, tS: number): number {
    this.advance(tS);
    const n = this.node(node);
    const frac = tS - this.k;
    const target = this.thermalTarget(n, this.k, this.k + 1);
    return target + (n.temp - target) * Math.exp(-Math.max(0, frac) / this.spec.thermal.tauS);
  }

  gpu(node: string, tS: number): { util: number; temp: number; power: number } {
    this.advance(tS);
    const g = this.spec.gpu;
    const share = this.gpuShare(node, tS);
    const key = streamId(node);
    const sec = Math.floor(tS);
    const util = share === 0 ? g.idleUtilPct : Math.round(g.idleUtilPct + share * (g.loadUtilPct - g.idleUtilPct) + normal(this.seed, key, 21, sec));
    const power = g.idlePowerW + share * (g.loadPowerW - g.idlePowerW) + 0.3 * normal(this.seed, key, 22, sec);
    return { util: Math.max(0, Math.min(100, util)), temp: Math.round(this.node(node).gpuTemp), power: Math.max(1, power) };
  }

  // A node's counters of one cage: its cable's port (zero on a cage without a cable) and its two functions' traffic.
  counters(node: string, tS: number, cage: number): { port: PortCounters; rails: [RailCounters, RailCounters] } {
    this.advance(tS);
    const n = this.node(node);
    const link = this.linkAt(node, cage);
    const p = link?.ends[endAt(link, n.index)]!.counters ?? ZERO_PORT();
    const rails = n.rails[cage] ?? [ZERO_RAIL(), ZERO_RAIL()];
    return { port: { ...p, lanes: [...p.lanes] }, rails: [{ ...rails[0] }, { ...rails[1] }] };
  }

  boot(node: string, tS: number): { bootId: string; uptimeS: number } {
    this.advance(tS);
    const n = this.node(node);
    return { bootId: this.bootIdOf(node, n.bootCount), uptimeS: tS - n.bootS };
  }

  // A node's boot id for its n-th boot (generated; read with every `ethtool -S`, so kept once made).
  private bootIdOf(node: string, bootCount: number): string {
    const key = `${node}\n${bootCount}`;
    let id = this.bootIds.get(key);
    if (id === undefined) {
      const hex = (i: number) =>
        Math.floor(uniform(this.seed, streamId(node), 31, bootCount, i) * 2 ** 32)
          .toString(16)
          .padStart(8, '0');
      const h = hex(0) + hex(1) + hex(2) + hex(3);
      id = `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
      this.bootIds.set(key, id);
    }
    return id;
  }
  private readonly bootIds = new Map<string, string>();

  // A node as one cable's receiver (the first cable's when no cage is given).
  state(node: string, tS: number, cage?: number): SimNodeState {
    const i = this.node(node).index;
    const mine = this.links.find((l) => endAt(l, i) >= 0) ?? this.links[0]!;
    const link = (cage === undefined ? mine : this.linkAt(node, cage)) ?? mine;
    const temp = this.nicTemp(node, tS);
    const rates = this.laneRates(link, node, temp).slice(0, link.laneCount);
    const g = this.gpu(node, tS);
    const c = this.counters(node, tS, link.cages[Math.max(0, endAt(link, i))]!);
    const b = this.boot(node, tS);
    const up = link.linkUp;
    return {
      tS,
      linkUp: up,
      nicTempC: temp,
      gpuUtilPct: g.util,
      gpuTempC: g.temp,
      gpuPowerW: g.power,
      laneErrorRates: up ? rates : rates.map(() => 0),
      laneBer: rates.map((r) => (up ? r / laneBitRate(link.spec.cable.family) : 0)),
      fec: this.fecStats(link, up ? rates : rates.map(() => 0)),
      port: c.port,
      rails: c.rails,
      bootId: b.bootId,
      uptimeS: b.uptimeS,
      rebooting: this.rebooting(node, tS),
    };
  }
}
