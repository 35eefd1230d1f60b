// Measures a sampling strategy on real transports (for the benchmark): the persistent sampler (one tick-script round
// trip per node per tick) against the naive way (a fresh runner.run() per command), same items, same statistics.
import { systemClock, type Clock } from '../src/domain/clock.js';
import { cmd } from '../src/transport/commands.js';
import type { ScriptItemOutput } from '../src/transport/tick-script.js';
import { parseNodeTime } from '../src/probes/node-time.js';
import { assembleSample, sampleSetItems, validateSampleSet } from '../src/sampling/sample-set.js';
import { Sampler, tickNode, type NodeTick, type SamplerNode } from '../src/sampling/sampler.js';
import { runOnSchedule, type ScheduleSummary } from '../src/sampling/schedule.js';
import { estimateOffset, TickFigures, type OffsetRound } from '../src/sampling/stats.js';

// Persistent = one tick script per node per tick over a long-lived shell; naive = one fresh run() per command.
export type SamplingMode = 'persistent' | 'naive';

// What to measure: a strategy, the nodes, how many ticks and at which rate.
export interface MeasureOptions {
  mode: SamplingMode;
  nodes: SamplerNode[];
  ticks: number;
  // 0 = back to back (the highest rate the strategy sustains); > 0 = fixed rate, late ticks skipping deadlines as in a run.
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
  rawSkewP99Ms: number | null; // the same without the offsets
  missedDeadlines: number; // fixed rate only: deadlines skipped by ticks that ran past them
  tickDurationP50Ms: number | null;
  tickDurationP99Ms: number | null;
  cpuPerTickMs: number;
  missingSamples: number;
  itemErrors: number;
}

// The naive strategy: every item a separate command over a fresh channel, items one after another per node.
async function naiveTick(nodes: SamplerNode[], k: number, clock: Clock): Promise<NodeTick[]> {
  return Promise.all(
    nodes.map(async (n): Promise<NodeTick> => {
      const items = sampleSetItems(n.sampleSet, k, { oneShot: true });
      const outputs: ScriptItemOutput[] = [];
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

// Run `ticks` ticks of one strategy on the run's schedule (schedule.ts) and report rate, schedule, skew and controller CPU
// with the run's figures (stats.ts).
export async function measureSampling(o: MeasureOptions): Promise<MeasureResult> {
  const clock = o.clock ?? systemClock;
  const cpuUsage = o.cpuUsage ?? process.cpuUsage;
  o.nodes.forEach((n) => validateSampleSet(n.sampleSet));
  let offsets: ReadonlyMap<string, number>;
  let sampler: Sampler | null = null;
  if (o.mode === 'persistent') {
    sampler = new Sampler({
      nodes: o.nodes,
      clock,
      ...(o.calibrationRounds !== undefined ? { calibrationRounds: o.calibrationRounds } : {}),
    });
    await sampler.open();
    offsets = sampler.offsetsMs();
  } else {
    offsets = await naiveOffsets(o.nodes, o.calibrationRounds ?? 5, clock);
  }

  const figures = new TickFigures();
  const cpu0 = cpuUsage();
  const t0 = clock.now();
  let schedule: ScheduleSummary;
  try {
    schedule = await runOnSchedule({ clock, intervalMs: o.intervalMs, maxTicks: o.ticks }, async (k) => {
      const startMs = clock.now();
      const nodes = sampler ? (await sampler.tick(k)).nodes : await naiveTick(o.nodes, k, clock);
      figures.add({ startMs, endMs: clock.now(), nodes: nodes.map(tickNode) }, offsets);
    });
  } finally {
    await sampler?.close();
  }
  const elapsedMs = clock.now() - t0;
  const cpu1 = cpuUsage();
  const f = figures.summary();
  return {
    mode: o.mode,
    ticks: f.ticks,
    elapsedMs,
    ticksPerS: elapsedMs > 0 ? (f.ticks * 1000) / elapsedMs : 0,
    intervalP50Ms: f.intervalP50Ms,
    intervalP99Ms: f.intervalP99Ms,
    skewP99Ms: f.skewP99Ms,
    rawSkewP99Ms: f.rawSkewP99Ms,
    tickDurationP50Ms: f.tickDurationP50Ms,
    tickDurationP99Ms: f.tickDurationP99Ms,
    missedDeadlines: schedule.missedDeadlines,
    cpuPerTickMs: f.ticks ? (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / 1000 / f.ticks : 0,
    missingSamples: f.missingSamples,
    itemErrors: f.itemErrors,
  };
}
