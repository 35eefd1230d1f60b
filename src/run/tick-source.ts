import type { Clock } from '../domain/clock.js';
import { Sampler, asTickSource } from '../sampling/sampler.js';
import type { NodeState } from './context.js';
import type { TickSource } from './sampling-loop.js';

// The persistent sampler over each node's shell: both rails' counters every tick, link state and FEC every
// tick too (cheap on one round trip), NIC and GPU temperatures.
export async function persistentTickSource(nodes: NodeState[], clock: Clock): Promise<TickSource> {
  const sampler = new Sampler({
    clock,
    nodes: nodes.map((n) => ({
      name: n.spec.name,
      runner: n.runner,
      sampleSet: { rails: n.cage!.rails.map((r) => r.netdev), fecNetdev: n.cage!.rails[0].netdev, linkEveryTicks: 1, fecEveryTicks: 1 },
    })),
  });
  await sampler.open();
  return asTickSource(sampler);
}
