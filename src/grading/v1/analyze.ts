// Rules version 1, FROZEN: a copy of what cablequal 0.1.0 graded with (see engine.ts). Do not change it.
// From the journal's per-node samples to the AnalysisRecord: per lane, per node, per phase statistics.
import { linearRegression, mean } from 'simple-statistics';
import type { NodePhaseStats, LaneStats, AnalysisRecord } from './types.js';
import type { NodeSample, RailSample } from '../../domain/sample.js';
import { FEC_LIMIT_BER, SERIAL_RATE_BPS, carryForward, intervalDelta, laneRatio } from './counters.js';
import { poissonUpperBound } from './poisson.js';

// One journal entry: a node's sample tagged with the phase it was taken in.
export interface LabelledSample {
  phase: string;
  sample: NodeSample;
}

// What analysis needs to know of the protocol's phases (Protocol['phases'] fits).
export interface AnalysisPhase {
  name: string;
  kind: string;
  gpuLoad?: boolean;
}

export interface AnalysisInput {
  samples: readonly LabelledSample[];
  phases?: readonly AnalysisPhase[]; // order of phases, and which soak is idle or GPU-loaded
  lanes?: number; // fallback when `ethtool <if>` gave no Lanes: line
}

interface Acc {
  seconds: number;
  laneErrors: number[];
  correctedBits: number | null;
  postFecErrors: number;
  crcErrors: number;
  symbolErrors: number;
  linkDownEvents: number;
  counterResets: number;
  temps: number[];
  gpuUtil: number[];
  gpuTemps: number[];
}

const newAcc = (): Acc => ({
  seconds: 0,
  laneErrors: [],
  correctedBits: null,
  postFecErrors: 0,
  crcErrors: 0,
  symbolErrors: 0,
  linkDownEvents: 0,
  counterResets: 0,
  temps: [],
  gpuUtil: [],
  gpuTemps: [],
});

// *_phy counters of one cage are one physical port seen twice: read the first rail only (docs/formats.md §0).
export function canonicalRail(sample: NodeSample, netdev?: string): RailSample | undefined {
  return netdev === undefined ? sample.rails[0] : sample.rails.find((r) => r.netdev === netdev);
}

// FEC margin of one node-phase in decades: the worse of the per-lane and corrected-bits upper bounds.
export function fecMarginOf(s: NodePhaseStats): { decades: number; lane: number | null } | null {
  let worst = 0;
  let lane: number | null = null;
  for (const l of s.laneStats) if (l.berUb95 > worst) [worst, lane] = [l.berUb95, l.lane];
  if (s.correctedBitsBerUb95 != null && s.correctedBitsBerUb95 > worst) [worst, lane] = [s.correctedBitsBerUb95, null];
  return worst > 0 ? { decades: Math.log10(FEC_LIMIT_BER / worst), lane } : null;
}

// Math.max(...xs) passes every element as an argument: a 10 Hz soak has tens of thousands.
function maxOf(xs: readonly number[]): number {
  let m = -Infinity;
  for (const x of xs) if (x > m) m = x;
  return m;
}

