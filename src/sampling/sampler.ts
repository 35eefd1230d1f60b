// The persistent sampler: one long-lived shell per node, every node asked at the same moment, one round
// trip per node per tick (a tick script). Its ticks are scheduled by schedule.ts (the run's loop, the benchmark).
import { within, type Clock } from '../domain/clock.js';
import { UsageError } from '../domain/errors.js';
import type { NodeSample } from '../domain/sample.js';
import { buildTickScript, splitTickScriptOutput } from '../transport/tick-script.js';
import { cmd } from '../transport/commands.js';
import type { CommandRunner, ShellSession } from '../transport/types.js';
import { parseNodeTime } from '../probes/node-time.js';
import { assembleSample, sampleSetItems, validateSampleSet, type SampleSetConfig } from './sample-set.js';
import { estimateOffset, type OffsetRound, type TickNode } from './stats.js';

// A node as the sampler sees it: where to run and what to read.
export interface SamplerNode {
  name: string;
  runner: CommandRunner;
  sampleSet: SampleSetConfig;
}

// Injected dependencies and bounds; the clock drives every controller timestamp.
export interface SamplerOptions {
  nodes: SamplerNode[];
  clock: Clock;
  // Bound on one node's round trip; past it the shell is dropped and reopened on the next tick.
  roundTripTimeoutMs?: number;
  // How long a tick waits for a node's shell to (re)open, default 1000 ms: a node that is reconnecting is missing
  // from that tick while its opening goes on in the background, so the other nodes are still sampled on time.
  shellWaitMs?: number;
  // `date +%s%N` round trips per node at open() to estimate its clock offset (for the skew figure).
  calibrationRounds?: number;
}

// One node's answer to one tick: a sample (possibly with item errors), or null with the transport error.
export interface NodeTick {
  node: string;
  sample: NodeSample | null;
  raw: Record<string, string>;
  error?: string;
}

// A node's answer as the figures count it.
export function tickNode(n: NodeTick): TickNode {
  return {
    node: n.node,
    tMs: n.sample && Number.isFinite(n.sample.tMs) ? n.sample.tMs : null,
    missing: n.sample === null,
    itemErrors: n.sample?.errors.length ?? 0,
  };
}

// One tick of the sampler: the controller's start and end times and every node's answer.
export interface SampledTick {
  tick: number;
  startMs: number;
  endMs: number;
  nodes: NodeTick[];
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

// Samples a set of nodes; open() once, tick() on a schedule, close(). It never closes the runners (their owner does).
export class Sampler {
  private readonly clock: Clock;
  private readonly shells = new Map<string, ShellSession>();
  private readonly opening = new Map<string, Promise<ShellSession>>();
  private closed = false;
  private readonly offsets = new Map<string, number>();
  private nextTick = 0;

  constructor(private readonly opts: SamplerOptions) {
    if (opts.nodes.length === 0) throw new UsageError('sampler: no nodes to sample');
    const names = opts.nodes.map((n) => n.name);
    if (new Set(names).size !== names.length) throw new UsageError(`sampler: duplicate node name in ${names.join(', ')}`);
    opts.nodes.forEach((n) => validateSampleSet(n.sampleSet));
    this.clock = opts.clock;
  }

  // Open every node's shell and estimate its clock offset. A node that cannot be reached now is retried each tick.
  async open(): Promise<{ node: string; error: string }[]> {
    const failures = await Promise.all(
      this.opts.nodes.map(async (n) => {
        try {
          const shell = await this.shellFor(n);
          await this.calibrate(n.name, shell);
          return null;
        } catch (e) {
          this.dropShell(n.name);
          return { node: n.name, error: message(e) };
        }
      }),
    );
    return failures.filter((f): f is { node: string; error: string } => f !== null);
  }

  // Re-estimate every reachable node's clock offset (clocks drift: unsynchronised ones by tens of ppm).
  async recalibrate(): Promise<void> {
    await Promise.all(
      this.opts.nodes.map(async (n) => {
        const shell = this.shells.get(n.name);
        if (shell) await this.calibrate(n.name, shell).catch(() => this.dropShell(n.name));
      }),
    );
  }

