import type { Clock } from '../domain/clock.js';
import { Sampler, asTickSource } from '../sampling/sampler.js';
import type { NodeState } from './context.js';
import type { TickSource } from './sampling-loop.js';

// The persistent sampler over each node's shell: both rails' *_phy counters, FEC and temperatures every tick;
// link settings every 10 ticks (link drops show at once in link_down_events_phy).
export async function persistentTickSource(nodes: NodeState[], clock: Clock, opts: { measureCpu: boolean }): Promise<TickSource> {
  const sampler = new Sampler({
    clock,
    // Controller CPU per tick means nothing in virtual time, and getrusage twice a tick is a fifth of a simulated run.
    ...(opts.measureCpu ? {} : { cpuUsage: () => ({ user: 0, system: 0 }) }),
    nodes: nodes.map((n) => ({
      name: n.spec.name,
      runner: n.runner,
      sampleSet: { rails: n.cage!.rails.map((r) => r.netdev), fecNetdev: n.cage!.rails[0].netdev, linkEveryTicks: 10, fecEveryTicks: 1 },
    })),
  });
  await sampler.open();
  return asTickSource(sampler);
}
