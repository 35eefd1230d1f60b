// Section 1: the persistent sampler against the naive way (a fresh SSH exec per command per node), both over
// SshRunner to two real OpenSSH sshd "nodes" on loopback (see ssh-nodes.ts for the nodes and the rc chosen).
import { runSampleSet } from '../src/run/tick-source.js';
import { execFileSync } from 'node:child_process';
import { measureSampling, type MeasureResult, type SamplingMode } from './sampler-strategies.js';
import type { SampleSetConfig } from '../src/sampling/sample-set.js';
import { RAILS, rcStartupMs, simulatedToolOutputs, startBenchNode, type BenchNode } from './ssh-nodes.js';
import { summarizeFields, type Summary } from './stats.js';

// The sample set a real run reads at 20 Hz (src/run/tick-source.ts, periods in seconds): both rails' *_phy counters
// every tick, the FEC block counters every 20th tick (1 s), NIC/GPU gauges every 100th (5 s), link every 200th (10 s).
export const BENCH_INTERVAL_S = 0.05;
export const BENCH_SAMPLE_SET: SampleSetConfig = runSampleSet(RAILS, BENCH_INTERVAL_S);
// The heavier tick of the default 1 s protocol read back to back: FEC every tick, gauges every 5th, link every 10th.
export const ONE_HZ_SAMPLE_SET: SampleSetConfig = runSampleSet(RAILS, 1);

// How many ticks and repetitions of each variant.
export interface SshBenchPlan {
  reps: number;
  persistentTicks: number;
  naiveTicks: number;
  fixedRateTicks: number;
  fixedRateIntervalMs: number;
}

const FIELDS = [
  'ticksPerS',
  'intervalP50Ms',
  'intervalP99Ms',
  'skewP99Ms',
  'rawSkewP99Ms',
  'missedDeadlines',
  'tickDurationP50Ms',
  'tickDurationP99Ms',
  'cpuPerTickMs',
  'missingSamples',
  'itemErrors',
] as const;

// One measured configuration: strategy, schedule, sample set and which stand-ins the nodes run.
export interface SshVariant {
  name: string;
  mode: SamplingMode;
  intervalMs: number;
  ticks: number;
  sampleSet: 'run-20hz' | 'run-1hz';
  standIns: 'c' | 'sh';
}

// Every variant's repetitions and their summaries, plus the rc start-up cost.
export interface SshBenchResult {
  rcStartupMs: Summary | null;
  variants: (SshVariant & { runs: MeasureResult[]; summary: Record<string, Summary | null> })[];
  ratio: Summary | null; // persistent max-rate ticks/s over naive ticks/s, per repetition pair
  // Round trip of the shell builtin `:` (no fork on the node): over the open shell vs a fresh exec, ms.
  emptyRoundTripMs: { persistent: Summary | null; freshExec: Summary | null };
  // This machine's cost of one fork+exec of /bin/true, ms (what each tick item pays on the node side).
  forkExecMs: Summary | null;
  standIns: 'c' | 'sh'; // what the main nodes run (sh when no C compiler was found)
}

async function emptyRoundTrips(node: BenchNode, n: number): Promise<{ persistent: number[]; freshExec: number[] }> {
  const r = node.runner();
  try {
    await r.run('true');
    const shell = await r.openShell();
    await shell.run(':');
    const persistent: number[] = [];
    const freshExec: number[] = [];
    for (let i = 0; i < n; i++) {
      let t0 = performance.now();
      await shell.run(':');
      persistent.push(performance.now() - t0);
      t0 = performance.now();
      await r.run(':');
      freshExec.push(performance.now() - t0);
    }
    await shell.close();
    return { persistent, freshExec };
  } finally {
    await r.close();
  }
}

function forkExecMs(n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    execFileSync('/bin/true');
    out.push(performance.now() - t0);
  }
  return out;
}

