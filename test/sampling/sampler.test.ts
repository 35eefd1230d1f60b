import { describe, expect, it } from 'vitest';
import { Sampler, asTickSource, tickNode, type SampledTick } from '../../src/sampling/sampler.js';
import { runOnSchedule } from '../../src/sampling/schedule.js';
import { TickFigures } from '../../src/sampling/stats.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import type { ScriptItem } from '../../src/transport/tick-script.js';
import { FakeRunner, type FakeAnswer, type FakeNodeOptions } from './fake-runner.js';
import { genFec, genGpu, genHwmon, genLink, genStats } from './generated.js';

const A = 'enp1s0f1np1';
const B = 'enP2p1s0f1np1';
const T0 = Date.UTC(2026, 0, 1);

// Generated answers; lane 2's error counter grows by 10 per round trip so each tick is distinguishable.
function healthy(item: ScriptItem, call: number): FakeAnswer | undefined {
  const [kind, netdev = ''] = item.id.split(':');
  if (kind === 'stats') return { stdout: genStats([0, 0, call * 10, 0], 5), exitCode: 0 };
  if (kind === 'link') return { stdout: genLink(netdev, true), exitCode: 0 };
  if (kind === 'fec') return { stdout: genFec(netdev), exitCode: 0 };
  if (kind === 'hwmon') return { stdout: genHwmon(60000 + call * 1000), exitCode: 0 };
  if (kind === 'gpu') return { stdout: genGpu(100, 70, '40.00'), exitCode: 0 };
  return undefined;
}

function lab(clock: VirtualClock, over: Partial<Record<'a' | 'b', Partial<FakeNodeOptions>>> = {}) {
  const a = new FakeRunner({ node: 'spark-a', clock, answer: healthy, ...over.a });
  const b = new FakeRunner({ node: 'spark-b', clock, answer: healthy, ...over.b });
  const sampleSet = { rails: [A, B], fecNetdev: A, linkEveryTicks: 5 };
  const sampler = new Sampler({
    clock,
    calibrationRounds: 3,
    nodes: [
      { name: 'spark-a', runner: a, sampleSet },
      { name: 'spark-b', runner: b, sampleSet },
    ],
  });
  return { a, b, sampler };
}

// The sampler on the run's schedule until stop() says so, with the run's figures of what it did.
async function onSchedule(sampler: Sampler, clock: VirtualClock, intervalMs: number, stop: (seen: SampledTick[]) => boolean, signal?: AbortSignal) {
  const figures = new TickFigures();
  const seen: SampledTick[] = [];
  const summary = await runOnSchedule({ clock, intervalMs, stop: () => stop(seen), ...(signal ? { signal } : {}) }, async () => {
    const t = await sampler.tick();
    seen.push(t);
    figures.add({ startMs: t.startMs, endMs: t.endMs, nodes: t.nodes.map(tickNode) }, sampler.offsetsMs());
  });
  return { summary, seen, figures: figures.summary() };
}

