import type { Clock } from '../domain/clock.js';
import { readings } from '../probes/readings.js';
import { Sampler, asTickSource } from '../sampling/sampler.js';
import type { SampleSetConfig } from '../sampling/sample-set.js';
import type { NodeState } from './context.js';
import type { TickSource } from './sampling-loop.js';

// What the run reads, with periods in seconds turned into ticks of the protocol's interval: both rails' *_phy
// counters every tick (per-lane pre-FEC errors, corrected bits, CRC, link-down events: the grading's rates); the
// FEC block counters every second (cumulative: a skipped tick loses no count, the analysis carries the last
// reading); link settings every 10 s (a drop shows at once in link_down_events_phy); NIC and GPU temperatures and
// GPU load every 5 s (gauges that move over minutes; nvidia-smi alone costs tens of ms). At the default 1 s
// interval that is every tick, 1, 10 and 5 ticks; at 20 Hz only the counters are read every tick. Registered extra
// readings (src/probes/readings.ts) at their own periods.
export function runSampleSet(rails: string[], intervalS = 1): SampleSetConfig {
  const ticks = (periodS: number) => Math.max(1, Math.round(periodS / intervalS));
  const extra = readings();
  return {
    rails,
    fecNetdev: rails[0]!,
    linkEveryTicks: ticks(10),
    fecEveryTicks: ticks(1),
    hwmonEveryTicks: ticks(5),
    gpuEveryTicks: ticks(5),
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
