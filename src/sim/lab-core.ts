// Shared state of one simulated lab: the model, the clock, each node's topology, its process table and the
// ib_write_bw servers listening. The SimRunner of each node reads and changes this.
import type { Clock } from '../domain/clock.js';
import type { Rail } from '../domain/node.js';
import type { Fault } from './faults.js';
import { DEFAULT_CABLED_CAGE, HOTPLUG_THROTTLE_GBPS, LabModel, type LinkSim } from './model.js';
import {
  isSwitchPort,
  railCapGbps,
  secondCageIps,
  type CableEndSpec,
  type ClusterCable,
  type ScenarioNode,
  type SwitchPortSpec,
  type ScenarioSpec,
} from './scenario.js';
import type { SimProcess } from './sim-process.js';
import type { Session } from './model.js';

// The two QSFP cages of a Spark, each seen through both PCIe functions, with the names DGX OS gives them; the
// cable is in cage 1 unless a scenario node names its cage (a second cable in the other), and a scenario node may
// rename the interfaces.
const SPARK_CAGES: { index: number; rails: [Rail, Rail] }[] = [
  {
    index: 0,
    rails: [
      { netdev: 'enp1s0f0np0', rdmaDevice: 'rocep1s0f0' },
      { netdev: 'enP2p1s0f0np0', rdmaDevice: 'roceP2p1s0f0' },
    ],
  },
  {
    index: 1,
    rails: [
      { netdev: 'enp1s0f1np1', rdmaDevice: 'rocep1s0f1' },
      { netdev: 'enP2p1s0f1np1', rdmaDevice: 'roceP2p1s0f1' },
    ],
  },
];
export { DEFAULT_CABLED_CAGE };

// One PCIe function of a simulated node: its names and its place (cage = physical port, rail = PCIe link).
export interface SimRail extends Rail {
  cage: number;
  rail: number;
  pci: string; // 0000:01:00.<cage> for rail 0, 0002:01:00.<cage> for rail 1, as on a Spark
  ifindex: number;
}

// The PCI address of one function: the cage is the PCI function, the rail the PCIe domain (docs/formats.md §0).
function pciAddress(cage: number, rail: number): string {
  return `${rail === 0 ? '0000' : '0002'}:01:00.${cage}`;
}

// An ib_write_bw server waiting on a node.
export interface Listener {
  node: string;
  port: number;
  rail: number;
  device: string;
  session: Session | null;
  closed: boolean;
  readyS: number; // lab time it listens (prints its banner): opening the device takes a moment after the start
}

export class LabCore {
  readonly model: LabModel;
  readonly t0: number;
  readonly procs: SimProcess[] = [];
  readonly listeners: Listener[] = [];
  private nextPid: number;
  readonly garbageFired = new Set<Fault>();
  // Seconds a node told to reboot stays down, whatever cable's scenario is plugged (createLab's rebootS).
  rebootS: number | undefined;

  constructor(
    public spec: ScenarioSpec, // the cable part changes on plug()
    readonly seed: number,
    readonly faults: Fault[],
    readonly clock: Clock,
  ) {
    this.t0 = clock.now();
    this.model = new LabModel(spec, seed, faults);
    this.nextPid = 4000 + (seed % 1000);
  }

  // Seconds since the lab was created.
  now(): number {
    return (this.clock.now() - this.t0) / 1000;
  }

  pid(): number {
    return this.nextPid++;
  }

  nodeSpec(node: string): ScenarioNode {
    const n = this.spec.nodes.find((x) => x.name === node);
    if (!n) throw new Error(`no simulated node ${node}`);
    return n;
  }

  // The cage the (first) cable is in on a node (the triangle wiring puts it in cage 0 at one end).
  cageOf(node: string): number {
    return this.nodeSpec(node).cage ?? DEFAULT_CABLED_CAGE;
  }

  // The cable in a cage of a node, or null for a cage the lab puts no cable in (plugged or pulled: see link.plugged).
  cableAt(node: string, cage: number): LinkSim | null {
    return this.model.linkAt(node, cage) ?? null;
  }

