// Section 2: controller CPU to parse one mlx5-size `ethtool -S` dump, and to assemble one node's full tick.
import { parseEthtoolStats } from '../src/probes/ethtool-stats.js';
import { assembleSample, sampleSetItems } from '../src/sampling/sample-set.js';
import { PHY_LINES } from '../src/transport/commands.js';
import type { ScriptItemOutput } from '../src/transport/tick-script.js';
import { RAILS, simulatedToolOutputs } from './ssh-nodes.js';
import { BENCH_SAMPLE_SET } from './ssh-sampler.js';
import { summarize, type Summary } from './stats.js';

// Per-call microseconds, each repetition the mean over `iterations` calls.
export interface ParseBenchResult {
  statsLines: number;
  statsBytes: number;
  phyLines: number;
  fullStatsUs: Summary | null;
  phyStatsUs: Summary | null;
  tickUs: Summary | null; // the sampler's per-tick set (phy-only stats, FEC, link, hwmon, GPU) of one node
  tickFullStatsUs: Summary | null; // the same with the full dumps (fullStats: true)
}

function perCallUs(fn: () => unknown, iterations: number): number {
  for (let i = 0; i < Math.min(50, iterations); i++) fn(); // warm up the JIT
  const t0 = performance.now();
  for (let i = 0; i < iterations; i++) fn();
  return ((performance.now() - t0) * 1000) / iterations;
}

// Texts rendered by the simulated lab (GENERATED): the same outputs the SSH bench's fake tools print.
export async function benchParse(reps: number, iterations: number): Promise<ParseBenchResult> {
  const t = await simulatedToolOutputs('spark-a');
  const full = t.stats[RAILS[0]!]!;
  const keep = new RegExp(PHY_LINES);
  const phyOf = (text: string) =>
    text
      .split('\n')
      .filter((l) => keep.test(l))
      .join('\n') + '\n';
  const phy = phyOf(full);
  const outputsFor = (fullStats: boolean) => {
    const items = sampleSetItems({ ...BENCH_SAMPLE_SET, fullStats }, 0); // tick 0: link and FEC items included
    const text: Record<string, string> = { time: `${BigInt(Date.now()) * 1_000_000n}\n`, hwmon: t.hwmon, gpu: t.nvidiaSmi };
    for (const r of RAILS) {
      text[`stats:${r}`] = fullStats ? t.stats[r]! : phyOf(t.stats[r]!);
      text[`link:${r}`] = t.link[r]!;
      text[`fec:${r}`] = t.fec[r]!;
    }
    const outputs: ScriptItemOutput[] = items.map((i) => ({ id: i.id, stdout: text[i.id]!, exitCode: 0 }));
    return { items, outputs };
  };
  const tick = outputsFor(false);
  const tickFull = outputsFor(true);
  const assemble = (x: typeof tick) => {
    const r = assembleSample({ node: 'spark-a', tick: 0, controllerMs: 0, ...x });
    if (r.sample.errors.length) throw new Error(`bench tick has item errors: ${r.sample.errors.join('; ')}`);
    return r;
  };
  const runs = { full: [] as number[], phy: [] as number[], tick: [] as number[], tickFull: [] as number[] };
  for (let rep = 0; rep < reps; rep++) {
    runs.full.push(perCallUs(() => parseEthtoolStats(full), iterations));
    runs.phy.push(perCallUs(() => parseEthtoolStats(phy), iterations * 10));
    runs.tick.push(perCallUs(() => assemble(tick), iterations * 5));
    runs.tickFull.push(perCallUs(() => assemble(tickFull), iterations));
  }
  return {
    statsLines: full.split('\n').filter((l) => l !== '').length,
    statsBytes: Buffer.byteLength(full),
    phyLines: phy.split('\n').filter((l) => l !== '').length,
    fullStatsUs: summarize(runs.full),
    phyStatsUs: summarize(runs.phy),
    tickUs: summarize(runs.tick),
    tickFullStatsUs: summarize(runs.tickFull),
  };
}
