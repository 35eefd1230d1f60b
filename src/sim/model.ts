// The physical model of the simulated lab: two nodes joined by one cable (cage 1 unless a node names its cage), stepped one second at a time
// from the event timeline (loads started and stopped, faults). State is computed lazily up to clock.now():
// nothing runs in the background, and the same scenario and seed always give the same counters.
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
}

// The physical-port (PPCNT) counters of the cabled cage: both netdevs of the cage read these.
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
  port: PortCounters;
  rails: [RailCounters, RailCounters];
  baseline: number; // traffic counted before the lab started (seeded)
  bootCount: number;
  bootS: number; // lab time of the last boot (negative: before the lab)
  lastUncorrectableS: number; // lab time of the last uncorrectable codeword, for the PCS's BER monitor
  // The hot-plug trap: a cable plugged into this node while it ran; every transfer crawls until it reboots with the cable in.
  hotplugThrottled: boolean;
}

// A reboot a node was told to do (`systemctl reboot --no-block`): down from atS for durationS.
interface CommandedReboot {
  node: string;
  atS: number;
  durationS: number;
}

// Per-rail rate of a Spark in the hot-plug trap: 13.22 Gb/s in the real degraded rows (samples/ib_write_bw/
// spark-hotplug-degraded-single-rail-1MiB-5000-iters.txt), 13.23 with iperf; counters stay clean.
export const HOTPLUG_THROTTLE_GBPS = 13.2;
// Seconds between `systemctl reboot --no-block` returning and the node going down.
const SHUTDOWN_S = 3;

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
});
const ZERO_RAIL = (): RailCounters => ({ rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0 });
const WIRE_FRAME_BYTES = 1024 + 58; // RoCE MTU 1024 payload + headers and FCS
const FRAME_SLOT_BYTES = WIRE_FRAME_BYTES + 20; // + preamble, SFD and inter-frame gap
// MAC bytes one codeword carries (80 x 66b blocks of 8 bytes).
const CODEWORD_BYTES = BLOCKS_PER_CODEWORD * 8;

export class LabModel {
  readonly events: LabEvent[] = [];
  readonly sessions: Session[] = [];
  readonly gpuLoads: GpuLoad[] = [];
  private readonly nodes: NodeSim[];
  private k = 0; // seconds stepped so far
  private linkUp = true;
  private downUntil = 0;
  private idleLoadRunS = 0;
  private flapsFired = new Set<number>();
  private nextId = 1;
  // Reboots the nodes were told to do, kept across cable swaps (the nodes stay the same).
  private commandedReboots: CommandedReboot[] = [];
  readonly laneCount: 4 | 2;

  constructor(
    readonly spec: ScenarioSpec,
    readonly seed: number,
    readonly faults: Fault[],
    replug?: { from: LabModel; atS: number },
  ) {
    this.laneCount = laneCountOf(spec.cable.family);
    this.nodes = spec.nodes.map((n, index) => ({
      name: n.name,
      index,
      temp: spec.thermal.ambientC + (n.nicTempOffsetC ?? 0),
      gpuTemp: spec.gpu.idleTempC,
      port: ZERO_PORT(),
      rails: [ZERO_RAIL(), ZERO_RAIL()],
      baseline: Math.floor(1e9 + uniform(seed, streamId(n.name), 7) * 5e10),
      bootCount: 0,
      bootS: -Math.floor(86400 + uniform(seed, streamId(n.name), 8) * 4 * 86400),
      lastUncorrectableS: -Infinity,
      hotplugThrottled: false,
    }));
    if (replug) this.takeOver(replug.from, replug.atS);
  }

  // A cable is in the cage (false between unplug() and the next plug: no link, no EEPROM).
  plugged = true;

  // Pull the cable: the link goes down and stays down; the EEPROM can no longer be read.
  unplug(tS: number): void {
    this.advance(tS);
    if (!this.plugged) return;
    if (this.linkUp) this.dropLink(tS, 'cable unplugged', Infinity);
    else this.downUntil = Infinity;
    this.plugged = false;
    this.events.push({ tS, kind: 'cable-unplugged' });
  }

