// Builders for GENERATED (simulated) NodeSamples: every number here is made up by the test that uses it.
import type { NodeSample, PhyCounters, RailSample } from '../../src/domain/sample.js';

export interface Tick {
  t: number; // seconds
  lanes?: number[]; // cumulative rx_err_lane_N_phy
  corrected?: number;
  crc?: number;
  pcs?: number;
  symbol?: number;
  linkDown?: number;
  linkUp?: boolean;
  temp?: number | null;
  gpuUtil?: number | null;
  uncorrectable?: number;
  recoveries?: number; // cumulative total_success_recovery_phy; undefined = the kernel lacks the counter
}

// One generated sample of one node; rails[0] is the canonical netdev, rails[1] the other PCIe function of the cage.
export function nodeSample(node: string, tick: number, x: Tick, other?: Partial<Tick>): NodeSample {
  const rail = (netdev: string, y: Tick): RailSample => {
    const phy: PhyCounters = {
      correctedBits: BigInt(y.corrected ?? 0),
      crcErrors: BigInt(y.crc ?? 0),
      pcsSymbolErrors: BigInt(y.pcs ?? 0),
      symbolErrors: BigInt(y.symbol ?? 0),
      linkDownEvents: BigInt(y.linkDown ?? 0),
      laneErrors: (y.lanes ?? []).map(BigInt),
      ...(y.recoveries !== undefined ? { recoveries: BigInt(y.recoveries) } : {}),
    };
    const r: RailSample = { netdev, phy, lanes: (y.lanes ?? []).length || 4, linkUp: y.linkUp ?? true, speedMbps: 200000 };
    if (y.uncorrectable !== undefined) r.fec = { active: 'RS', uncorrectableBlocks: BigInt(y.uncorrectable) };
    return r;
  };
  const rails = [rail('enp1s0f1np1', x)];
  if (other) rails.push(rail('enP2p1s0f1np1', { ...x, ...other }));
  return {
    node,
    tick,
    tMs: 1_700_000_000_000 + Math.round(x.t * 1000),
    controllerMs: 1_700_000_000_000 + Math.round(x.t * 1000),
    rails,
    nicTempC: x.temp === undefined ? 60 : x.temp,
    gpus: x.gpuUtil === undefined ? [] : [{ utilizationPct: x.gpuUtil, temperatureC: 50, powerW: 30 }],
    errors: [],
  };
}

// Cumulative counters from per-second lane rates (generated): lanes[i] grows by rates(t)[i] each second.
export function series(node: string, seconds: number, rates: (t: number) => number[], extra: (t: number) => Partial<Tick> = () => ({})): NodeSample[] {
  const out: NodeSample[] = [];
  let acc: number[] = [];
  for (let t = 0; t <= seconds; t++) {
    if (t === 0) acc = rates(0).map(() => 0);
    else acc = acc.map((v, i) => v + Math.round(rates(t)[i] ?? 0));
    out.push(nodeSample(node, t, { t, lanes: [...acc], ...extra(t) }));
  }
  return out;
}
