import { describe, expect, it } from 'vitest';
import { RunAnalyzer } from '../../src/analysis/analyze.js';
import { carryForward } from '../../src/analysis/counters.js';
import { EarlyStopDetector } from '../../src/analysis/early-stop.js';
import type { CountRule } from '../../src/analysis/watch.js';
import type { NodeSample, PhyCounters, RailSample } from '../../src/domain/sample.js';
import { DEFAULT_RULES } from '../rules/defaults.js';

// GENERATED samples of a sampler that reads `ethtool -S` every tick but the link and FEC items only every N ticks:
// on other ticks the rail has no linkUp/speedMbps/lanes/fec at all, as sample-set.ts leaves it.
interface Truth {
  uncorrectable?: number; // cumulative FEC uncorrectable blocks
  fecBits?: number; // cumulative FEC corrected bits (for a NIC without rx_corrected_bits_phy)
  linkUp?: boolean;
  linkDown?: number; // cumulative link_down_events_phy; undefined = the NIC lacks the counter
  lanes?: number[]; // cumulative rx_err_lane_N_phy
  linkLanes?: number; // what `ethtool <if>` says
}

function tick(t: number, x: Truth, read: { link: boolean; fec: boolean }): NodeSample {
  const phy: PhyCounters = { crcErrors: 0n, pcsSymbolErrors: 0n, symbolErrors: 0n, laneErrors: (x.lanes ?? []).map(BigInt) };
  if (x.linkDown !== undefined) phy.linkDownEvents = BigInt(x.linkDown);
  const rail: RailSample = { netdev: 'enp1s0f1np1', phy };
  if (read.link) Object.assign(rail, { linkUp: x.linkUp ?? true, speedMbps: 200000, lanes: x.linkLanes ?? 4 });
  if (read.fec) {
    rail.fec = { active: 'RS' };
    if (x.uncorrectable !== undefined) rail.fec.uncorrectableBlocks = BigInt(x.uncorrectable);
    if (x.fecBits !== undefined) rail.fec.correctedBits = BigInt(x.fecBits);
  }
  const tMs = 1_700_000_000_000 + t * 1000;
  return { node: 'b', tick: t, tMs, controllerMs: tMs, rails: [rail], nicTempC: 60, gpus: [], errors: [] };
}

// Ticks 0..n at 1 Hz, link read when t % linkEvery === 0, FEC when t % fecEvery === 0.
const stream = (n: number, truth: (t: number) => Truth, linkEvery: number, fecEvery: number): NodeSample[] =>
  Array.from({ length: n + 1 }, (_, t) => tick(t, truth(t), { link: t % linkEvery === 0, fec: t % fecEvery === 0 }));

function analyze(xs: NodeSample[]) {
  const a = new RunAnalyzer([]);
  a.node('b', 'enp1s0f1np1', 4);
  for (const s of xs) a.push('soak', s);
  const stats = a.finish().perNodePhase;
  expect(stats).toHaveLength(1);
  return stats[0]!;
}

function earlyStop(xs: NodeSample[], fail: Partial<Record<CountRule, number>>, lanes?: number) {
  const countFail = { 'crc-errors': 1, 'post-fec-errors': 1, 'link-down-events': 1, ...fail };
  const d = new EarlyStopDetector({ ...DEFAULT_RULES, countFail, gradedPhases: null, ...(lanes !== undefined ? { lanes } : {}) });
  for (const s of xs) if (d.push('soak', s, s.tick)) break;
  return d.decision;
}

describe('FEC block counters read every 5th tick', () => {
  // True cumulative uncorrectable blocks: +2 at t=3, +1 at t=7, +4 at t=12, +3 at t=18 (10 in all); read at 0, 5, 10, 15, 20.
  const steps: [number, number][] = [
    [3, 2],
    [7, 1],
    [12, 4],
    [18, 3],
  ];
  const upTo = (t: number) => steps.filter(([at]) => at <= t).reduce((a, [, n]) => a + n, 0);
  const xs = stream(20, (t) => ({ uncorrectable: upTo(t), fecBits: 1000 * t }), 1, 5);

  it('RunAnalyzer totals are the true totals (post-FEC errors, and FEC corrected bits without rx_corrected_bits_phy)', () => {
    const s = analyze(xs);
    expect(s.seconds).toBe(20);
    expect(s.postFecErrors).toBe(10);
    expect(s.correctedBits).toBe(20_000);
    expect(s.counterResets).toBe(0);
  });

  it('EarlyStopDetector decides post-fec-errors FAIL at the tick that read the blocks', () => {
    expect(earlyStop(xs, { 'post-fec-errors': 1 })).toMatchObject({ rule: 'post-fec-errors', tick: 5, value: 2 });
    expect(earlyStop(xs, { 'post-fec-errors': 7 })).toMatchObject({ rule: 'post-fec-errors', tick: 15, value: 7 });
    expect(earlyStop(xs, { 'post-fec-errors': 10 })).toMatchObject({ rule: 'post-fec-errors', tick: 20, value: 10 });
    expect(earlyStop(xs, { 'post-fec-errors': 11 })).toBeNull();
  });
});