  // Whether the link of the cable in a node's cage is up now (false for a cage without a cable).
  linkUpAt(node: string, cage: number): boolean {
    const link = this.cableAt(node, cage);
    return link !== null && this.model.isLinkUp(this.now(), link);
  }

  // A node's two rail addresses in a cage (the first cable's from the node, the second cable's from it), or null for a
  // cage without a cable.
  railIpsAt(node: string, cage: number): [string, string] | null {
    const link = this.cableAt(node, cage);
    if (!link) return null;
    const cluster = this.spec.cables?.[link.index];
    if (cluster) return cluster.ends.find((e): e is CableEndSpec => !isSwitchPort(e) && e.node === node && e.cage === cage)!.railIps;
    if (link.index === 0) return this.nodeSpec(node).railIps;
    return this.spec.secondCable!.railIps[this.spec.nodes.findIndex((n) => n.name === node)]!;
  }

  // The end of a cluster's cable at a node's cage, or null (no cluster, or no cable there).
  private clusterEnd(node: string, cage: number): { cable: ClusterCable; end: number } | null {
    const link = this.cableAt(node, cage);
    const cable = link ? this.spec.cables?.[link.index] : undefined;
    if (!cable) return null;
    return { cable, end: cable.ends.findIndex((e) => !isSwitchPort(e) && e.node === node && e.cage === cage) };
  }

  // The MTU of a node's netdevs in a cage: its cable end's, else the node's, else 1500.
  mtuAt(node: string, cage: number): number {
    const at = this.clusterEnd(node, cage);
    const end = at ? at.cable.ends[at.end] : undefined;
    return (end && !isSwitchPort(end) ? end.mtu : undefined) ?? this.nodeSpec(node).mtu ?? 1500;
  }

  // What the cable in a node's cage reaches at its other end: a node's cage, a switch port, or null (no cable).
  farEnd(node: string, cage: number): { node: string; cage: number } | SwitchPortSpec | null {
    const at = this.clusterEnd(node, cage);
    if (at) {
      const far = at.cable.ends[1 - at.end]!;
      return isSwitchPort(far) ? far : { node: far.node, cage: far.cage };
    }
    const link = this.cableAt(node, cage);
    if (!link) return null;
    const other = this.spec.nodes.find((n) => n.name !== node)!;
    return { node: other.name, cage: link.cages[this.spec.nodes.indexOf(other)]! };
  }

  // The node's four PCIe functions, cage 0 first, domain 0000 first within a cage. A Spark with no cable in
  // removes the CX-7 PCI functions (udev mtk-hotplug handler, docs/formats.md §0): none while no cable is in.
  functions(node: string): readonly SimRail[] {
    if (!this.model.anyPlugged) return [];
    // Asked on every ethtool, ip and sysfs read: built once per node (the names are the scenario node's, fixed for the lab).
    let fns = this.functionsOf.get(node);
    if (!fns) {
      const names = this.nodeSpec(node).interfaces ?? SPARK_CAGES.map((c) => c.rails);
      // Interface indices: lo and the management port first, then the CX-7 functions, domain 0002 before 0000.
      fns = names.flatMap((rails, cage) =>
        rails.map((r, rail) => Object.freeze({ ...r, cage, rail, pci: pciAddress(cage, rail), ifindex: (rail === 1 ? 3 : 5) + cage })),
      );
      this.functionsOf.set(node, fns);
    }
    return fns;
  }
  private readonly functionsOf = new Map<string, readonly SimRail[]>();

  // Where a netdev or RDMA device of a node sits, or null when the node has no such device (now).
  locate(node: string, name: string): Readonly<SimRail> | null {
    return this.functions(node).find((f) => f.netdev === name || f.rdmaDevice === name) ?? null;
  }

