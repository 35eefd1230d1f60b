import { describe, expect, it } from 'vitest';
import { measureSampling } from '../../bench/sampler-strategies.js';
import type { SamplerNode } from '../../src/sampling/sampler.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import type { ScriptItem } from '../../src/transport/tick-script.js';
import { FakeRunner } from '../sampling/fake-runner.js';
import { genFec, genLink, genStats } from '../sampling/generated.js';

const A = 'enp1s0f1np1';

// Generated answers by item kind.
const answer = (item: ScriptItem) => {
  const [kind, netdev = ''] = item.id.split(':');
  if (kind === 'stats') return { stdout: genStats([1, 2, 3, 4], 10), exitCode: 0 };
  if (kind === 'link') return { stdout: genLink(netdev, true), exitCode: 0 };
  if (kind === 'fec') return { stdout: genFec(netdev), exitCode: 0 };
  return undefined;
};

// Two nodes, 4 items per tick (time, stats, link, fec). Every round trip costs 20 virtual ms on spark-a and
// 25 on spark-b, which reads its clock 15 ms in (spark-a: 10 ms in).
function setup() {
  const clock = new VirtualClock();
  const a = new FakeRunner({ node: 'spark-a', clock, answer, latency: () => ({ beforeMs: 10, afterMs: 10 }) });
  const b = new FakeRunner({ node: 'spark-b', clock, answer, offsetMs: 900, latency: () => ({ beforeMs: 15, afterMs: 10 }) });
  const sampleSet = { rails: [A], hwmon: false, gpu: false };
  const nodes: SamplerNode[] = [
    { name: 'spark-a', runner: a, sampleSet },
    { name: 'spark-b', runner: b, sampleSet },
  ];
  let micros = 0;
  return { clock, a, b, nodes, cpuUsage: () => ({ user: (micros += 250), system: 0 }) };
}

describe('measureSampling', () => {
  it('persistent: one round trip per node per tick, the slowest node sets the rate', async () => {
    const { clock, a, b, nodes, cpuUsage } = setup();
    const r = await measureSampling({ mode: 'persistent', nodes, ticks: 10, intervalMs: 0, clock, calibrationRounds: 2, cpuUsage });
    expect([a.calls, b.calls, a.runs]).toEqual([12, 12, 0]);
    expect(r).toMatchObject({ ticks: 10, elapsedMs: 250, ticksPerS: 40, intervalP50Ms: 25, tickDurationP99Ms: 25 });
    expect(r.missingSamples + r.itemErrors).toBe(0);
    // The nodes read their clocks 5 ms apart. Calibration cannot see spark-b's asymmetric path (15 ms out,
    // 10 back) and puts its offset 2.5 ms high, so the corrected skew is 5 - 2.5: the method's known error.
    expect(r.skewP99Ms).toBe(2.5);
    // The injected counter moves 250 µs per read and is read twice in all: 0.25 ms over 10 ticks.
    expect(r.cpuPerTickMs).toBe(0.025);
  });

  it('naive: a fresh run() per command, four round trips in a row per node per tick', async () => {
    const { clock, a, b, nodes } = setup();
    const r = await measureSampling({ mode: 'naive', nodes, ticks: 10, intervalMs: 0, clock, calibrationRounds: 2 });
    expect([a.runs, b.runs]).toEqual([42, 42]);
    expect(r).toMatchObject({ ticks: 10, elapsedMs: 1000, ticksPerS: 10, intervalP50Ms: 100, tickDurationP50Ms: 100 });
    expect(r.skewP99Ms).toBe(2.5); // the `date` item is the first of each node in both strategies
    expect(r.missingSamples + r.itemErrors).toBe(0);
  });

  it('fixed rate: ticks start on the interval grid', async () => {
    const { clock, nodes } = setup();
    const r = await measureSampling({ mode: 'persistent', nodes, ticks: 5, intervalMs: 1000, clock, calibrationRounds: 1 });
    expect(r).toMatchObject({ intervalP50Ms: 1000, intervalP99Ms: 1000, elapsedMs: 4025 });
  });
});
