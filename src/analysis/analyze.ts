// From the journal's per-node samples to the AnalysisRecord: per lane, per node, per phase statistics.
import { linearRegression, mean } from 'simple-statistics';
import type { NodePhaseStats, LaneStats, AnalysisRecord, FunctionDivergence } from '../domain/record.js';
import { PHY_COUNTERS, laneCounterName, phyIsEmpty, type NodeSample, type PhyCounterField, type PhyCounters } from '../domain/sample.js';
import { FEC_LIMIT_BER, SERIAL_RATE_BPS, berBounds, canonicalRail, type FunctionsRule, type ResetRule } from './counters.js';
import { ReceiverIntervals } from './intervals.js';
import { certainLaneRatio, rateLaneRatio } from './lane-ratio.js';
import type { BoundMethod } from './poisson.js';
import { EarlyStopDetector, type WatchSettings } from './early-stop.js';
import { TickStreakWatch, type TickStreakSettings } from './tick-watch.js';
import type { EarlyStopDecision, RunWatch } from './watch.js';

// One journal entry: a node's sample tagged with the phase it was taken in.
export interface LabelledSample {
  phase: string;
  sample: NodeSample;
  tS?: number; // seconds since the run started (the journal line's tS); else from the node's first sample
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
  watch?: WatchConfig; // the rules' watch: windows and floors, or version 1's tick streak (none: no windows, no early stop)
  variant?: AnalysisVariant;
}

// The watch a rules version runs: held sliding windows (version 2 on) or version 1's tick streak; graded phases and
// lanes come from the run.
export type WatchConfig = Omit<WatchSettings, 'gradedPhases' | 'lanes'> | Omit<TickStreakSettings, 'lanes'>;

// The watch of a config.
export function watchOf(config: WatchConfig, gradedPhases: ReadonlySet<string> | null, lanes: number | undefined): RunWatch {
  if ('kind' in config) return new TickStreakWatch({ ...config, ...(lanes ? { lanes } : {}) });
  return new EarlyStopDetector({ ...config, gradedPhases, ...(lanes ? { lanes } : {}) });
}

// Which variant of each summary figure a rules version computes (src/rules/versions.ts declares it per version):
// bounds: how Poisson bounds are computed; laneRatio: the certain ratio of counts, or version 1's rate ratio;
// summaryPhases: whether the run's worst margin and ratio are taken over the graded phases or every phase;
// tempSlope: the steepest lane's growth with temperature (lane bins), or one regression of the whole port's rate;
// counterResets: how an interval whose counters went down is read (src/analysis/counters.ts ResetRule; 'drop' when
// not said, as rules versions 1 and 2 did); functions: which PCIe function's counters a reading takes (FunctionsRule;
// 'first' when not said, as versions 1 to 3 did).
export interface AnalysisVariant {
  bounds: BoundMethod;
  laneRatio: 'certain' | 'rate';
  summaryPhases: 'graded' | 'all';
  tempSlope: 'lane-bins' | 'regression';
  counterResets?: ResetRule;
  functions?: FunctionsRule;
}

// Today's analysis (rules version 4 on): what the live figures (lane rates, metrics, timeseries.csv) follow too.
export const CURRENT_ANALYSIS: AnalysisVariant = {
  bounds: 'fast',
  laneRatio: 'certain',
  summaryPhases: 'graded',
  tempSlope: 'lane-bins',
  counterResets: 'from-zero',
  functions: 'larger',
};

// The reset rule of an analysis variant.
export const resetRuleOf = (v: Pick<AnalysisVariant, 'counterResets'>): ResetRule => v.counterResets ?? 'drop';

// The functions rule of an analysis variant.
export const functionsRuleOf = (v: Pick<AnalysisVariant, 'functions'>): FunctionsRule => v.functions ?? 'first';

// The phases error rates are graded on: the soaks (the procedure's long, loaded phases), or every phase without one.
export function gradedPhasesOf(phases: readonly AnalysisPhase[]): string[] | null {
  const soaks = phases.filter((p) => p.kind === 'soak').map((p) => p.name);
  return soaks.length ? soaks : null;
}

interface Acc {
  seconds: number;
  laneErrors: number[];
  correctedBits: number | null;
  postFecErrors: number;
  crcErrors: number;
  symbolErrors: number;
  linkDownEvents: number;
  recoveries: number | null; // null: no interval of the phase read total_success_recovery_phy
  counterResets: number;
  temps: number[];
  gpuUtil: number[];
  gpuTemps: number[];
  readings: Map<string, { min: number; max: number; sum: number; n: number }>;
}

const newAcc = (): Acc => ({
  seconds: 0,
  laneErrors: [],
  correctedBits: null,
  postFecErrors: 0,
  crcErrors: 0,
  symbolErrors: 0,
  linkDownEvents: 0,
  recoveries: null,
  counterResets: 0,
  temps: [],
  gpuUtil: [],
  gpuTemps: [],
  readings: new Map(),
});

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

