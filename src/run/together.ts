// Two cables between the same two nodes qualified at once (`run --port both`, src/run/both-cages.ts): one run per
// cable, each with its own journal, record and certificate, and what the two share here. A Spark's ~200 Gb/s goes over
// the same two PCIe rails whichever cage a cable is in, so a second cable adds no bandwidth; each link's wire still
// runs at its full line rate whatever the payload, so lane errors are counted as with one cable. The runs therefore
// benchmark one cable at a time (the benchmark gate), start each soak together (each cable then carries about half the
// nodes' traffic, and the NIC the same total traffic and heat as with one cable), and soak under one GPU load per node.
import type { TogetherRecord } from '../domain/record.js';
import type { SharingCable, SoakLoadEvidence } from '../grading/soak-evidence.js';
import type { RemoteProcess } from '../transport/types.js';
import type { ClusterCheckLine } from '../domain/cluster-check.js';
import type { NodeState, RunContext } from './context.js';
import type { StaleFound } from './node-taking.js';
import { runClusterCheck, type ClusterPlan } from './steps/cluster-check.js';

// What one of the two runs shares with the other.
export interface Together {
  // This run's cage, and the other cable's cage and run: the journal's run-start says so (the mode a certificate states).
  readonly cage: number;
  readonly others: readonly { cage: number; runId: string; link?: string }[];
  // A cable of a cluster (run --cluster): the topology and this cable's link id, for the run-start.
  readonly cluster?: { topology: string; link: string };
  // The nodes were locked and cleaned once for both runs: the load processes of dead runs that stopped (the first run
  // journals them).
  readonly stale: readonly StaleFound[];
  // Wait until the other run has reached this soak too, or has ended; the other cable whose load will share the soak.
  soak(phase: string, serial: string | null, signal: AbortSignal): Promise<SharingCable[]>;
  // This run has stopped its load in the soak before the soak's end (an early FAIL, a setup error); whether the other
  // cable's load still runs (or ran to the soak's end).
  soakLoadStoppedEarly(phase: string): void;
  othersLoading(phase: string): boolean;
  // The GPU load of a node for a soak: started by the first run to ask (journaled in its journal), shared by both,
  // stopped when the last run lets go of it.
  gpuLoad(ctx: RunContext, node: NodeState, command: string, name: string): Promise<RemoteProcess>;
  releaseGpu(p: RemoteProcess): Promise<void>;
  // A cluster's check (run --cluster): the collective across every node, run once by the first run to ask (from its
  // first node), the same line for every run; what stopped the run that ran it, for that run only.
  clusterCheck?: (ctx: RunContext) => Promise<{ line: ClusterCheckLine; error?: unknown }>;
  // The run is ending: the other no longer waits for it.
  ended(): void;
}

interface SharedLoad {
  process: Promise<RemoteProcess>;
  holders: Set<number>;
}

// One run of a multi-cable run: its cable's cage (at its first node), its run id, and the nodes its cable joins.
export interface TogetherRun {
  cage: number;
  runId: string;
  nodes: readonly string[];
  // A cable of a cluster: its link id (node:cage--node:cage).
  link?: string;
}

// The coordination of the runs of one multi-cable run (two cables between two nodes, or every cable of a cluster):
// who has reached which soak, who has ended, the GPU loads held. Two runs share a node's NIC and PCIe rails when their
// cables meet at that node; a cable's share of a soak's traffic is set at its most crowded end.
export class TogetherRuns {
  private readonly arrived = new Map<string, Map<number, SharingCable>>();
  private readonly done = new Set<number>();
  private readonly unloaded = new Map<string, Set<number>>();
  private waiting: (() => void)[] = [];
  private readonly loads = new Map<string, SharedLoad>();
  private check: { by: number; result: Promise<{ line: ClusterCheckLine; error?: unknown }> } | null = null;
  private readonly cages = new Map<number, readonly NodeState[]>();

  // The runs, in order: each one's cage, run id and nodes; a cluster's topology and the plan of its check.
  constructor(
    private readonly runs: readonly TogetherRun[],
    private readonly topology?: string,
    private readonly checkPlan?: ClusterPlan | { topology: 'pair'; ranks: 'from-runs' },
  ) {}

  // The other runs whose cables meet run i's at a node, per node of run i's cable.
  private neighbours(i: number): number[][] {
    return this.runs[i]!.nodes.map((n) => this.runs.map((_, j) => j).filter((j) => j !== i && this.runs[j]!.nodes.includes(n)));
  }

  // What run i is given (the stale processes the taking of the nodes stopped go to the first run's journal).
  member(i: number, o: { stale: readonly StaleFound[] }): Together {
    const me = this.runs[i]!;
    return {
      cage: me.cage,
      others: this.runs.filter((_, j) => j !== i).map((r) => ({ cage: r.cage, runId: r.runId, ...(r.link ? { link: r.link } : {}) })),
      ...(this.topology && me.link ? { cluster: { topology: this.topology, link: me.link } } : {}),
      stale: i === 0 ? o.stale : [],
      soak: (phase, serial, signal) => this.soak(i, phase, serial, signal),
      soakLoadStoppedEarly: (phase) => {
        if (!this.unloaded.has(phase)) this.unloaded.set(phase, new Set());
        this.unloaded.get(phase)!.add(i);
      },
      othersLoading: (phase) =>
        [...(this.arrived.get(phase)?.keys() ?? [])].some(
          (j) => this.neighbours(i).some((at) => at.includes(j)) && !this.done.has(j) && !this.unloaded.get(phase)?.has(j),
        ),
      gpuLoad: (ctx, node, command, name) => this.gpuLoad(i, ctx, node, command, name),
      releaseGpu: (p) => this.release(i, p),
      ...(this.checkPlan ? { clusterCheck: (ctx: RunContext) => this.clusterCheck(i, ctx) } : {}),
      ended: () => {
        this.done.add(i);
        this.wakeAll();
      },
    };
  }

