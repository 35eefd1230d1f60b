// #22 item 8: every gap in sampling the run notices is in the record's `sampling.gaps` (and journaled as a gap-end),
// with its cause: a node without a sample (transport), a tick that started late because the controller was held up
// (what a store write blocking the run's thread did), a tick the nodes answered slowly, and a node still without a
// sample when sampling stopped. The sampling loop in virtual time over a scripted tick source.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/domain/clock.js';
import type { NodeSample } from '../../src/domain/sample.js';
import type { Protocol } from '../../src/protocol/index.js';
import { RunContext } from '../../src/run/context.js';
import { JournalWriter } from '../../src/run/journal.js';
import { SamplingLoop, type TickSource } from '../../src/run/sampling-loop.js';
import type { NodeTick } from '../../src/sampling/sampler.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';

const NODES = ['spark-a', 'spark-b'];

// A node's sample at tick k: traffic counters that only grow.
function sampleOf(node: string, k: number, nowMs: number): NodeSample {
  return {
    node,
    tick: k,
    tMs: nowMs,
    controllerMs: nowMs,
    rails: [{ netdev: 'enp1s0f1np1', phy: { rxBytes: BigInt(1000 * (k + 1)), crcErrors: 0n, laneErrors: [] } }],
    nicTempC: 50,
    gpus: [],
    errors: [],
  };
}

// The run's clock held up once: the first sleep asked for at or after `atMs` lasts `forMs` longer (the run's thread
// blocked, as by a synchronous store write, or the controller suspended).
class HeldUpClock implements Clock {
  private held = false;
  constructor(
    private readonly inner: VirtualClock,
    private readonly atMs: number,
    private readonly forMs: number,
  ) {}
  now(): number {
    return this.inner.now();
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (!this.held && this.inner.now() >= this.atMs) {
      this.held = true;
      ms += this.forMs;
    }
    return this.inner.sleep(ms, signal);
  }
}

// Sample 30 s at 1 Hz: `slowAtTick` takes `slowMs` on the nodes, `silentFrom` stops answering from that tick on.
async function sample(o: { runClock?: (v: VirtualClock) => Clock; slowAtTick?: number; slowMs?: number; silent?: { node: string; fromTick: number } }) {
  const clock = new VirtualClock(Date.UTC(2026, 5, 1));
  const t0 = clock.now();
  const runClock = o.runClock?.(clock) ?? clock;
  const dir = mkdtempSync(join(tmpdir(), 'cq-gaps-'));
  const journal = new JournalWriter(join(dir, 'journal.jsonl'), () => clock.now());
  const ctx = new RunContext('run1', runClock, {} as Protocol, [], journal, pino({ level: 'silent' }), new AbortController().signal, '/tmp/cablequal/run1');
  ctx.currentPhase = 'soak';
  const source: TickSource = {
    async tick(k: number): Promise<NodeTick[]> {
      if (k === o.slowAtTick) await clock.sleep(o.slowMs ?? 0);
      return NODES.map((node) =>
        o.silent?.node === node && k >= o.silent.fromTick
          ? { node, sample: null, raw: {}, error: 'ssh: connect to host spark-b port 22: Connection timed out' }
          : { node, sample: sampleOf(node, k, clock.now()), raw: {} },
      );
    },
    async close() {},
  };
  const loop = new SamplingLoop(ctx, source, null, { intervalMs: 1000, maxGapS: 120 });
  loop.start();
  await clock.sleep(30_000 - (clock.now() - t0));
  await loop.stop();
  journal.close();
  const lines = readFileSync(join(dir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const gapEnds = lines.filter((l) => l['type'] === 'gap-end').map(({ node, fromS, toS, reason }) => ({ node, fromS, toS, reason }));
  return { gaps: loop.stats().gaps, gapEnds, ticks: loop.stats().ticks };
}

describe('sampling gaps: every one the run notices is recorded with its cause', () => {
  it('a tick that started 15 s late (the run held up): a gap on every node, "late tick", journaled', async () => {
    const r = await sample({ runClock: (v) => new HeldUpClock(v, v.now() + 5000, 15_000) });
    const gap = { fromS: 5, toS: 21, reason: 'late tick (started 15.0 s after its time: the controller was held up)' };
    expect(r.gaps).toEqual(NODES.map((node) => ({ node, ...gap })));
    expect(r.gapEnds).toEqual(r.gaps);
  });

  it('a tick the nodes took 12 s to answer: a gap on every node, "slow tick"', async () => {
    const r = await sample({ slowAtTick: 10, slowMs: 12_000 });
    const gap = { fromS: 9, toS: 22, reason: 'slow tick (the nodes took 12.0 s to answer)' };
    expect(r.gaps).toEqual(NODES.map((node) => ({ node, ...gap })));
    expect(r.gapEnds).toEqual(r.gaps);
  });

  it('a tick a little late (under two intervals between samples) is no gap', async () => {
    const r = await sample({ slowAtTick: 10, slowMs: 900 });
    expect(r.gaps).toEqual([]);
  });

  it('a node still without a sample when sampling stops: its gap ends there', async () => {
    const r = await sample({ silent: { node: 'spark-b', fromTick: 20 } });
    expect(r.gaps).toEqual([{ node: 'spark-b', fromS: 20, toS: 30, reason: 'no sample (transport) until sampling stopped' }]);
    expect(r.gapEnds).toEqual(r.gaps);
  });

  it('a slow tick on which a node does not answer: the stretch, then its transport gap', async () => {
    const r = await sample({ slowAtTick: 10, slowMs: 12_000, silent: { node: 'spark-b', fromTick: 10 } });
    expect(r.gaps).toEqual([
      { node: 'spark-a', fromS: 9, toS: 22, reason: 'slow tick (the nodes took 12.0 s to answer)' },
      { node: 'spark-b', fromS: 9, toS: 22, reason: 'slow tick (the nodes took 12.0 s to answer)' },
      { node: 'spark-b', fromS: 22, toS: 30, reason: 'no sample (transport) until sampling stopped' },
    ]);
  });
});