  // A new cable in the same nodes: node state (temperatures, boots, per-function traffic, reboots under way) carries
  // over, the port's PPCNT counters restart from zero as on a re-plugged Spark, and the link trains for linkRecoverS.
  // The hot-plug trap: every node that was running when the cable went in is throttled until it reboots.
  private takeOver(old: LabModel, tS: number): void {
    old.advance(tS);
    this.events.push(...old.events);
    this.k = old.k;
    this.commandedReboots = old.commandedReboots;
    for (const n of this.nodes) {
      const o = old.nodes.find((x) => x.name === n.name);
      if (!o) continue;
      Object.assign(n, { temp: o.temp, gpuTemp: o.gpuTemp, rails: o.rails, baseline: o.baseline, bootCount: o.bootCount, bootS: o.bootS });
      n.hotplugThrottled = !this.rebooting(n.name, tS);
    }
    this.linkUp = false;
    this.downUntil = Math.ceil(tS + this.spec.linkRecoverS);
    this.events.push({ tS, kind: 'cable-plugged', detail: `${this.spec.name} serial ${this.spec.cable.eeprom.vendorSn}` });
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

  get nodeNames(): string[] {
    return this.nodes.map((n) => n.name);
  }

  private node(name: string): NodeSim {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no simulated node ${name}`);
    return n;
  }

  peerOf(name: string): string {
    return this.nodes.find((x) => x.name !== name)!.name;
  }

  // ---- timeline input (called by the runner at the current time)

  addSession(s: Omit<Session, 'id' | 'stoppedS' | 'diedS' | 'quitS'>): Session {
    this.advance(s.startS);
    const session: Session = { ...s, id: this.nextId++, stoppedS: null, diedS: null, quitS: null };
    if (!session.loopback && !this.linkUp) session.diedS = s.startS;
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

  // Share of the GPU load generator's effect on one node at time t (0 idle .. 1 fully loaded).
  gpuShare(node: string, tS: number): number {
    const active = this.gpuLoads.some((g) => g.node === node && g.startS <= tS && tS < this.gpuLoadEnd(g));
    if (!active) return 0;
    const n = this.spec.nodes.find((x) => x.name === node);
    return n?.gpuLoadIneffective ? 0.04 : 1;
  }

  // Wire traffic into and out of a node over [a, b), in Gb/s averaged over the interval, per rail.
  private traffic(node: string, a: number, b: number): { rx: [number, number]; tx: [number, number] } {
    const rx: [number, number] = [0, 0];
    const tx: [number, number] = [0, 0];
    for (const s of this.sessions) {
      if (s.loopback) continue;
      const overlap = Math.max(0, Math.min(b, this.sessionEnd(s)) - Math.max(a, s.startS)) / (b - a);
      if (overlap <= 0) continue;
      const g = s.gbpsPerDir * overlap;
      const cr = s.clientRail === 0 ? 0 : 1;
      const sr = s.serverRail === 0 ? 0 : 1;
      if (s.clientNode === node) {
        tx[cr] += g;
        if (s.bidir) rx[cr] += g;
      }
      if (s.serverNode === node) {
        rx[sr] += g;
        if (s.bidir) tx[sr] += g;
      }
    }
    return { rx, tx };
  }

  private thermalTarget(n: NodeSim, a: number, b: number): number {
    const { rx, tx } = this.traffic(n.name, a, b);
    const linkShare = Math.min(1, (rx[0] + rx[1] + tx[0] + tx[1]) / (4 * this.spec.throughput.railGbps));
    const th = this.spec.thermal;
    const off = this.spec.nodes[n.index]!.nicTempOffsetC ?? 0;
    return th.ambientC + off + linkShare * th.linkLoadC + this.gpuShare(n.name, (a + b) / 2) * th.gpuLoadC;
  }

  // Pre-FEC raw errors per second of each lane at one receiver (node) at its NIC temperature tempC.
  laneRates(node: string, tempC: number): number[] {
    return receiverLanes(this.spec, node).map((c) => curveAt(c, tempC));
  }

  // RS(544,514) codeword statistics of one receiver whose lanes run at these raw error rates.
  fecStats(rates: number[]): CodewordStats {
    return codewordStats(this.laneCount, this.laneErrors(rates));
  }

  // Each lane's error process: its raw error rate and the scenario's mean burst length at that rate.
  private laneErrors(rates: number[]): LaneErrors[] {
    const rate = laneBitRate(this.spec.cable.family);
    return rates.slice(0, this.laneCount).map((r) => ({ bitsPerS: r, meanBits: burstBitsAt(this.spec, r / rate) }));
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
    }
    for (const r of this.commandedReboots) if (r.atS >= k && r.atS < k + 1) this.reboot(r.node, r.atS);
    const anyRebooting = this.nodes.some((n) => this.rebooting(n.name, mid));
    if (!this.linkUp && k >= this.downUntil && !anyRebooting) {
      this.linkUp = true;
      this.events.push({ tS: k, kind: 'link-up' });
    }
    if (this.linkUp && anyRebooting) this.dropLink(k, 'peer rebooting', this.spec.linkRecoverS);
    // The link trains again only once both ends are up.
    if (anyRebooting) this.downUntil = Math.max(this.downUntil, Math.ceil(k + 1 + this.spec.linkRecoverS));

    const targets = this.nodes.map((n) => this.thermalTarget(n, k, k + 1));
    const tau = this.spec.thermal.tauS;
    const midTemps = this.nodes.map((n, i) => targets[i]! + (n.temp - targets[i]!) * Math.exp(-0.5 / tau));

    if (this.linkUp) {
      let hiBer: string | null = null;
      for (const n of this.nodes) {
        const temp = midTemps[n.index]!;
        const key = streamId(n.name);
        const lanes = this.laneErrors(this.laneRates(n.name, temp));
        const drawn = drawSecond(lanes, codewordStats(this.laneCount, lanes), this.seed, key, k);
        let bits = 0;
        for (let l = 0; l < this.laneCount; l++) {
          n.port.lanes[l as 0 | 1 | 2 | 3] += drawn.laneBits[l]!;
          bits += drawn.laneBits[l]!;
        }
        // The scenario's scripted uncorrectable codewords (not physics: no errored bits come with them).
        const extra = this.spec.uncorrectablePerS ? poisson(curveAt(this.spec.uncorrectablePerS, temp), this.seed, key, 19, k) : 0;
        const unc = drawn.uncorrectable + extra;
        n.port.correctedBits += bits;
        n.port.correctedBlocks += drawn.corrected;
        n.port.uncorrectable += unc;
        const { rx, tx } = this.traffic(n.name, k, k + 1);
        // Frames an uncorrectable codeword overlaps: with frames on the line (the share of the receiver's line time that
        // carries them; idle codewords hit none) its 640 bytes lie in one frame slot, or across two for 640 of every
        // 1102 places. A frame it overlaps fails its FCS; mlx5 counts it in rx_crc_errors_phy, rx_symbol_err_phy and
        // rx_pcs_symbol_err_phy alike (the real degraded port of samples/ethtool-stats/mlx5-100g-annotated-...: 386 each).
        const busy = Math.min(1, (rx[0] + rx[1]) / 200);
        const lost = binomial(unc, busy, this.seed, key, 13, k) + binomial(unc, (busy * CODEWORD_BYTES) / FRAME_SLOT_BYTES, this.seed, key, 17, k);
        n.port.crcFrames += lost;
        n.port.pcsSymbolErrors += lost;
        if (!hiBer && this.uncorrectableBurst(n, unc, k)) hiBer = n.name;
        for (const r of [0, 1] as const) {
          const rb = (rx[r] * 1e9) / 8;
          const tb = (tx[r] * 1e9) / 8;
          n.rails[r].rxBytes += Math.round(rb);
          n.rails[r].txBytes += Math.round(tb);
          n.rails[r].rxPackets += Math.round(rb / WIRE_FRAME_BYTES);
          n.rails[r].txPackets += Math.round(tb / WIRE_FRAME_BYTES);
          n.port.rxBytes += Math.round(rb);
          n.port.txBytes += Math.round(tb);
          n.port.rxPackets += Math.round(rb / WIRE_FRAME_BYTES);
          n.port.txPackets += Math.round(tb / WIRE_FRAME_BYTES);
        }
      }
      // Idle-GPU link load run, for the scenario's scheduled flaps.
      const { rx, tx } = this.traffic(this.nodes[0]!.name, k, k + 1);
      const loaded = rx[0] + rx[1] + tx[0] + tx[1] >= 3.6 * this.spec.throughput.railGbps * 0.5;
      const gpusIdle = this.nodes.every((n) => this.gpuShare(n.name, mid) === 0);
      this.idleLoadRunS = loaded && gpusIdle ? this.idleLoadRunS + 1 : 0;
      const flap = (this.spec.flaps ?? []).findIndex((f, i) => !this.flapsFired.has(i) && this.idleLoadRunS >= f.afterIdleLinkLoadS);
      if (hiBer) {
        this.dropLink(
          k + 1,
          `hi_ber at ${hiBer}: ${HI_BER_UNCORRECTABLE} uncorrectable RS(544,514) codewords within ${HI_BER_WINDOW_S * 1e6} us`,
          this.spec.linkRecoverS,
        );
      } else if (flap >= 0) {
        this.flapsFired.add(flap);
        this.dropLink(k + 1, 'link flap', this.spec.flaps![flap]!.downS);
      }
    }

    for (const n of this.nodes) {
      const target = targets[n.index]!;
      n.temp = target + (n.temp - target) * Math.exp(-1 / tau);
      const g = this.spec.gpu;
      const gTarget = g.idleTempC + this.gpuShare(n.name, mid) * (g.loadTempC - g.idleTempC);
      n.gpuTemp = gTarget + (n.gpuTemp - gTarget) * Math.exp(-1 / 40);
    }
  }

  // Whether this second's `count` uncorrectable codewords at a receiver (at seeded times within the second) put two
  // within the PCS's BER-monitor window, counting the last one of earlier seconds.
  private uncorrectableBurst(n: NodeSim, count: number, k: number): boolean {
    if (count <= 0) return false;
    if (count > 1 / HI_BER_WINDOW_S + 1) return true; // more than fit a second without two in one window
    const key = streamId(n.name);
    const times = Array.from({ length: count }, (_, i) => k + uniform(this.seed, key, 14, k, i)).sort((a, b) => a - b);
    let last = n.lastUncorrectableS;
    let burst = false;
    for (const t of times) {
      if (t - last < HI_BER_WINDOW_S) burst = true;
      last = t;
    }
    n.lastUncorrectableS = last;
    return burst;
  }

  private dropLink(tS: number, why: string, downS: number): void {
    this.linkUp = false;
    this.downUntil = Math.ceil(tS + downS);
    for (const n of this.nodes) {
      if (!this.rebooting(n.name, tS)) n.port.linkDown += 1;
      this.events.push({ tS, kind: 'link-down', node: n.name, detail: why });
    }
    for (const s of this.sessions) {
      if (!s.loopback && s.diedS === null && s.startS <= tS && tS < this.sessionEnd(s)) s.diedS = tS;
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
    this.node(node).port = ZERO_PORT();
    this.events.push({ tS, kind: 'counter-reset', node });
  }

  private reboot(node: string, tS: number): void {
    const n = this.node(node);
    n.port = ZERO_PORT();
    n.rails = [ZERO_RAIL(), ZERO_RAIL()];
    n.baseline = 0;
    n.bootCount += 1;
    n.bootS = tS;
    // Booting with the cable in clears the hot-plug trap (docs/formats.md §0: a reboot of both nodes with the cable attached).
    if (this.plugged) n.hotplugThrottled = false;
    this.events.push({ tS, kind: 'reboot', node });
    for (const s of this.sessions) {
      if ((s.clientNode === node || s.serverNode === node) && s.diedS === null && tS < this.sessionEnd(s)) s.diedS = tS;
    }
    for (const g of this.gpuLoads) if (g.node === node && tS < this.gpuLoadEnd(g)) g.stoppedS = tS;
  }

  // ---- queries (each advances the model to tS first)

  isLinkUp(tS: number): boolean {
    this.advance(tS);
    return this.linkUp;
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

  counters(node: string, tS: number): { port: PortCounters; rails: [RailCounters, RailCounters]; baseline: number } {
    this.advance(tS);
    const n = this.node(node);
    return { port: { ...n.port, lanes: [...n.port.lanes] }, rails: [{ ...n.rails[0] }, { ...n.rails[1] }], baseline: n.baseline };
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

  state(node: string, tS: number): SimNodeState {
    const temp = this.nicTemp(node, tS);
    const rates = this.laneRates(node, temp).slice(0, this.laneCount);
    const g = this.gpu(node, tS);
    const c = this.counters(node, tS);
    const b = this.boot(node, tS);
    return {
      tS,
      linkUp: this.linkUp,
      nicTempC: temp,
      gpuUtilPct: g.util,
      gpuTempC: g.temp,
      gpuPowerW: g.power,
      laneErrorRates: this.linkUp ? rates : rates.map(() => 0),
      laneBer: rates.map((r) => (this.linkUp ? r / laneBitRate(this.spec.cable.family) : 0)),
      fec: this.fecStats(this.linkUp ? rates : rates.map(() => 0)),
      port: c.port,
      rails: c.rails,
      bootId: b.bootId,
      uptimeS: b.uptimeS,
      rebooting: this.rebooting(node, tS),
    };
  }
}