function phaseStats(node: string, phase: string, a: Acc, lanes: number): NodePhaseStats {
  const laneBitRate = SERIAL_RATE_BPS / lanes;
  const floorRate = 1 / a.seconds; // one error per phase: zero lanes give a finite ratio
  const laneStats: LaneStats[] = a.laneErrors.map((errors, lane) => ({
    node,
    phase,
    lane,
    errors,
    seconds: a.seconds,
    ratePerS: errors / a.seconds,
    ber: errors / (a.seconds * laneBitRate),
    berUb95: poissonUpperBound(errors) / (a.seconds * laneBitRate),
  }));
  const bits = a.seconds * SERIAL_RATE_BPS;
  const total = a.laneErrors.length > 0 ? a.laneErrors.reduce((x, y) => x + y, 0) : (a.correctedBits ?? 0);
  const { worstLane, ratio } = laneRatio(
    laneStats.map((l) => l.ratePerS),
    floorRate,
  );
  return {
    node,
    phase,
    seconds: a.seconds,
    lanes,
    laneStats,
    correctedBits: a.correctedBits ?? 0,
    preFecBer: total / bits,
    preFecBerUb95: poissonUpperBound(total) / bits,
    correctedBitsBerUb95: a.correctedBits === null ? null : poissonUpperBound(a.correctedBits) / bits,
    postFecErrors: a.postFecErrors,
    crcErrors: a.crcErrors,
    symbolErrors: a.symbolErrors,
    linkDownEvents: a.linkDownEvents,
    counterResets: a.counterResets,
    worstLane,
    worstLaneRatio: ratio,
    nicTempMaxC: a.temps.length ? maxOf(a.temps) : null,
    nicTempMeanC: a.temps.length ? mean(a.temps) : null,
    gpuUtilMeanPct: a.gpuUtil.length ? mean(a.gpuUtil) : null,
    gpuTempMaxC: a.gpuTemps.length ? maxOf(a.gpuTemps) : null,
  };
}

// Per-tick points (NIC temperature, log10 pre-FEC error rate) of one node, for the temperature slope.
type TempPoint = [number, number];

// Analyse a run: counter deltas with reset detection, per-lane BER with exact Poisson bounds, lane ratio, FEC margin, temperature slope.
export function analyzeRun(input: AnalysisInput): AnalysisRecord {
  const byNode = new Map<string, LabelledSample[]>();
  for (const s of input.samples) {
    const list = byNode.get(s.sample.node) ?? [];
    list.push(s);
    byNode.set(s.sample.node, list);
  }
  const analyzer = new RunAnalyzer(input.phases ?? []);
  for (const [node, list] of byNode) {
    list.sort((a, b) => a.sample.tMs - b.sample.tMs);
    const first = list.find((l) => l.sample.rails.length > 0);
    const netdev = first?.sample.rails[0]?.netdev;
    const lanes = list.map((l) => canonicalRail(l.sample, netdev)?.lanes).find((x) => x != null) ?? input.lanes ?? null;
    analyzer.node(node, netdev, lanes);
    for (const { phase, sample } of list) analyzer.push(phase, sample);
  }
  return analyzer.finish();
}

interface NodeAcc {
  netdev: string | undefined;
  lanes: number | null;
  accs: Map<string, Acc>;
  points: TempPoint[];
  prev: { rail: RailSample; tMs: number } | null;
}

// The same analysis one sample at a time, so a long journal is never held whole: each node's samples must come
// in time order, after node() told its canonical netdev and lane count (analyzeRun does both for unsorted input).
export class RunAnalyzer {
  private readonly nodes = new Map<string, NodeAcc>();
  private readonly soakPhases: Set<string>;

  constructor(private readonly phases: readonly AnalysisPhase[]) {
    this.soakPhases = new Set(phases.filter((p) => p.kind === 'soak').map((p) => p.name));
  }

  node(node: string, netdev: string | undefined, lanes: number | null): void {
    this.nodes.set(node, { netdev, lanes, accs: new Map(), points: [], prev: null });
  }