function phaseStats(node: string, phase: string, a: Acc, lanes: number, v: AnalysisVariant): NodePhaseStats {
  const laneBits = a.seconds * (SERIAL_RATE_BPS / lanes);
  const laneStats: LaneStats[] = a.laneErrors.map((errors, lane) => {
    const b = berBounds(errors, laneBits, v.bounds);
    const x: LaneStats = { node, phase, lane, errors, seconds: a.seconds, ratePerS: errors / a.seconds, ber: b.ber, berUb95: b.ub95 };
    if (v.laneRatio === 'certain') x.berLb95 = b.lb95;
    return x;
  });
  const bits = a.seconds * SERIAL_RATE_BPS;
  const total = a.laneErrors.length > 0 ? a.laneErrors.reduce((x, y) => x + y, 0) : (a.correctedBits ?? 0);
  const all = berBounds(total, bits, v.bounds);
  return {
    node,
    phase,
    seconds: a.seconds,
    lanes,
    laneStats,
    correctedBits: a.correctedBits ?? 0,
    preFecBer: all.ber,
    preFecBerUb95: all.ub95,
    correctedBitsBerUb95: a.correctedBits === null ? null : berBounds(a.correctedBits, bits, v.bounds).ub95,
    postFecErrors: a.postFecErrors,
    crcErrors: a.crcErrors,
    symbolErrors: a.symbolErrors,
    linkDownEvents: a.linkDownEvents,
    // Only where the kernel exposes the counter, so records of journals without it are what they were.
    ...(a.recoveries !== null ? { recoveries: a.recoveries } : {}),
    counterResets: a.counterResets,
    ...worstLaneOf(a, laneStats, v),
    nicTempMaxC: a.temps.length ? maxOf(a.temps) : null,
    nicTempMeanC: a.temps.length ? mean(a.temps) : null,
    gpuUtilMeanPct: a.gpuUtil.length ? mean(a.gpuUtil) : null,
    gpuTempMaxC: a.gpuTemps.length ? maxOf(a.gpuTemps) : null,
    // The mean held within min..max: a running sum of equal values can land an ulp outside them (30.1 x n / n).
    ...(a.readings.size
      ? {
          readings: Object.fromEntries(
            [...a.readings].map(([id, r]) => [id, { min: r.min, mean: Math.min(r.max, Math.max(r.min, r.sum / r.n)), max: r.max, n: r.n }]),
          ),
        }
      : {}),
  };
}

// The worst lane of a node-phase and its ratio to the others, as the variant measures it.
function worstLaneOf(
  a: Acc,
  laneStats: readonly LaneStats[],
  v: AnalysisVariant,
): Pick<NodePhaseStats, 'worstLane' | 'worstLaneRatio' | 'ratioAgainstZero' | 'worstLaneBerLb95'> {
  if (v.laneRatio === 'rate') {
    const r = rateLaneRatio(
      laneStats.map((l) => l.ratePerS),
      1 / a.seconds,
    );
    return { worstLane: r.lane, worstLaneRatio: r.value };
  }
  const ratio = certainLaneRatio(a.laneErrors);
  return {
    worstLane: ratio?.lane ?? null,
    worstLaneRatio: ratio?.value ?? 0,
    ratioAgainstZero: ratio?.againstZero ?? false,
    worstLaneBerLb95: ratio ? laneStats[ratio.lane]!.berLb95! : 0,
  };
}

// Analyse a run: counter deltas with reset detection, per-lane BER with exact Poisson bounds, lane ratio, FEC margin,
// sliding windows and each lane's growth with temperature (samples may come unsorted; the early-stop watch sees them
// per node in time order, nodes one after the other). Grading feeds a RunAnalyzer as it reads the journal
// (src/grading/engine.ts); this is the same analysis over a list of samples, for the tests. @internal
export function analyzeRun(input: AnalysisInput): AnalysisRecord {
  const byNode = new Map<string, LabelledSample[]>();
  for (const s of input.samples) {
    const list = byNode.get(s.sample.node) ?? [];
    list.push(s);
    byNode.set(s.sample.node, list);
  }
  const analyzer = new RunAnalyzer(input.phases ?? [], input.watch, input.lanes, input.variant);
  for (const [node, list] of byNode) {
    list.sort((a, b) => a.sample.tMs - b.sample.tMs);
    const first = list.find((l) => l.sample.rails.length > 0);
    const netdev = first?.sample.rails[0]?.netdev;
    const lanes = list.map((l) => canonicalRail(l.sample, netdev)?.lanes).find((x) => x != null) ?? input.lanes ?? null;
    analyzer.node(node, netdev, lanes);
    for (const { phase, sample, tS } of list) analyzer.push(phase, sample, tS ?? (sample.tMs - list[0]!.sample.tMs) / 1000);
  }
  return analyzer.finish();
}