describe('link state read every 10th tick', () => {
  // The link goes down at t=15 and stays down for 60 ticks (up again at t=75); reads at 20..70 see it down.
  const down = (t: number) => t >= 15 && t < 75;

  it('one outage with link_down_events_phy moving once counts 1 link-down event', () => {
    const xs = stream(100, (t) => ({ linkUp: !down(t), linkDown: t >= 15 ? 1 : 0 }), 10, 1);
    expect(analyze(xs).linkDownEvents).toBe(1);
    expect(earlyStop(xs, { 'link-down-events': 1 })).toMatchObject({ rule: 'link-down-events', tick: 15, value: 1 });
    expect(earlyStop(xs, { 'link-down-events': 2 })).toBeNull();
  });

  it('one outage on a NIC without link_down_events_phy counts 1 link-down event, at the first read that sees it', () => {
    const xs = stream(100, (t) => ({ linkUp: !down(t) }), 10, 1);
    expect(analyze(xs).linkDownEvents).toBe(1);
    expect(earlyStop(xs, { 'link-down-events': 1 })).toMatchObject({ rule: 'link-down-events', tick: 20, value: 1 });
    expect(earlyStop(xs, { 'link-down-events': 2 })).toBeNull();
  });

  it('two outages seen by separate reads count 2, with or without the counter', () => {
    // down 15..34, up 35..54 (read up at 40, 50), down again 55..74
    const twice = (t: number) => (t >= 15 && t < 35) || (t >= 55 && t < 75);
    const counter = (t: number) => (t >= 55 ? 2 : t >= 15 ? 1 : 0);
    expect(analyze(stream(100, (t) => ({ linkUp: !twice(t) }), 10, 1)).linkDownEvents).toBe(2);
    expect(analyze(stream(100, (t) => ({ linkUp: !twice(t), linkDown: counter(t) }), 10, 1)).linkDownEvents).toBe(2);
  });

  it('a short flap between two reads is counted by the counter alone', () => {
    const xs = stream(30, (t) => ({ linkUp: true, linkDown: t >= 13 ? 1 : 0 }), 10, 1);
    expect(analyze(xs).linkDownEvents).toBe(1);
  });

  it('the watch counts lanes with the lane count of the last link read', () => {
    // GENERATED 2-lane link on a NIC exposing 4 lane counters (2 and 3 idle at 0): lane 1 at 50000/tick, lane 0 at
    // 20000/tick. Over the 2 trained lanes lane 1 is 2.5x lane 0 and its BER is 50000 / 106.25e9; read as 4 lanes, the
    // others' median would be 0 and the window would look MARGINAL against "zero" lanes.
    const xs = stream(120, (t) => ({ lanes: [20_000 * t, 50_000 * t, 0, 0], linkLanes: 2 }), 10, 1);
    const a = new RunAnalyzer([{ name: 'soak', kind: 'soak' }], DEFAULT_RULES);
    a.node('b', 'enp1s0f1np1', null);
    xs.forEach((x) => a.push('soak', x, x.tick));
    const w = a.finish().windows!;
    const ratio = w.find((x) => x.rule === 'lane-ratio')!;
    expect(ratio).toMatchObject({ grade: 'PASS', lane: 1, againstZero: false });
    expect(ratio.value).toBeCloseTo(2.5, 1);
    const fec = w.find((x) => x.rule === 'fec-window' && x.lane === 1)!;
    expect(fec.berLb95).toBeCloseTo(50_000 / 106.25e9, 9);
    expect(w.filter((x) => x.rule === 'fec-window').map((x) => x.lane)).toEqual([0, 1]);
    expect(earlyStop(xs, {})).toBeNull();
  });
});

