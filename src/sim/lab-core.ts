// Shared state of one simulated lab: the model, the clock, each node's topology, its process table and the
// ib_write_bw servers listening. The SimRunner of each node reads and changes this.
import type { Clock } from '../domain/clock.js';
import type { Rail } from '../domain/node.js';
import type { Fault } from './faults.js';
import { HOTPLUG_THROTTLE_GBPS, LabModel } from './model.js';
import { railCapGbps, type ScenarioNode, type ScenarioSpec } from './scenario.js';
import type { SimProcess } from './sim-process.js';
import type { Session } from './model.js';

// The two QSFP cages of a Spark, each seen through both PCIe functions, with the names DGX OS gives them; the
// cable is in cage 1 unless a scenario node names its cage, and a scenario node may rename the interfaces.
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
export const DEFAULT_CABLED_CAGE = 1;

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
  model: LabModel; // replaced by plug(): a new cable model over the same nodes
  readonly t0: number;
  readonly procs: SimProcess[] = [];
  readonly listeners: Listener[] = [];
  private nextPid: number;
  readonly garbageFired = new Set<Fault>();

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

  // The cage the cable is in on a node (the triangle wiring puts it in cage 0 at one end).
  cageOf(node: string): number {
    return this.nodeSpec(node).cage ?? DEFAULT_CABLED_CAGE;
  }

  // The node's four PCIe functions, cage 0 first, domain 0000 first within a cage. A Spark with no cable in
  // removes the CX-7 PCI functions (udev mtk-hotplug handler, docs/formats.md §0): none while the cable is out.
  functions(node: string): readonly SimRail[] {
    if (!this.model.plugged) return [];
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

  // Which node and rail own an IPv4 address.
  ownerOf(ip: string): { node: string; rail: number } | null {
    for (const n of this.spec.nodes) {
      const rail = n.railIps.indexOf(ip);
      if (rail >= 0) return { node: n.name, rail };
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
      if (seen && seen.t === t && seen.model === this.model && seen.events === this.model.events.length && seen.procs === this.procs.length) return;
      for (const p of this.procs) p.check();
      this.reaped = { t, model: this.model, events: this.model.events.length, procs: this.procs.length };
    } finally {
      this.reaping = false;
    }
  }
  private reaping = false;
  private reaped: { t: number; model: LabModel; events: number; procs: number } | null = null;

  running(node: string): SimProcess[] {
    this.reap();
    return this.procs.filter((p) => p.node === node && !p.finished);
  }

  // Pull the cable out of the cage (a batch operator swapping cables).
  unplug(): void {
    this.model.unplug(this.now());
  }

  // Put another scenario's cable in: same nodes and addresses, that scenario's cable, link and load figures.
  plug(cable: ScenarioSpec): void {
    const t = this.now();
    if (this.model.plugged) this.model.unplug(t);
    this.spec = { ...cable, nodes: this.spec.nodes };
    this.model = new LabModel(this.spec, this.seed, this.faults, { from: this.model, atS: t });
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
