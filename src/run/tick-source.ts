import type { Clock } from '../domain/clock.js';
import { CORE_READINGS, readings } from '../probes/readings.js';
import { Sampler, asTickSource } from '../sampling/sampler.js';
import type { SampleSetConfig } from '../sampling/sample-set.js';
import type { NodeState } from './context.js';
import type { TickSource } from './sampling-loop.js';

// What the run reads: every reading of the registry (src/probes/readings.ts) at its period in seconds, turned into ticks
// of the protocol's interval (at least every tick): at the default 1 s interval the counters every tick, FEC every
// tick, link every 10, temperatures and GPU every 5; at 20 Hz only the counters are read every tick.
export function runSampleSet(rails: string[], intervalS = 1): SampleSetConfig {
  const ticks = (periodS: number) => Math.max(1, Math.round(periodS / intervalS));
  const C = CORE_READINGS;
  const extra = readings();
  return {
    rails,
    fecNetdev: rails[0]!,
    linkEveryTicks: ticks(C.link.periodS),
    fecEveryTicks: ticks(C.fec.periodS),
    hwmonEveryTicks: ticks(C.hwmon.periodS),
    gpuEveryTicks: ticks(C.gpu.periodS),
    ...(extra.length ? { readings: Object.fromEntries(extra.map((r) => [r.id, ticks(r.periodS)])) } : {}),
  };
}

// The persistent sampler over each node's shell, reading runSampleSet() every tick.
export async function persistentTickSource(nodes: NodeState[], clock: Clock, opts: { intervalS: number }): Promise<TickSource> {
  const sampler = new Sampler({
    clock,
    nodes: nodes.map((n) => ({
      name: n.spec.name,
      runner: n.runner,
      sampleSet: runSampleSet(
        n.cage!.rails.map((r) => r.netdev),
        opts.intervalS,
      ),
    })),
  });
  await sampler.open();
  return asTickSource(sampler);
}