describe('a tick whose `ethtool -S` read failed (no counters)', () => {
  // True cumulative CRC errors: +1 at t=5 and +2 at t=6; the reads at t=5 and t=6 fail (no counters), t=7 reads 3.
  const truth = (t: number): Truth => ({ lanes: [t, t, t, t] });
  const xs = stream(10, truth, 1, 1).map((s) => {
    const crc = s.tick >= 6 ? 3n : s.tick >= 5 ? 1n : 0n;
    const rail = s.rails[0]!;
    return { ...s, rails: [{ ...rail, phy: s.tick === 5 || s.tick === 6 ? { laneErrors: [] } : { ...rail.phy, crcErrors: crc } }] };
  });

  it('RunAnalyzer keeps the errors of the intervals around it and the phase time', () => {
    const st = analyze(xs);
    expect(st.crcErrors).toBe(3);
    expect(st.laneStats.map((l) => l.errors)).toEqual([10, 10, 10, 10]);
    expect(st.seconds).toBe(10);
  });

  it('EarlyStopDetector decides crc-errors at the next good read', () => {
    expect(earlyStop(xs, { 'crc-errors': 1 })).toMatchObject({ rule: 'crc-errors', tick: 7, value: 3 });
  });

  it('carryForward holds the last counters only when the tick has none', () => {
    const prev: RailSample = { netdev: 'x', phy: { crcErrors: 2n, laneErrors: [] } };
    expect(carryForward(prev, { netdev: 'x', phy: { laneErrors: [] } }).phy).toEqual({ crcErrors: 2n, laneErrors: [] });
    expect(carryForward(prev, { netdev: 'x', phy: { symbolErrors: 0n, laneErrors: [] } }).phy).toEqual({ symbolErrors: 0n, laneErrors: [] });
  });
});

describe('carryForward', () => {
  const prev: RailSample = {
    netdev: 'x',
    phy: { linkDownEvents: 3n, laneErrors: [] },
    linkUp: false,
    speedMbps: 200000,
    lanes: 4,
    fec: { active: 'RS', uncorrectableBlocks: 7n, correctedBits: 900n },
  };

  it('fills the readings the tick did not take from the last merged reading', () => {
    const cur: RailSample = { netdev: 'x', phy: { linkDownEvents: 3n, laneErrors: [] } };
    expect(carryForward(prev, cur)).toEqual({ ...prev, phy: { linkDownEvents: 3n, laneErrors: [] } });
  });

  it("never overrides the tick's own readings, null ones included, and never mixes prev's counters into the tick's", () => {
    const cur: RailSample = {
      netdev: 'x',
      phy: { crcErrors: 1n, laneErrors: [] },
      linkUp: true,
      speedMbps: null,
      lanes: null,
      fec: { active: 'Off' },
    };
    expect(carryForward(prev, cur)).toEqual(cur);
    expect(carryForward(prev, { ...cur, fec: null }).fec).toBeNull();
  });

  it('does not mutate its inputs', () => {
    const cur: RailSample = { netdev: 'x', phy: { linkDownEvents: 4n, laneErrors: [] } };
    const [p0, c0] = [structuredClone(prev), structuredClone(cur)];
    const out = carryForward(prev, cur);
    expect(out).not.toBe(cur);
    expect(prev).toEqual(p0);
    expect(cur).toEqual(c0);
    expect(cur).not.toHaveProperty('linkUp');
    expect(cur).not.toHaveProperty('fec');
  });

  it('with no previous reading returns the tick as it is', () => {
    const cur: RailSample = { netdev: 'x', phy: { rxBytes: 1n, laneErrors: [] }, fec: { active: 'RS' } };
    expect(carryForward(undefined, cur)).toBe(cur);
    expect(carryForward(undefined, { netdev: 'x', phy: { laneErrors: [] } })).toEqual({ netdev: 'x', phy: { laneErrors: [] } });
  });

  it('marks the link down when link_down_events_phy moved on a tick that did not read the link', () => {
    const up: RailSample = { ...prev, linkUp: true };
    expect(carryForward(up, { netdev: 'x', phy: { linkDownEvents: 4n, laneErrors: [] } }).linkUp).toBe(false);
    expect(carryForward(up, { netdev: 'x', phy: { linkDownEvents: 3n, laneErrors: [] } }).linkUp).toBe(true);
    expect(carryForward(up, { netdev: 'x', phy: { linkDownEvents: 4n, laneErrors: [] }, linkUp: true }).linkUp).toBe(true);
    // a counter reset (driver reload) is not an event
    expect(carryForward(up, { netdev: 'x', phy: { linkDownEvents: 0n, laneErrors: [] } }).linkUp).toBe(true);
  });
});