interface NodeAcc {
  lanes: number | null;
  accs: Map<string, Acc>;
  points: [number, number][]; // (NIC temperature, log10 errors/s) per interval of the soaks: the 'regression' slope
  functions: Map<string, FunctionCounts>; // 'larger': each function's counters as first and last read
}

// One PCIe function's counts over the run: its last reading of each counter and what it counted since its first
// (from zero after a counter went backwards, as today's analysis counts).
interface FunctionCounts {
  last: Map<string, bigint>;
  counted: Map<string, bigint>;
}

// The counters the grading reads (traffic counters move between the two functions' reads of one tick: not compared).
const GRADED: ReadonlySet<PhyCounterField> = new Set(['crcErrors', 'symbolErrors', 'linkDownEvents', 'pcsSymbolErrors', 'correctedBits']);

// A reading's graded counters by their ethtool names.
function gradedNames(phy: PhyCounters): [string, bigint][] {
  const out: [string, bigint][] = [];
  for (const [field, name] of PHY_COUNTERS) if (GRADED.has(field) && phy[field] !== undefined) out.push([name, phy[field]]);
  phy.laneErrors.forEach((v, i) => out.push([laneCounterName(i), v]));
  return out;
}

// Note one function's reading for the divergence the record states.
function noteFunction(all: Map<string, FunctionCounts>, netdev: string, phy: PhyCounters): void {
  if (phyIsEmpty(phy)) return;
  let f = all.get(netdev);
  if (!f) all.set(netdev, (f = { last: new Map(), counted: new Map() }));
  for (const [name, v] of gradedNames(phy)) {
    const before = f.last.get(name);
    f.counted.set(name, (f.counted.get(name) ?? 0n) + (before === undefined ? 0n : v >= before ? v - before : v));
    f.last.set(name, v);
  }
}

// The graded counters the functions of each node counted differently (only those every function read).
function divergenceOf(nodes: ReadonlyMap<string, NodeAcc>): FunctionDivergence[] {
  const out: FunctionDivergence[] = [];
  for (const [node, n] of nodes) {
    const fs = [...n.functions]; // in the sample's order: the canonical function first
    if (fs.length < 2) continue;
    for (const name of fs[0]![1].counted.keys()) {
      if (!fs.every(([, f]) => f.counted.has(name))) continue;
      const counts = fs.map(([netdev, f]) => ({ netdev, count: Number(f.counted.get(name)!) }));
      if (counts.some((c) => c.count !== counts[0]!.count)) out.push({ node, counter: name, counts });
    }
  }
  return out;
}

// The same analysis one sample at a time, so a long journal is never held whole: each node's samples must come
// in time order, after node() told its canonical netdev and lane count (analyzeRun does both for unsorted input).
export class RunAnalyzer {
  private readonly nodes = new Map<string, NodeAcc>();
  private readonly graded: string[] | null;
  private readonly soaks: Set<string>;
  // The early-stop watch runs inside the analysis, so a re-grade decides from the samples exactly as the run did.
  readonly detector: RunWatch | null;
  private readonly intervals: ReceiverIntervals;

  constructor(
    private readonly phases: readonly AnalysisPhase[],
    watch?: WatchConfig,
    lanes?: number,
    private readonly variant: AnalysisVariant = CURRENT_ANALYSIS,
  ) {
    this.graded = gradedPhasesOf(phases);
    this.soaks = new Set(phases.filter((p) => p.kind === 'soak').map((p) => p.name));
    this.detector = watch ? watchOf(watch, this.graded ? new Set(this.graded) : null, lanes) : null;
    this.intervals = new ReceiverIntervals({ resets: resetRuleOf(variant), functions: functionsRuleOf(variant) });
  }

  // The first certain FAIL the watch saw (what stops a live run), or null.
  get decision(): EarlyStopDecision | null {
    return this.detector?.decision ?? null;
  }

  node(node: string, netdev: string | undefined, lanes: number | null): void {
    this.nodes.set(node, { lanes, accs: new Map(), points: [], functions: new Map() });
    this.intervals.node(node, netdev, { fixed: lanes });
  }

