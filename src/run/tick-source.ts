import type { Clock } from '../domain/clock.js';
import { Sampler, asTickSource } from '../sampling/sampler.js';
import type { SampleSetConfig } from '../sampling/sample-set.js';
import type { NodeState } from './context.js';
import type { TickSource } from './sampling-loop.js';

// What the run reads per tick: both rails' *_phy counters and the FEC block counters every tick (counters: a skipped
// tick would lose its deltas); link settings every 10 ticks (a drop shows at once in link_down_events_phy); NIC and
// GPU temperatures and GPU load every 5 ticks (gauges that move over minutes; nvidia-smi alone costs tens of ms).
export function runSampleSet(rails: string[]): SampleSetConfig {
  return { rails, fecNetdev: rails[0]!, linkEveryTicks: 10, fecEveryTicks: 1, hwmonEveryTicks: 5, gpuEveryTicks: 5 };
}

// The persistent sampler over each node's shell, reading runSampleSet() every tick.
export async function persistentTickSource(nodes: NodeState[], clock: Clock, opts: { measureCpu: boolean }): Promise<TickSource> {
  const sampler = new Sampler({
    clock,
    // Controller CPU per tick means nothing in virtual time, and getrusage twice a tick is a fifth of a simulated run.
    ...(opts.measureCpu ? {} : { cpuUsage: () => ({ user: 0, system: 0 }) }),
    nodes: nodes.map((n) => ({
      name: n.spec.name,
      runner: n.runner,
      sampleSet: runSampleSet(n.cage!.rails.map((r) => r.netdev)),
    })),
  });
  await sampler.open();
  return asTickSource(sampler);
}