describe('Sampler.tick', () => {
  it('asks both nodes in ONE round trip each per tick, over one long-lived shell, and parses the answers', async () => {
    const clock = new VirtualClock(T0);
    const { a, b, sampler } = lab(clock, { a: { offsetMs: 5000 }, b: { offsetMs: -3000 } });
    expect(await sampler.open()).toEqual([]);
    expect([a.calls, b.calls]).toEqual([3, 3]); // calibration: three `date` round trips each
    const t0 = await sampler.tick();
    const t1 = await sampler.tick();
    expect([a.calls, b.calls]).toEqual([5, 5]);
    expect([a.opened, b.opened]).toEqual([1, 1]);
    // Tick 0 reads link state (every 5 ticks), tick 1 does not.
    expect(a.scripts[3]).toContain(`{ ethtool ${B} ; }`);
    expect(a.scripts[4]).not.toContain(`{ ethtool ${B} ; }`);
    expect(a.scripts[4]).toContain(`; __cq_phy ${B} ; }`);

    const s = t0.nodes[0]!.sample!;
    expect(t0.nodes.map((n) => n.node)).toEqual(['spark-a', 'spark-b']);
    expect(s.errors).toEqual([]);
    expect(s.tMs).toBe(T0 + 5000); // node clock, virtual time did not move
    expect(s.controllerMs).toBe(T0);
    expect(s.rails[0]!.phy.laneErrors[2]).toBe(30n); // round trip #3 of this runner
    expect(s.rails[0]!.linkUp).toBe(true);
    expect(s.nicTempC).toBe(63);
    expect(t1.nodes[1]!.sample!.rails[1]!.phy.laneErrors[2]).toBe(40n);
    expect(t1.nodes[1]!.sample!.rails[1]!.linkUp).toBeUndefined(); // not read on tick 1
    expect(t1.tick).toBe(1);
    expect(Object.fromEntries(sampler.offsetsMs())).toEqual({ 'spark-a': 5000, 'spark-b': -3000 });
    await sampler.close();
  });

  it('a garbage item is an error line in a kept sample, never a crash', async () => {
    const clock = new VirtualClock(T0);
    const { sampler } = lab(clock, {
      b: {
        answer: (item, call) => (item.id === `stats:${B}` ? { stdout: 'NIC statistics:\n     rx_err_lane_0_phy: N/A\n', exitCode: 0 } : healthy(item, call)),
      },
    });
    await sampler.open();
    const t = await sampler.tick();
    const sb = t.nodes[1]!.sample!;
    expect(sb.errors).toHaveLength(1);
    expect(sb.errors[0]).toMatch(new RegExp(`^stats:${B}: ethtool-stats: line 2: `));
    expect(sb.rails[1]!.phy).toEqual({ laneErrors: [] });
    expect(sb.rails[0]!.phy.crcErrors).toBe(0n);
    expect(t.nodes[1]!.raw[`stats:${B}`]).toBe('NIC statistics:\n     rx_err_lane_0_phy: N/A\n');
    expect(t.nodes[0]!.sample!.errors).toEqual([]);
    expect(t.nodes.map(tickNode).map((n) => [n.missing, n.itemErrors])).toEqual([
      [false, 0],
      [false, 1],
    ]);
  });

  it('a node whose session drops is missing for that tick; the other node is sampled; the shell is reopened', async () => {
    const clock = new VirtualClock(T0);
    // spark-b: calls 0-2 calibrate, 3 = tick 0, 4 = tick 1 drops, then a new shell.
    const { a, b, sampler } = lab(clock, { b: { dropOn: (call) => call === 4 } });
    await sampler.open();
    const { seen, figures } = await onSchedule(sampler, clock, 1000, () => a.calls >= 3 + 4);
    expect(figures.ticks).toBe(4);
    expect(figures.missingSamples).toBe(1);
    expect(b.opened).toBe(2);
    // One gap: spark-b missing at 1 s only (reopened for the tick at 2 s).
    expect(seen.map((t) => [t.startMs - T0, t.nodes[1]!.sample ? 'ok' : t.nodes[1]!.error])).toEqual([
      [0, 'ok'],
      [1000, 'spark-b: connection lost'],
      [2000, 'ok'],
      [3000, 'ok'],
    ]);
  });

  it('a node whose shell takes 5 s to reopen does not hold the others back: they keep their 1 s schedule', async () => {
    const clock = new VirtualClock(T0);
    // spark-b: calls 0-2 calibrate, 3 = tick 0, 4 = tick 1 drops; its second shell takes 5 s to open (a reconnect).
    const { a, b, sampler } = lab(clock, { b: { dropOn: (call) => call === 4, openDelayMs: (n) => (n === 1 ? 5000 : 0) } });
    await sampler.open();
    const { seen, summary } = await onSchedule(sampler, clock, 1000, (ticks) => ticks.length >= 9);
    // spark-a answered every tick, each on its 1 s deadline (no tick waited for spark-b's shell).
    expect(seen.map((t) => t.startMs - T0 - (seen[0]!.startMs - T0))).toEqual([0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000]);
    expect(seen.every((t) => t.nodes[0]!.sample !== null)).toBe(true);
    expect(summary.missedDeadlines).toBe(0);
    // spark-b: dropped at tick 1; ticks 2-5 find its shell still opening (1 s wait each); back from tick 6 on.
    expect(seen.map((t) => (t.nodes[1]!.sample ? 'ok' : t.nodes[1]!.error))).toEqual([
      'ok',
      'spark-b: connection lost',
      'spark-b: shell not open after 1000 ms (reconnecting); missing from this tick',
      'spark-b: shell not open after 1000 ms (reconnecting); missing from this tick',
      'spark-b: shell not open after 1000 ms (reconnecting); missing from this tick',
      'spark-b: shell not open after 1000 ms (reconnecting); missing from this tick',
      'ok',
      'ok',
      'ok',
    ]);
    expect(b.opened).toBe(2); // one reopening, not one per tick
    expect(a.opened).toBe(1);
    await sampler.close();
  });

  it('a shell that opens after close() is closed at once, never kept', async () => {
    const clock = new VirtualClock(T0);
    const { b, sampler } = lab(clock, { b: { dropOn: (call) => call === 3, openDelayMs: (n) => (n === 1 ? 5000 : 0) } });
    await sampler.open();
    await sampler.tick(0); // spark-b drops
    await sampler.tick(1); // spark-b's reopening starts and outlives the tick
    await sampler.close();
    await clock.sleep(6000);
    expect(b.opened).toBe(2);
    expect(b.closedShells).toBe(1); // the late one (the first died with its session)
  });

  it('on the schedule, every tick carries the missing node and its error', async () => {
    const clock = new VirtualClock(T0);
    const { sampler } = lab(clock, { b: { dropOn: (call) => call >= 4 } }); // never comes back: reopened shells fail too
    await sampler.open();
    const { seen, figures } = await onSchedule(sampler, clock, 500, (ticks) => ticks.length >= 3);
    expect(seen.map((t) => t.nodes.map((x) => (x.sample ? 'ok' : x.error)))).toEqual([
      ['ok', 'ok'],
      ['ok', 'spark-b: connection lost'],
      ['ok', 'spark-b: connection lost'],
    ]);
    expect(seen.map((t) => t.startMs - T0)).toEqual([0, 500, 1000]);
    expect(figures.missingSamples).toBe(2);
  });
});