  push(phase: string, sample: NodeSample): void {
    const n = this.nodes.get(sample.node);
    if (!n) throw new Error(`analysis: node ${sample.node} was not announced`);
    let acc = n.accs.get(phase);
    if (!acc) n.accs.set(phase, (acc = newAcc()));
    if (sample.nicTempC !== null) acc.temps.push(sample.nicTempC);
    if (sample.gpus.length) {
      const utils = sample.gpus.map((g) => g.utilizationPct).filter((x): x is number => x !== null);
      if (utils.length) acc.gpuUtil.push(mean(utils));
      for (const g of sample.gpus) if (g.temperatureC !== null) acc.gpuTemps.push(g.temperatureC);
    }
    const read = canonicalRail(sample, n.netdev);
    if (!read) return;
    const prev = n.prev;
    const rail = carryForward(prev?.rail, read);
    if (prev) {
      const dt = (sample.tMs - prev.tMs) / 1000;
      const d = dt > 0 ? intervalDelta(prev.rail, rail, n.lanes) : null;
      if (d === 'reset') acc.counterResets++;
      else if (d) {
        acc.seconds += dt;
        let errs = 0;
        for (let i = 0; i < d.laneErrors.length; i++) {
          const e = d.laneErrors[i]!;
          acc.laneErrors[i] = (acc.laneErrors[i] ?? 0) + e;
          errs += e;
        }
        if (d.correctedBits !== null) acc.correctedBits = (acc.correctedBits ?? 0) + d.correctedBits;
        acc.postFecErrors += d.postFecErrors;
        acc.crcErrors += d.crcErrors;
        acc.symbolErrors += d.symbolErrors;
        acc.linkDownEvents += d.linkDownEvents;
        if (!d.laneErrors.length) errs = d.correctedBits ?? 0;
        const inScope = this.soakPhases.size === 0 || this.soakPhases.has(phase);
        if (inScope && errs > 0 && sample.nicTempC !== null) n.points.push([sample.nicTempC, Math.log10(errs / dt)]);
      }
    }
    n.prev = { rail, tMs: sample.tMs };
  }

  finish(): AnalysisRecord {
    const phaseOrder = new Map(this.phases.map((p, i) => [p.name, i]));
    const perNodePhase: NodePhaseStats[] = [];
    const slopes: number[] = [];
    for (const [node, n] of this.nodes) {
      const laneCount = n.lanes ?? Math.max(0, ...[...n.accs.values()].map((a) => a.laneErrors.length));
      for (const [phase, acc] of n.accs) {
        if (acc.seconds > 0) perNodePhase.push(phaseStats(node, phase, acc, laneCount || 4));
      }
      const temps = new Set(n.points.map((p) => p[0]));
      if (n.points.length >= 3 && temps.size >= 2) slopes.push(linearRegression(n.points).m);
    }
    perNodePhase.sort(
      (a, b) => (phaseOrder.get(a.phase) ?? 1e9) - (phaseOrder.get(b.phase) ?? 1e9) || a.phase.localeCompare(b.phase) || a.node.localeCompare(b.node),
    );
    const margins = perNodePhase.map(fecMarginOf).filter((m): m is NonNullable<typeof m> => m !== null);
    const withLanes = perNodePhase.filter((s) => s.laneStats.length >= 2);
    return {
      perNodePhase,
      fecMarginDecades: margins.length ? Math.min(...margins.map((m) => m.decades)) : null,
      maxLaneRatio: withLanes.length ? Math.max(...withLanes.map((s) => s.worstLaneRatio)) : null,
      loadedVsIdleRatio: loadedVsIdle(perNodePhase, this.phases),
      logRateVsTempSlope: slopes.length ? Math.max(...slopes) : null,
    };
  }
}

// How much worse the worst lane of the GPU-loaded soak is than the same lane with idle GPUs (the failing clone's signature).
export function loadedVsIdle(stats: readonly NodePhaseStats[], phases: readonly AnalysisPhase[]): number | null {
  const loaded = phases.filter((p) => p.kind === 'soak' && p.gpuLoad === true).at(-1)?.name;
  const idle = phases.filter((p) => p.kind === 'soak' && p.gpuLoad === false).at(-1)?.name;
  if (loaded === undefined || idle === undefined) return null;
  let best: number | null = null;
  for (const l of stats.filter((s) => s.phase === loaded)) {
    const i = stats.find((s) => s.phase === idle && s.node === l.node);
    if (!i || l.laneStats.length === 0) continue;
    const lane = l.worstLane ?? 0;
    const loadedRate = l.laneStats[lane]?.ratePerS ?? 0;
    const idleRate = Math.max(i.laneStats[lane]?.ratePerS ?? 0, 1 / i.seconds);
    const r = Math.max(loadedRate, 1 / l.seconds) / idleRate;
    best = best === null ? r : Math.max(best, r);
  }
  return best;
}
