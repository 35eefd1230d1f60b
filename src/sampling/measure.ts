// Measures a sampling strategy on real transports (for the benchmark): the persistent sampler (one batch round
// trip per node per tick) against the naive way (a fresh runner.run() per command), same items, same statistics.
import { systemClock, type Clock } from '../domain/clock.js';
import { cmd } from '../transport/commands.js';
import type { BatchOutput } from '../transport/batch.js';
import { assembleSample, parseNodeTime, sampleSetItems, validateSampleSet } from './sample-set.js';
import { Sampler, type NodeTick, type SamplerNode } from './sampler.js';
import { estimateOffset, intervalsOf, percentile, tickSkew, type OffsetRound, type TickLogNode } from './stats.js';

// Persistent = one batch per node per tick over a long-lived shell; naive = one fresh run() per command.
export type SamplingMode = 'persistent' | 'naive';

// What to measure: a strategy, the nodes, how many ticks and at which rate.
export interface MeasureOptions {
  mode: SamplingMode;
  nodes: SamplerNode[];
  ticks: number;
  // 0 = back to back (the highest rate the strategy sustains); > 0 = fixed rate.
  intervalMs: number;
  clock?: Clock;
  calibrationRounds?: number;
  cpuUsage?: () => { user: number; system: number };
}

// The figures a benchmark compares between strategies (controller clock, milliseconds).
export interface MeasureResult {
  mode: SamplingMode;
  ticks: number;
  elapsedMs: number;
  ticksPerS: number;
  intervalP50Ms: number | null;
  intervalP99Ms: number | null;
  // Spread of offset-corrected node times within a tick: for the naive way, of the first item's `date`.
  skewP99Ms: number | null;
  tickDurationP50Ms: number | null;
  tickDurationP99Ms: number | null;
  cpuPerTickMs: number;
  missingSamples: number;
  itemErrors: number;
}

interface Tick {
  startMs: number;
  endMs: number;
  nodes: NodeTick[];
}

// The naive strategy: every item a separate command over a fresh channel, items one after another per node.
async function naiveTick(nodes: SamplerNode[], k: number, clock: Clock): Promise<NodeTick[]> {
  return Promise.all(
    nodes.map(async (n): Promise<NodeTick> => {
      const items = sampleSetItems(n.sampleSet, k, { oneShot: true });
      const outputs: BatchOutput[] = [];
      try {
        for (const it of items) {
          const r = await n.runner.run(it.command);
          outputs.push({ id: it.id, stdout: r.stdout + r.stderr, exitCode: r.exitCode ?? -1 });
        }
      } catch (e) {
        return { node: n.name, sample: null, raw: {}, error: e instanceof Error ? e.message : String(e) };
      }
      return { node: n.name, ...assembleSample({ node: n.name, tick: k, controllerMs: clock.now(), items, outputs }) };
    }),
  );
}

async function naiveOffsets(nodes: SamplerNode[], rounds: number, clock: Clock): Promise<Map<string, number>> {
  const offsets = new Map<string, number>();
  await Promise.all(
    nodes.map(async (n) => {
      const rs: OffsetRound[] = [];
      for (let i = 0; i < rounds; i++) {
        const sentMs = clock.now();
        const r = await n.runner.run(cmd.nodeTime());
        const receivedMs = clock.now();
        try {
          rs.push({ sentMs, nodeMs: parseNodeTime(r.stdout), receivedMs });
        } catch {
          // left out of the estimate
        }
      }
      const est = estimateOffset(rs);
      if (est) offsets.set(n.name, est.offsetMs);
    }),
  );
  return offsets;
}

// Run `ticks` ticks of one strategy and report rate, schedule, skew and controller CPU.
export async function measureSampling(o: MeasureOptions): Promise<MeasureResult> {
  const clock = o.clock ?? systemClock;
  const cpuUsage = o.cpuUsage ?? process.cpuUsage;
  o.nodes.forEach((n) => validateSampleSet(n.sampleSet));
  const ticks: Tick[] = [];
  let offsets: ReadonlyMap<string, number>;
  let sampler: Sampler | null = null;
  if (o.mode === 'persistent') {
    sampler = new Sampler({
      nodes: o.nodes,
      clock,
      ...(o.calibrationRounds !== undefined ? { calibrationRounds: o.calibrationRounds } : {}),
    });
    await sampler.open();
    offsets = new Map(Object.entries(sampler.stats().offsetsMs));
  } else {
    offsets = await naiveOffsets(o.nodes, o.calibrationRounds ?? 5, clock);
  }

  const cpu0 = cpuUsage();
  const t0 = clock.now();
  try {
    for (let k = 0; k < o.ticks; k++) {
      if (o.intervalMs > 0) {
        // Fixed rate: wait for deadline k; a late tick starts at once (the bench reports it as interval spread).
        const wait = t0 + k * o.intervalMs - clock.now();
        if (wait > 0) await clock.sleep(wait);
      }
      const startMs = clock.now();
      const nodes = sampler ? (await sampler.tick(k)).nodes : await naiveTick(o.nodes, k, clock);
      ticks.push({ startMs, endMs: clock.now(), nodes });
    }
  } finally {
    await sampler?.close();
  }
  const elapsedMs = clock.now() - t0;
  const cpu1 = cpuUsage();

  const skews: number[] = [];
  for (const t of ticks) {
    const nodes: TickLogNode[] = t.nodes.map((n) => ({
      node: n.node,
      tMs: n.sample && Number.isFinite(n.sample.tMs) ? n.sample.tMs : null,
      missing: n.sample ? null : (n.error ?? 'no sample'),
    }));
    const s = tickSkew(nodes, offsets);
    if (s !== null) skews.push(s);
  }
  const intervals = intervalsOf(ticks.map((t) => t.startMs));
  const durations = ticks.map((t) => t.endMs - t.startMs);
  const all = ticks.flatMap((t) => t.nodes);
  return {
    mode: o.mode,
    ticks: ticks.length,
    elapsedMs,
    ticksPerS: elapsedMs > 0 ? (ticks.length * 1000) / elapsedMs : 0,
    intervalP50Ms: percentile(intervals, 0.5),
    intervalP99Ms: percentile(intervals, 0.99),
    skewP99Ms: percentile(skews, 0.99),
    tickDurationP50Ms: percentile(durations, 0.5),
    tickDurationP99Ms: percentile(durations, 0.99),
    cpuPerTickMs: ticks.length ? (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / 1000 / ticks.length : 0,
    missingSamples: all.filter((n) => n.sample === null).length,
    itemErrors: all.reduce((s, n) => s + (n.sample?.errors.length ?? 0), 0),
  };
}