describe('the sampling schedule (runOnSchedule) driving the sampler', () => {
  it('ticks at exact multiples of the interval on the injected clock (no drift)', async () => {
    const clock = new VirtualClock(T0);
    // Each round trip takes 130 virtual ms; the schedule must not add it up.
    const { sampler } = lab(clock, { a: { latency: () => ({ beforeMs: 30, afterMs: 100 }) } });
    await sampler.open();
    const start = clock.now();
    const { seen, summary, figures } = await onSchedule(sampler, clock, 1000, (ticks) => ticks.length >= 6);
    expect(summary).toEqual({ ticks: 6, missedDeadlines: 0 });
    expect(seen.map((t) => t.startMs - start)).toEqual([0, 1000, 2000, 3000, 4000, 5000]);
    expect(figures).toMatchObject({ ticks: 6, intervalP50Ms: 1000, intervalP99Ms: 1000, tickDurationP50Ms: 130 });
  });

  it('after a slow tick the next starts at once; the deadlines it overran are skipped and counted; then the grid', async () => {
    const clock = new VirtualClock(T0);
    // Tick 2 (call 3 + 2 = 5 of spark-a) takes 2.5 intervals: it ends at 4500, past the deadlines 3000 and 4000; the
    // next tick starts at once (in place of 5000's), then the grid again at 6000.
    const { sampler } = lab(clock, { a: { latency: (call) => ({ beforeMs: 0, afterMs: call === 5 ? 2500 : 10 }) } });
    await sampler.open();
    const start = clock.now();
    const { seen, summary } = await onSchedule(sampler, clock, 1000, (ticks) => ticks.length >= 5);
    expect(seen.map((t) => t.startMs - start)).toEqual([0, 1000, 2000, 4500, 6000]);
    expect(summary.missedDeadlines).toBe(2);
  });

  it('stops on an abort signal, also during the wait', async () => {
    const clock = new VirtualClock(T0);
    const { sampler } = lab(clock);
    await sampler.open();
    const start = clock.now();
    const ac = new AbortController();
    void clock.sleep(1000).then(() => ac.abort());
    const { summary } = await onSchedule(sampler, clock, 60_000, () => false, ac.signal);
    expect(summary.ticks).toBe(1);
    expect(clock.now() - start).toBe(1000); // the wait for the 60 s deadline was cut at the abort
  });

  it('stops before the next tick once stop() says so, without waiting for its deadline', async () => {
    const clock = new VirtualClock(T0);
    const { sampler } = lab(clock);
    await sampler.open();
    const start = clock.now();
    const { summary } = await onSchedule(sampler, clock, 60_000, (ticks) => ticks.length >= 2);
    expect(summary.ticks).toBe(2);
    expect(clock.now() - start).toBe(60_000); // tick 1 on its deadline, no wait for the third
  });

  it('interval 0 ticks back to back; maxTicks ends it', async () => {
    const clock = new VirtualClock(T0);
    const starts: number[] = [];
    const r = await runOnSchedule({ clock, intervalMs: 0, maxTicks: 3 }, async () => {
      starts.push(clock.now() - T0);
      await clock.sleep(70);
    });
    expect(r).toEqual({ ticks: 3, missedDeadlines: 0 });
    expect(starts).toEqual([0, 70, 140]);
  });

  it('refuses a negative interval', async () => {
    await expect(runOnSchedule({ clock: new VirtualClock(T0), intervalMs: -1 }, async () => undefined)).rejects.toThrow(/sampling interval -1/);
  });
});