async function once(nodes: BenchNode[], v: SshVariant): Promise<MeasureResult> {
  const runners = nodes.map((n) => n.runner());
  const sampleSet = v.sampleSet === 'run-20hz' ? BENCH_SAMPLE_SET : ONE_HZ_SAMPLE_SET;
  try {
    // Connect first so that the handshake is not counted in either strategy.
    await Promise.all(runners.map((r) => r.run('true')));
    return await measureSampling({
      mode: v.mode,
      ticks: v.ticks,
      intervalMs: v.intervalMs,
      nodes: runners.map((runner, i) => ({ name: nodes[i]!.name, runner, sampleSet })),
    });
  } finally {
    await Promise.all(runners.map((r) => r.close()));
  }
}

// Start the nodes, run the variants interleaved (so that load from other users hits them alike), stop the nodes.
export async function benchSsh(plan: SshBenchPlan, log: (s: string) => void): Promise<SshBenchResult> {
  const nodes: BenchNode[] = [];
  const shNodes: BenchNode[] = [];
  try {
    const tools = [await simulatedToolOutputs('spark-a'), await simulatedToolOutputs('spark-b')];
    nodes.push(await startBenchNode('bench-a', tools[0]!), await startBenchNode('bench-b', tools[1]!));
    const main = nodes[0]!.standIns;
    if (main === 'c') shNodes.push(await startBenchNode('bench-sh-a', tools[0]!, 'sh'), await startBenchNode('bench-sh-b', tools[1]!, 'sh'));
    const rc = rcStartupMs(`${nodes[0]!.dir}/home`, 10);
    const hz = 1000 / plan.fixedRateIntervalMs;
    const variants: SshVariant[] = [
      { name: 'persistent, back to back', mode: 'persistent', ticks: plan.persistentTicks, intervalMs: 0, sampleSet: 'run-20hz', standIns: main },
      { name: 'naive, back to back', mode: 'naive', ticks: plan.naiveTicks, intervalMs: 0, sampleSet: 'run-20hz', standIns: main },
      {
        name: `persistent, fixed ${hz} Hz`,
        mode: 'persistent',
        ticks: plan.fixedRateTicks,
        intervalMs: plan.fixedRateIntervalMs,
        sampleSet: 'run-20hz',
        standIns: main,
      },
      {
        name: 'persistent, back to back, 1 Hz sample set',
        mode: 'persistent',
        ticks: plan.persistentTicks,
        intervalMs: 0,
        sampleSet: 'run-1hz',
        standIns: main,
      },
      ...(shNodes.length
        ? [
            {
              name: `persistent, fixed ${hz} Hz, sh+cat stand-ins`,
              mode: 'persistent' as const,
              ticks: plan.fixedRateTicks,
              intervalMs: plan.fixedRateIntervalMs,
              sampleSet: 'run-20hz' as const,
              standIns: 'sh' as const,
            },
          ]
        : []),
    ];
    const runs: MeasureResult[][] = variants.map(() => []);
    for (let rep = 0; rep < plan.reps; rep++) {
      for (const [i, v] of variants.entries()) {
        const r = await once(v.standIns === main ? nodes : shNodes, v);
        runs[i]!.push(r);
        log(
          `  ssh ${v.name} rep ${rep + 1}/${plan.reps}: ${r.ticksPerS.toFixed(1)} ticks/s, skew p99 ${r.skewP99Ms?.toFixed(2)} ms, missing ${r.missingSamples}, item errors ${r.itemErrors}`,
        );
      }
    }
    const rt = await emptyRoundTrips(nodes[0]!, 20);
    const one = (xs: number[]) =>
      summarizeFields(
        xs.map((x) => ({ x })),
        ['x'],
      )['x'] ?? null;
    const ratios = runs[0]!.map((p, i) => p.ticksPerS / runs[1]![i]!.ticksPerS);
    return {
      rcStartupMs: one(rc),
      variants: variants.map((v, i) => ({ ...v, runs: runs[i]!, summary: summarizeFields(runs[i]!, FIELDS) })),
      ratio: one(ratios),
      emptyRoundTripMs: { persistent: one(rt.persistent), freshExec: one(rt.freshExec) },
      forkExecMs: one(forkExecMs(20)),
      standIns: main,
    };
  } finally {
    for (const n of [...nodes, ...shNodes]) await n.stop();
  }
}