  private async soak(i: number, phase: string, serial: string | null, signal: AbortSignal): Promise<SharingCable[]> {
    let here = this.arrived.get(phase);
    if (!here) this.arrived.set(phase, (here = new Map()));
    here.set(i, { cage: this.runs[i]!.cage, serial, runId: this.runs[i]!.runId });
    this.wakeAll();
    const others = this.runs.map((_, j) => j).filter((j) => j !== i);
    await this.until(() => !others.some((j) => !here.has(j) && !this.done.has(j)), signal);
    // The cables sharing the most crowded node of this one's (the rate a rail gives each of its streams).
    const loaded = this.neighbours(i).map((at) => at.filter((j) => here.has(j) && !this.done.has(j)));
    const crowded = loaded.reduce((a, b) => (b.length > a.length ? b : a), []);
    return crowded.map((j) => here.get(j)!);
  }

  private async clusterCheck(i: number, ctx: RunContext): Promise<{ line: ClusterCheckLine; error?: unknown }> {
    const plan = this.checkPlan!;
    let ranks = plan.ranks;
    if (ranks === 'from-runs') {
      // Both cages of two nodes (--port both): each rank lists the devices of every cable's cage at its node, cage 0
      // first, as the cabling map of the pair lists them; known once every run still going has said its cages.
      this.cages.set(i, ctx.nodes);
      this.wakeAll();
      await this.until(() => this.runs.every((_, j) => this.cages.has(j) || this.done.has(j)), ctx.signal);
      const ends = [...this.cages.values()].flat();
      ranks = ctx.nodes.map((n) => ({
        node: n.spec.name,
        host: n.spec.host,
        devices: ends
          .filter((e) => e.spec.name === n.spec.name && e.cage)
          .sort((x, y) => x.cage!.index - y.cage!.index)
          .flatMap((e) => e.cage!.rails.map((r) => r.rdmaDevice)),
      }));
    }
    const resolved = { topology: plan.topology, ranks };
    this.check ??= { by: i, result: runClusterCheck(ctx, resolved) };
    const r = await this.check.result;
    return this.check.by === i ? r : { line: r.line };
  }

  // Wait (woken at each arrival and end) until ready() holds or the signal is aborted.
  private async until(ready: () => boolean, signal: AbortSignal): Promise<void> {
    while (!signal.aborted && !ready()) {
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener('abort', done);
          resolve();
        };
        this.waiting.push(done);
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  private wakeAll(): void {
    const w = this.waiting;
    this.waiting = [];
    for (const resolve of w) resolve();
  }

  private async gpuLoad(i: number, ctx: RunContext, node: NodeState, command: string, name: string): Promise<RemoteProcess> {
    const key = `${node.spec.name}\n${name}`;
    let load = this.loads.get(key);
    if (!load) {
      // Not the run's own process: a run that ends first (an early FAIL) leaves it to the other.
      const process = ctx.startProcess(node, command, name, { own: false });
      this.loads.set(key, (load = { process, holders: new Set() }));
      process.catch(() => this.loads.delete(key));
    }
    load.holders.add(i);
    return load.process;
  }

  private async release(i: number, p: RemoteProcess): Promise<void> {
    for (const [key, load] of this.loads) {
      if ((await load.process.catch(() => null)) !== p) continue;
      load.holders.delete(i);
      if (load.holders.size > 0) return;
      this.loads.delete(key);
      await p.stop();
      return;
    }
  }

  // Stop every GPU load still held (the runs have ended, whichever way).
  async close(): Promise<void> {
    const held = [...this.loads.values()];
    this.loads.clear();
    await Promise.all(held.map(async (l) => (await l.process.catch(() => null))?.stop().catch(() => undefined)));
  }
}

// What a journal says of a cable qualified beside another (its run-start's `together`, checked by journal-shape.ts),
// with the other cable's serial from the first soak that shared its load; nothing for a run of one cable.
export function togetherOf(start: Record<string, unknown>, soaks: ReadonlyMap<string, SoakLoadEvidence>): { together?: TogetherRecord } {
  const t = start['together'] as { cage: number; with: { cage: number; runId: string; link?: string }[]; topology?: string; link?: string } | undefined;
  if (!t) return {};
  const sharing = [...soaks.values()].flatMap((s) => s.sharedWith);
  // A cluster's cables are told apart by run (their cages repeat); two cables of one pair of nodes by cage too.
  const serialOf = (o: { cage: number; runId: string }) =>
    sharing.find((x) => x.runId === o.runId && x.serial !== null)?.serial ??
    (t.topology ? null : (sharing.find((x) => x.cage === o.cage && x.serial !== null)?.serial ?? null));
  return {
    together: {
      cage: t.cage,
      with: t.with.map((o) => ({ cage: o.cage, runId: o.runId, serial: serialOf(o), ...(o.link ? { link: o.link } : {}) })),
      ...(t.topology ? { topology: t.topology } : {}),
      ...(t.link ? { link: t.link } : {}),
    },
  };
}
