import { canonicalRail, laneRatesOf, nextReading, type RailReading } from '../analysis/counters.js';
import type { JournalContents, JournalLine } from './journal.js';
import { reviveSample } from './revive.js';
import { screenJournal } from './journal-shape.js';

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

// Per-lane error rates between consecutive samples of each node, by the analysis's intervals (nextReading: a counter
// going backwards is a reset and gives no point), and the ib_write_bw rows of the benchmark and the soaks, spread over
// the time they cover. Fed one screened journal line at a time, so that a journal still being written (the dashboard's
// live run page) is read once, line by line, as it grows.
export class TimeseriesBuilder {
  readonly points: LanePoint[] = [];
  readonly throughput: RailThroughputPoint[] = [];
  private readonly readings = new Map<string, RailReading>();
  private phaseStart = 0;

  // One line that screenJournal (or journalLineProblem) let through.
  add(l: JournalLine): void {
    if (l.type === 'sample') this.sample(l);
    else if (l.type === 'phase-start') this.phaseStart = Number(l.tS);
    else if (l.type === 'benchmark' && l.kind === 'ib_write_bw' && Array.isArray(l.rows))
      this.spread(this.phaseStart, Number(l.tS), l.rows as { rail: number; gbps: number[] }[], l.bidirectional ? 2 : 1);
    else if (l.type === 'throughput' && Array.isArray(l.rails))
      this.spread(Number(l.startS), Number(l.tS), l.rails as { rail: number; gbps: number[] }[], l.bidirectional ? 2 : 1);
  }

  private sample(l: JournalLine): void {
    const s = reviveSample(l.sample);
    const read = canonicalRail(s);
    if (!read) return;
    const { reading, interval } = nextReading(this.readings.get(s.node) ?? null, read, s.tMs, null);
    this.readings.set(s.node, reading);
    if (!interval || interval === 'reset') return;
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
  // both directions added up and halved here.
  private spread(fromS: number, toS: number, rails: { rail: number; gbps: number[]; from?: string; to?: string }[], bidirectionalSums: number): void {
    for (const r of rails) {
      const n = r.gbps.length;
      const divide = r.from === undefined ? bidirectionalSums : 1;
      const direction = r.from !== undefined ? { direction: `${r.from}->${r.to}` } : {};
      r.gbps.forEach((g, i) => this.throughput.push({ rail: r.rail, tS: fromS + ((i + 1) * (toS - fromS)) / n, gbps: g / divide, ...direction }));
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