  private async calibrate(node: string, shell: ShellSession): Promise<void> {
    const rounds: OffsetRound[] = [];
    for (let i = 0; i < (this.opts.calibrationRounds ?? 5); i++) {
      const sentMs = this.clock.now();
      const r = await shell.run(cmd.nodeTime(), { timeoutMs: this.opts.roundTripTimeoutMs ?? 10_000 });
      const receivedMs = this.clock.now();
      if (r.exitCode !== 0) continue;
      try {
        rounds.push({ sentMs, nodeMs: parseNodeTime(r.stdout), receivedMs });
      } catch {
        // An unreadable clock leaves the offset to the first tick (see tick()).
      }
    }
    const est = estimateOffset(rounds);
    if (est) this.offsets.set(node, est.offsetMs);
  }

  // The node's shell; one opening at a time per node, waited for at most waitMs (it goes on after that).
  private async shellFor(n: SamplerNode, waitMs = Infinity): Promise<ShellSession> {
    const open = this.shells.get(n.name);
    if (open) return open;
    let opening = this.opening.get(n.name);
    if (!opening) {
      opening = n.runner.openShell().then(
        (shell) => {
          this.opening.delete(n.name);
          if (this.closed) void shell.close().catch(() => undefined);
          else this.shells.set(n.name, shell);
          return shell;
        },
        (e: unknown) => {
          this.opening.delete(n.name);
          throw e;
        },
      );
      opening.catch(() => undefined); // a failure nobody waits for any more is seen by the next tick's opening
      this.opening.set(n.name, opening);
    }
    if (!Number.isFinite(waitMs)) return opening;
    return within(this.clock, waitMs, opening, () => new Error(`${n.name}: shell not open after ${waitMs} ms (reconnecting); missing from this tick`));
  }

  private dropShell(node: string): void {
    const shell = this.shells.get(node);
    this.shells.delete(node);
    shell?.close().catch(() => undefined);
  }

  private async sampleNode(n: SamplerNode, tick: number): Promise<NodeTick> {
    const items = sampleSetItems(n.sampleSet, tick);
    try {
      const shell = await this.shellFor(n, this.opts.shellWaitMs ?? 1000);
      const res = await shell.run(buildTickScript(items), { timeoutMs: this.opts.roundTripTimeoutMs ?? 10_000 });
      const controllerMs = this.clock.now();
      if (res.timedOut || res.exitCode === null) {
        this.dropShell(n.name);
        return { node: n.name, sample: null, raw: {}, error: `${n.name}: sample round trip ${res.timedOut ? 'timed out' : `killed (${res.signal})`}` };
      }
      const { sample, raw } = assembleSample({
        node: n.name,
        tick,
        controllerMs,
        items,
        outputs: splitTickScriptOutput(res.stdout),
      });
      if (res.stderr.trim() !== '') sample.errors.push(`shell stderr: ${res.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      return { node: n.name, sample, raw };
    } catch (e) {
      this.dropShell(n.name);
      return { node: n.name, sample: null, raw: {}, error: message(e) };
    }
  }

  // One tick now: all nodes at once. `tick` numbers it explicitly (it selects the every-N items); default: next.
  async tick(tick?: number): Promise<SampledTick> {
    const k = tick ?? this.nextTick;
    this.nextTick = k + 1;
    const startMs = this.clock.now();
    const nodes = await Promise.all(this.opts.nodes.map((n) => this.sampleNode(n, k)));
    const endMs = this.clock.now();
    for (const n of nodes) {
      // No calibration (node unreachable at open): take this first answer's midpoint instead.
      if (n.sample && !this.offsets.has(n.node) && Number.isFinite(n.sample.tMs)) {
        this.offsets.set(n.node, n.sample.tMs - (startMs + n.sample.controllerMs) / 2);
      }
    }
    return { tick: k, startMs, endMs, nodes };
  }

  // Each node's clock minus the controller's as estimated at open() or recalibrate() (NTP's method: node time −
  // midpoint of the `date` round trip with the shortest RTT); a node unreachable then has its first answer's.
  offsetsMs(): ReadonlyMap<string, number> {
    return this.offsets;
  }

  // Close the shells (not the runners).
  async close(): Promise<void> {
    this.closed = true; // a shell still opening is closed as soon as it opens
    const shells = [...this.shells.values()];
    this.shells.clear();
    await Promise.allSettled(shells.map((s) => s.close()));
  }
}

// The sampler seen as the run's tick source: tick(n) → every node's answer to tick n, with the clock offsets.
export function asTickSource(sampler: Sampler): { tick(n: number): Promise<NodeTick[]>; offsetsMs(): ReadonlyMap<string, number>; close(): Promise<void> } {
  return { tick: async (n) => (await sampler.tick(n)).nodes, offsetsMs: () => sampler.offsetsMs(), close: () => sampler.close() };
}