  // The cap of one rail of a node now (Gb/s), or null at full speed: the scenario's throttled NIC, or the hot-plug trap.
  railCap(node: string, rail: number): number | null {
    const caps = [railCapGbps(this.nodeSpec(node), rail), this.model.hotplugThrottled(node, this.now()) ? HOTPLUG_THROTTLE_GBPS : null].filter(
      (c): c is number => c !== null,
    );
    return caps.length ? Math.min(...caps) : null;
  }

  // Which node, cage and rail own an IPv4 address.
  ownerOf(ip: string): { node: string; rail: number; cage: number } | null {
    if (this.spec.cables) {
      for (const c of this.spec.cables)
        for (const e of c.ends) if (!isSwitchPort(e) && e.railIps.includes(ip)) return { node: e.node, rail: e.railIps.indexOf(ip), cage: e.cage };
      return null;
    }
    for (const [i, n] of this.spec.nodes.entries()) {
      const rail = n.railIps.indexOf(ip);
      if (rail >= 0) return { node: n.name, rail, cage: this.cageOf(n.name) };
      const second = this.spec.secondCable;
      const other = second?.railIps[i]?.indexOf(ip) ?? -1;
      if (second && other >= 0) return { node: n.name, rail: other, cage: second.cage };
    }
    return null;
  }

  // Advance the model and notice processes that ended by themselves. A process ends by itself only as lab time passes or
  // as the model's timeline moves (a stop, a link drop, a reboot, a fault: each an event), so asking again at the same
  // instant with the same timeline finds nothing new (both nodes' sampling ticks come at one instant).
  reap(): void {
    if (this.reaping) return;
    this.reaping = true;
    try {
      const t = this.now();
      this.model.advance(t);
      const seen = this.reaped;
      if (seen && seen.t === t && seen.events === this.model.events.length && seen.procs === this.procs.length) return;
      for (const p of this.procs) p.check();
      this.reaped = { t, events: this.model.events.length, procs: this.procs.length };
    } finally {
      this.reaping = false;
    }
  }
  private reaping = false;
  private reaped: { t: number; events: number; procs: number } | null = null;

  running(node: string): SimProcess[] {
    this.reap();
    return this.procs.filter((p) => p.node === node && !p.finished);
  }

  // Pull the cable out of a cage, or every cable (a batch operator swapping cables).
  unplug(cage?: number): void {
    this.model.unplug(this.now(), cage);
  }

  // Put another scenario's cable in (into the cage of the second cable when named, else the first cable's): same nodes
  // and addresses, that scenario's cable, link and load figures (the first cable's scenario also brings its bench's).
  plug(cable: ScenarioSpec, cage?: number): void {
    const link = cage === undefined ? this.model.links[0]! : this.model.links.find((l) => l.cages.includes(cage));
    const second = (s: ScenarioSpec): ScenarioSpec['secondCable'] => ({
      scenario: s.name,
      cage: cage as 0 | 1,
      railIps: this.spec.secondCable?.railIps ?? secondCageIps(this.spec.nodes),
      expected: s.expected,
      spec: s,
    });
    if (!link || link.index === 0) {
      // The first cable's scenario brings its bench; a cable in a cage that had none becomes the lab's second cable.
      const secondCable = link ? this.spec.secondCable : second(cable);
      const rebootS = this.rebootS !== undefined ? { rebootS: this.rebootS } : {};
      this.spec = { ...(link ? cable : this.spec), nodes: this.spec.nodes, ...(secondCable ? { secondCable } : {}), ...rebootS };
      this.model.spec = this.spec;
    } else this.spec = { ...this.spec, secondCable: second(cable) };
    this.model.plug(cable, this.now(), cage);
  }

  // Why a node cannot be reached right now (ssh drop or reboot), or null.
  unreachable(node: string): string | null {
    const t = this.now();
    for (const f of this.faults) {
      if (f.kind === 'ssh-drop' && (f.node === null || f.node === node) && t >= f.atS && t < f.atS + f.durationS) {
        return 'connection lost: read ECONNRESET (simulated ssh drop)';
      }
    }
    if (this.model.rebooting(node, t)) return 'connect ECONNREFUSED (simulated node rebooting)';
    return null;
  }
}