describe("skew figures (TickFigures) from the sampler's calibrated offsets", () => {
  // The sampler's ticks through the run's figures, with the offsets it knew at each tick.
  const figuresOf = () => {
    const f = new TickFigures();
    return { add: (t: SampledTick, s: Sampler) => f.add({ startMs: t.startMs, endMs: t.endMs, nodes: t.nodes.map(tickNode) }, s.offsetsMs()), f };
  };

  it('skew p99 is the spread of offset-corrected node times within a tick; the raw skew keeps the offsets', async () => {
    const clock = new VirtualClock(T0);
    // Calibration sees symmetric 20 ms round trips, so offsets are exact (+5 s, -3 s). In ticks, spark-b reads
    // its clock 7 ms after spark-a on tick 1 and 3 ms after on the others: the skew is 7 or 3, never the 8 s offset gap.
    const { sampler } = lab(clock, {
      a: { offsetMs: 5000, latency: () => ({ beforeMs: 10, afterMs: 10 }) },
      b: { offsetMs: -3000, latency: (call) => ({ beforeMs: call < 3 ? 10 : call === 4 ? 17 : 13, afterMs: 10 }) },
    });
    await sampler.open();
    const { add, f } = figuresOf();
    for (let i = 0; i < 4; i++) add(await sampler.tick(), sampler);
    // Sorted skews [3, 3, 3, 7]; p99 interpolates at rank 3 x 0.99 = 2.97: 3 + 0.97 x (7 - 3).
    expect(f.summary().skewP99Ms).toBeCloseTo(6.88, 9);
    // Raw: spark-a's clock reads 8 s ahead of spark-b's, less spark-b's later reading: [7997, 7997, 7997, 7993].
    expect(f.summary().rawSkewP99Ms).toBeCloseTo(7997, 9);
    expect(Object.fromEntries(sampler.offsetsMs())).toEqual({ 'spark-a': 5000, 'spark-b': -3000 });
  });

  it('recalibrate() follows a node clock that drifted; skew stays the real spread', async () => {
    const clock = new VirtualClock(T0);
    const optsB: FakeNodeOptions = { node: 'spark-b', clock, answer: healthy, offsetMs: 3000 };
    const a = new FakeRunner({ node: 'spark-a', clock, answer: healthy });
    const sampleSet = { rails: [A], hwmon: false, gpu: false };
    const sampler = new Sampler({
      clock,
      nodes: [
        { name: 'spark-a', runner: a, sampleSet },
        { name: 'spark-b', runner: new FakeRunner(optsB), sampleSet },
      ],
    });
    await sampler.open();
    const { add, f } = figuresOf();
    optsB.offsetMs = 3040; // 40 ms of drift
    add(await sampler.tick(), sampler);
    expect(f.summary().skewP99Ms).toBe(40);
    await sampler.recalibrate();
    add(await sampler.tick(), sampler);
    expect(sampler.offsetsMs().get('spark-b')).toBe(3040);
    // Skews are now [40, 0] (without recalibrate() they would be [40, 40], p99 40): p99 interpolates to 39.6.
    expect(f.summary().skewP99Ms).toBeCloseTo(39.6, 9);
  });

  it('one node: no skew; two ticks at one virtual instant: interval 0', async () => {
    const clock = new VirtualClock(T0);
    const a = new FakeRunner({ node: 'spark-a', clock, answer: healthy });
    const sampler = new Sampler({ clock, nodes: [{ name: 'spark-a', runner: a, sampleSet: { rails: [A] } }] });
    const { add, f } = figuresOf();
    add(await sampler.tick(), sampler);
    add(await sampler.tick(), sampler);
    expect(f.summary()).toMatchObject({ ticks: 2, skewP99Ms: null, rawSkewP99Ms: null, intervalP50Ms: 0 });
    // Not calibrated (no open()): the offset is taken from its first answer's midpoint.
    expect(sampler.offsetsMs().get('spark-a')).toBe(0);
  });

  it('works as the run tick source: tick(n) uses the given number', async () => {
    const clock = new VirtualClock(T0);
    const { a, sampler } = lab(clock);
    const src = asTickSource(sampler);
    const nodes = await src.tick(10);
    expect(nodes.map((n) => n.sample?.tick)).toEqual([10, 10]);
    expect(a.scripts[0]).toContain(`{ ethtool ${A} ; }`); // 10 % 5 === 0: link state read
    await src.close();
  });
});
