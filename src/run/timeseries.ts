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
}

export interface RailThroughputPoint {
  rail: number;
  tS: number;
  gbps: number;
  direction?: string; // "<sender>-><receiver>" for runs with one stream per direction; absent for -b sums halved
}

// Per-lane error rates between consecutive samples of each node, by the analysis's intervals (nextReading: a counter
// going backwards is a reset and gives no point),
// and the ib_write_bw rows of the benchmark and the soaks, spread over the time they cover.
export function buildTimeseries(journal: JournalContents): { points: LanePoint[]; throughput: RailThroughputPoint[] } {
  const contents = screenJournal(journal); // untrusted: lines without the fields read here are left out
  const points: LanePoint[] = [];
  const readings = new Map<string, RailReading>();
  for (const l of contents.lines) {
    if (l.type !== 'sample') continue;
    const s = reviveSample(l.sample);
    const read = canonicalRail(s);
    if (!read) continue;
    const { reading, interval } = nextReading(readings.get(s.node) ?? null, read, s.tMs, null);
    readings.set(s.node, reading);
    if (!interval || interval === 'reset') continue;
    const point: LanePoint = { node: s.node, tS: Number(l.tS), phase: String(l.phase), laneRates: laneRatesOf(interval), nicTempC: s.nicTempC };
    if (s.readings && typeof s.readings === 'object') point.readings = s.readings;
    points.push(point);
  }
  const throughput: RailThroughputPoint[] = [];
  // Rows of one stream per direction (they name their sender) are per direction as they are; older runs' -b rows are
  // both directions added up and halved here.
  const spread = (
    line: JournalLine,
    fromS: number,
    toS: number,
    rails: { rail: number; gbps: number[]; from?: string; to?: string }[],
    bidirectionalSums: number,
  ) => {
    for (const r of rails) {
      const n = r.gbps.length;
      const divide = r.from === undefined ? bidirectionalSums : 1;
      const direction = r.from !== undefined ? { direction: `${r.from}->${r.to}` } : {};
      r.gbps.forEach((g, i) => throughput.push({ rail: r.rail, tS: fromS + ((i + 1) * (toS - fromS)) / n, gbps: g / divide, ...direction }));
    }
    void line;
  };
  let phaseStart = 0;
  for (const l of contents.lines) {
    if (l.type === 'phase-start') phaseStart = Number(l.tS);
    if (l.type === 'benchmark' && l.kind === 'ib_write_bw' && Array.isArray(l.rows)) {
      spread(l, phaseStart, Number(l.tS), l.rows as { rail: number; gbps: number[] }[], l.bidirectional ? 2 : 1);
    }
    if (l.type === 'throughput' && Array.isArray(l.rails)) {
      spread(l, Number(l.startS), Number(l.tS), l.rails as { rail: number; gbps: number[] }[], l.bidirectional ? 2 : 1);
    }
  }
  throughput.sort((a, b) => a.tS - b.tS || a.rail - b.rail);
  return { points, throughput };
}