  // tS: seconds since the run started (the journal line's tS), for when the watch decided.
  push(phase: string, sample: NodeSample, tS = 0): void {
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
    for (const id in sample.readings ?? {}) {
      const v = sample.readings![id];
      if (typeof v !== 'number' || !Number.isFinite(v)) continue;
      const r = acc.readings.get(id);
      if (!r) acc.readings.set(id, { min: v, max: v, sum: v, n: 1 });
      else {
        r.min = Math.min(r.min, v);
        r.max = Math.max(r.max, v);
        r.sum += v;
        r.n++;
      }
    }
    if (functionsRuleOf(this.variant) === 'larger' && sample.rails.length > 1) for (const r of sample.rails) noteFunction(n.functions, r.netdev, r.phy);
    const { rail, interval, reset } = this.intervals.push(sample);
    if (reset) acc.counterResets++;
    if (rail && interval) {
      const { d, dtS } = interval;
      acc.seconds += dtS;
      for (let i = 0; i < d.laneErrors.length; i++) acc.laneErrors[i] = (acc.laneErrors[i] ?? 0) + d.laneErrors[i]!;
      if (d.correctedBits !== null) acc.correctedBits = (acc.correctedBits ?? 0) + d.correctedBits;
      acc.postFecErrors += d.postFecErrors;
      acc.crcErrors += d.crcErrors;
      acc.symbolErrors += d.symbolErrors;
      acc.linkDownEvents += d.linkDownEvents;
      if (d.recoveries !== undefined) acc.recoveries = (acc.recoveries ?? 0) + d.recoveries;
      if (this.variant.tempSlope === 'regression' && sample.nicTempC !== null && (this.soaks.size === 0 || this.soaks.has(phase))) {
        const errs = d.laneErrors.length ? d.laneErrors.reduce((x, y) => x + y, 0) : (d.correctedBits ?? 0);
        if (errs > 0) n.points.push([sample.nicTempC, Math.log10(errs / dtS)]);
      }
    }
    // The watch takes the same interval (computed once; again only if it counts lanes differently).
    this.detector?.pushInterval(phase, sample, tS, interval);
  }

  finish(): AnalysisRecord {
    const phaseOrder = new Map(this.phases.map((p, i) => [p.name, i]));
    const perNodePhase: NodePhaseStats[] = [];
    for (const [node, n] of this.nodes) {
      const laneCount = n.lanes ?? Math.max(0, ...[...n.accs.values()].map((a) => a.laneErrors.length));
      for (const [phase, acc] of n.accs) {
        if (acc.seconds > 0) perNodePhase.push(phaseStats(node, phase, acc, laneCount || 4, this.variant));
      }
    }
    perNodePhase.sort(
      (a, b) => (phaseOrder.get(a.phase) ?? 1e9) - (phaseOrder.get(b.phase) ?? 1e9) || a.phase.localeCompare(b.phase) || a.node.localeCompare(b.node),
    );
    const summarised = this.graded && this.variant.summaryPhases === 'graded' ? perNodePhase.filter((s) => this.graded!.includes(s.phase)) : perNodePhase;
    const margins = summarised.map(fecMarginOf).filter((m): m is NonNullable<typeof m> => m !== null);
    const withLanes = summarised.filter((s) => s.laneStats.length >= 2);
    const kept = this.kept();
    const slopes =
      this.variant.tempSlope === 'regression' ? this.regressionSlopes() : (kept.laneTemp ?? []).filter((l) => l.hotErrors > 0).map((l) => l.slopeDecadesPerC);
    return {
      perNodePhase,
      fecMarginDecades: margins.length ? Math.min(...margins.map((m) => m.decades)) : null,
      maxLaneRatio: withLanes.length ? Math.max(...withLanes.map((s) => s.worstLaneRatio)) : null,
      loadedVsIdleRatio: loadedVsIdle(perNodePhase, this.phases),
      logRateVsTempSlope: slopes.length ? Math.max(...slopes) : null,
      ...(this.variant.summaryPhases === 'graded' ? { gradedPhases: this.graded ?? [...new Set(perNodePhase.map((s) => s.phase))] } : {}),
      ...kept,
      ...(functionsRuleOf(this.variant) === 'larger' ? { functionDivergence: divergenceOf(this.nodes) } : {}),
    };
  }

  // The windows and lane growth the watch kept (none without a watch; left out for one that keeps none).
  private kept(): Pick<AnalysisRecord, 'windows' | 'laneTemp'> {
    if (!this.detector) return { windows: [], laneTemp: [] };
    const windows = this.detector.windows();
    const laneTemp = this.detector.laneTemp();
    return { ...(windows ? { windows } : {}), ...(laneTemp ? { laneTemp } : {}) };
  }

  // Per node, the slope of log10 error rate against NIC temperature over the soaks (version 1's figure).
  private regressionSlopes(): number[] {
    const out: number[] = [];
    for (const n of this.nodes.values()) {
      if (n.points.length >= 3 && new Set(n.points.map((p) => p[0])).size >= 2) out.push(linearRegression(n.points).m);
    }
    return out;
  }
}

// How much worse the worst lane of the GPU-loaded soak is than the same lane with idle GPUs (the failing clone's signature).
function loadedVsIdle(stats: readonly NodePhaseStats[], phases: readonly AnalysisPhase[]): number | null {
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
