import { laneRatesOf } from '../analysis/counters.js';
import { CURRENT_ANALYSIS, functionsRuleOf, resetRuleOf } from '../analysis/analyze.js';
import { ReceiverIntervals } from '../analysis/intervals.js';
import type { JournalContents, JournalLine } from './journal.js';
import { decodeSample } from './sample-codec.js';
import { screenJournal } from './journal-shape.js';
import { LOAD_LINES, applyLoadLine, type SoakLoadEvidence } from '../grading/soak-evidence.js';

// Series for the charts and timeseries.csv (the report writers' RunTimeseries shape), derived from the journal.
export interface LanePoint {
  node: string;
  tS: number;
  phase: string;
  laneRates: number[];
  nicTempC: number | null;
  readings?: Record<string, number | null>; // registered extra readings taken at that tick
  dtS?: number; // node-time seconds the rates are over (laneRates x dtS: the errors counted in the interval)
}

export interface RailThroughputPoint {
  rail: number;
  tS: number;
  gbps: number;
  direction?: string; // "<sender>-><receiver>" for runs with one stream per direction; absent for -b sums halved
}

// Per-lane error rates between consecutive samples of each node, by today's analysis's intervals (src/analysis/intervals.ts: a
// counter going backwards was cleared and counts from zero), and the ib_write_bw rows of the benchmark and the soaks, spread over
// the time they cover (a soak's rows as each read found them, where the journal has them: a soak cut short keeps its
// rows too). Fed one screened journal line at a time, so that a journal still being written (the dashboard's live run
// page) is read once, line by line, as it grows.
export class TimeseriesBuilder {
  readonly points: LanePoint[] = [];
  readonly throughput: RailThroughputPoint[] = [];
  // Today's intervals (its reset rule and PCIe functions), every lane counter there is.
  private readonly intervals = new ReceiverIntervals({ resets: resetRuleOf(CURRENT_ANALYSIS), functions: functionsRuleOf(CURRENT_ANALYSIS) });
  private phaseStart = 0;
  private readonly soaks = new Map<string, SoakLoadEvidence>();
  private readonly lastReadS = new Map<string, number>(); // soak phase -> when its rows were last read

  // One line that screenJournal (or journalLineProblem) let through.
  add(l: JournalLine): void {
    if (l.type === 'sample') this.sample(l);
    else if (l.type === 'phase-start') this.phaseStart = Number(l.tS);
    else if (l.type === 'benchmark' && l.kind === 'ib_write_bw' && Array.isArray(l.rows))
      this.spread(this.phaseStart, Number(l.tS), l.rows as { rail: number; gbps: number[] }[], l.bidirectional ? 2 : 1);
    else if (l.type === 'throughput' && Array.isArray(l.rails) && !this.lastReadS.has(String(l['phase'])))
      this.spread(Number(l.startS), Number(l.tS), l.rails as { rail: number; gbps: number[] }[], l.bidirectional ? 2 : 1);
    else if (Object.values(LOAD_LINES).includes(l.type as never)) this.loadLine(l);
  }

  // A soak's load line: each read of the clients' rows is spread from the read before it (or the load's start).
  private loadLine(l: JournalLine): void {
    applyLoadLine(this.soaks, l);
    const phase = String(l['phase']);
    const e = this.soaks.get(phase);
    if (l.type !== LOAD_LINES.rows || !e || !e.reads.length) return;
    const read = e.reads.at(-1)!;
    const fromS = this.lastReadS.get(phase) ?? e.linkStartS;
    if (fromS !== null) this.spread(fromS, read.tS, read.streams, 1);
    this.lastReadS.set(phase, read.tS);
  }

  private sample(l: JournalLine): void {
    const s = decodeSample(l.sample);
    const { interval } = this.intervals.push(s);
    if (!interval) return;
    const point: LanePoint = {
      node: s.node,
      tS: Number(l.tS),
      phase: String(l.phase),
      laneRates: laneRatesOf(interval),
      nicTempC: s.nicTempC,
      dtS: interval.dtS,
    };
    if (s.readings && typeof s.readings === 'object') point.readings = s.readings;
    this.points.push(point);
  }

  // Rows of one stream per direction (they name their sender) are per direction as they are; older runs' -b rows are
  // both directions added up and halved here. A stream that ran alone (the one-way benchmark) names its own time span.
  private spread(
    fromS: number,
    toS: number,
    rails: { rail: number; gbps: number[]; from?: string; to?: string; startS?: unknown; endS?: unknown }[],
    bidirectionalSums: number,
  ): void {
    for (const r of rails) {
      const n = r.gbps.length;
      const divide = r.from === undefined ? bidirectionalSums : 1;
      const direction = r.from !== undefined ? { direction: `${r.from}->${r.to}` } : {};
      const timed = typeof r.startS === 'number' && typeof r.endS === 'number' && r.endS >= r.startS;
      const [from, to] = timed ? [r.startS as number, r.endS as number] : [fromS, toS];
      r.gbps.forEach((g, i) => this.throughput.push({ rail: r.rail, tS: from + ((i + 1) * (to - from)) / n, gbps: g / divide, ...direction }));
    }
  }
}

// The series of a whole journal (the certificate's charts, timeseries.csv, throughput.csv).
export function buildTimeseries(journal: JournalContents): { points: LanePoint[]; throughput: RailThroughputPoint[] } {
  const b = new TimeseriesBuilder();
  for (const l of screenJournal(journal).lines) b.add(l); // untrusted: lines without the fields read here are left out
  const throughput = [...b.throughput].sort((a, c) => a.tS - c.tS || a.rail - c.rail);
  return { points: b.points, throughput };
}
