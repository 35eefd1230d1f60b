// A run's series for its page (/api/runs/<id>/series), read from its journal through the project's one way of turning
// readings into intervals (TimeseriesBuilder, which takes each receiver's intervals from src/analysis/intervals.ts): per-lane pre-FEC
// errors/s converted to BER with the lane rate, NIC temperature, the running 95% upper bound of each lane over the
// headline phase, throughput per rail and direction, phases and the decision. A journal is read once and then only
// its new lines (a running run's grows), and every series is downsampled here to at most MAX_POINTS points, each
// the maximum of its time bucket so a burst stays visible; the last reading is always kept as it is.
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { FEC_LIMIT_BER, SERIAL_RATE_BPS, berBounds } from '../analysis/counters.js';
import { certainLaneRatio } from '../analysis/lane-ratio.js';
import { journalLineProblem } from '../run/journal-shape.js';
import type { JournalLine } from '../run/journal.js';
import { TimeseriesBuilder, type LanePoint, type RailThroughputPoint } from '../run/journal-series.js';
import { ruleOf } from '../rules/versions.js';

// At most this many points per series, whatever the run's length.
export const MAX_POINTS = 2000;
// The phase a certificate's headline states (record.headline.phase): the GPU-loaded soak.
export const HEADLINE_PHASE = 'soak-loaded';
// A lane is the outlier when, over the last OUTLIER_WINDOW_S, its certain ratio to the others reaches the lane-ratio
// rule's MARGINAL line (the same counts-based ratio the rule grades: worst lane's lower bound over the others' median
// upper bound).
export const OUTLIER_WINDOW_S = 60;
const CHUNK = 256 * 1024; // bytes of journal read between two turns of the event loop

// One receiver's chart: x (seconds since the run started), each lane's BER, NIC temperature, and the worst lane's
// running 95% upper bound over the headline phase (its last value is the certificate's "each below ...").
export interface ReceiverSeries {
  node: string;
  lanes: number;
  laneRateBps: number;
  rawPoints: number;
  t: number[];
  laneBer: (number | null)[][];
  nicTempC: (number | null)[];
  soakBoundBer: (number | null)[];
  soakBound: { lane: number; errors: number; seconds: number; ub95: number }[]; // at the last reading, per lane
  outlier: { lane: number; ratio: number; windowS: number; againstZero: boolean } | null;
}

// Everything a run page's charts draw (the /api/runs/<id>/series answer).
export interface RunSeries {
  runId: string;
  untilS: number; // the last reading's time: a live page asks for what comes after it
  ended: boolean; // the journal has its run-end line
  maxPoints: number;
  phases: { name: string; startS: number; endS: number | null }[];
  decision: { atS: number; outcome: string; rule: string | null; node: string | null; lane: number | null } | null;
  headlinePhase: string;
  limits: { fecLimitBer: number; failBer: number; marginalBer: number; failDecades: number; marginalDecades: number };
  receivers: ReceiverSeries[];
  throughput: { t: number[]; series: { label: string; rail: number; direction: string | null; gbps: (number | null)[] }[] };
}

// What has been read of one journal so far.
class JournalTail {
  offset = 0;
  ino = -1;
  readonly builder = new TimeseriesBuilder();
  readonly phases: RunSeries['phases'] = [];
  decision: RunSeries['decision'] = null;
  ended = false;
  lanes = new Map<string, number>();
  fecMargin = { fail: 1, marginal: 2 };
  ratioMarginal = 100;
  badLines = 0;

  constructor(readonly path: string) {
    const r = ruleOf('fec-margin');
    if (r?.fail !== undefined) this.fecMargin = { fail: r.fail, marginal: r.marginal ?? r.fail };
    this.ratioMarginal = ruleOf('lane-ratio')?.marginal ?? this.ratioMarginal;
  }

  private reading: Promise<void> | null = null;

  // Read the lines written since the last call (a torn last line waits for its end), a chunk at a time with the event
  // loop let go between chunks, so that a long journal read for the first time does not hold up other requests.
  // Calls while a read is under way wait for it.
  catchUp(): Promise<void> {
    this.reading ??= this.read().finally(() => (this.reading = null));
    return this.reading;
  }

  private async read(): Promise<void> {
    const fd = openSync(this.path, 'r');
    try {
      const st = fstatSync(fd);
      if (st.ino !== this.ino || st.size < this.offset) {
        if (this.ino !== -1) throw new JournalReplaced(this.path);
        this.ino = st.ino;
      }
      const buf = Buffer.allocUnsafe(CHUNK);
      let carry = Buffer.alloc(0);
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, this.offset + carry.length);
        if (n <= 0) break;
        const chunk = carry.length ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
        const last = chunk.lastIndexOf(10);
        if (last < 0) {
          carry = Buffer.from(chunk);
          continue;
        }
        for (const text of chunk.subarray(0, last).toString('utf8').split('\n')) this.line(text);
        this.offset += last + 1;
        carry = Buffer.from(chunk.subarray(last + 1));
        await new Promise<void>((done) => setImmediate(done));
      }
    } finally {
      closeSync(fd);
    }
  }

  private line(text: string): void {
    if (!text) return;
    let l: JournalLine;
    try {
      l = JSON.parse(text) as JournalLine;
    } catch {
      this.badLines++;
      return;
    }
    // Untrusted: a line without the fields read here is left out, as grade leaves it out.
    if (!l || typeof l !== 'object' || typeof l.type !== 'string' || journalLineProblem(l)) {
      this.badLines++;
      return;
    }
    this.builder.add(l);
    if (l.type === 'run-start') this.protocolLimits(l['protocolText']);
    else if (l.type === 'phase-start') this.phases.push({ name: String(l['phase']), startS: Number(l.tS), endS: null });
    else if (l.type === 'phase-end') {
      const p = [...this.phases].reverse().find((x) => x.name === String(l['phase']) && x.endS === null);
      if (p) p.endS = Number(l.tS);
    } else if (l.type === 'decision') {
      const r = (l['reason'] ?? {}) as Record<string, unknown>;
      this.decision = {
        atS: typeof r['atS'] === 'number' ? r['atS'] : Number(l.tS),
        outcome: String(l['outcome']),
        rule: typeof r['rule'] === 'string' ? r['rule'] : null,
        node: typeof r['node'] === 'string' ? r['node'] : null,
        lane: typeof r['lane'] === 'number' ? r['lane'] : null,
      };
    } else if (l.type === 'node-info') {
      const lanes = (l['record'] as { lanes?: unknown } | undefined)?.lanes;
      if (typeof lanes === 'number' && lanes > 0) this.lanes.set(String(l['node']), lanes);
    } else if (l.type === 'run-end') this.ended = true;
  }

  // The protocol's fec-margin limits (its text is in run-start), for the chart's FAIL and MARGINAL lines.
  private protocolLimits(text: unknown): void {
    try {
      const limits = (JSON.parse(String(text)) as { limits?: { rule?: string; fail?: number; marginal?: number }[] }).limits;
      const m = limits?.find((x) => x.rule === 'fec-margin');
      if (typeof m?.fail === 'number') this.fecMargin = { fail: m.fail, marginal: typeof m.marginal === 'number' ? m.marginal : m.fail };
      const ratio = limits?.find((x) => x.rule === 'lane-ratio');
      if (typeof ratio?.marginal === 'number') this.ratioMarginal = ratio.marginal;
    } catch {
      // no readable protocol: the registry's defaults stay
    }
  }
}

// The journal was replaced or cut shorter since it was read (a re-run into the same directory): read it again.
class JournalReplaced extends Error {}

// Journals read so far, by path (at most `max`, the least recently used dropped first).
export class SeriesCache {
  private readonly tails = new Map<string, JournalTail>();
  constructor(private readonly max = 16) {}

  // The series of the journal at `path` as it is now (reading only what was added since the last call).
  async series(runId: string, path: string, o: { maxPoints?: number; headlinePhase?: string } = {}): Promise<RunSeries> {
    let tail = this.tails.get(path) ?? new JournalTail(path);
    this.tails.set(path, tail);
    try {
      await tail.catchUp();
    } catch (e) {
      if (!(e instanceof JournalReplaced)) throw e;
      tail = new JournalTail(path);
      this.tails.set(path, tail);
      await tail.catchUp();
    }
    this.tails.delete(path);
    this.tails.set(path, tail);
    while (this.tails.size > this.max) this.tails.delete(this.tails.keys().next().value!);
    return seriesOf(runId, tail, o.maxPoints ?? MAX_POINTS, o.headlinePhase ?? HEADLINE_PHASE);
  }

  // Whether a journal is there to read.
  static exists(path: string): boolean {
    return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  }
}

function seriesOf(runId: string, tail: JournalTail, maxPoints: number, headlinePhase: string): RunSeries {
  const points = tail.builder.points;
  const nodes = [...new Set(points.map((p) => p.node))];
  const untilS = points.length ? points[points.length - 1]!.tS : 0;
  const tMax = Math.max(untilS, ...tail.builder.throughput.map((p) => p.tS));
  const { fail, marginal } = tail.fecMargin;
  return {
    runId,
    untilS,
    ended: tail.ended,
    maxPoints,
    phases: tail.phases.map((p) => ({ ...p })),
    decision: tail.decision,
    headlinePhase,
    limits: {
      fecLimitBer: FEC_LIMIT_BER,
      failBer: FEC_LIMIT_BER / 10 ** fail,
      marginalBer: FEC_LIMIT_BER / 10 ** marginal,
      failDecades: fail,
      marginalDecades: marginal,
    },
    receivers: nodes.map((node) =>
      receiverSeries(
        node,
        points.filter((p) => p.node === node),
        tail.lanes.get(node) ?? null,
        headlinePhase,
        tMax,
        maxPoints,
        tail.ratioMarginal,
      ),
    ),
    throughput: throughputSeries(tail.builder.throughput, tMax, maxPoints),
  };
}

function receiverSeries(
  node: string,
  pts: LanePoint[],
  lanesKnown: number | null,
  headlinePhase: string,
  tMax: number,
  maxPoints: number,
  ratioMarginal: number,
): ReceiverSeries {
  const lanes = lanesKnown ?? Math.max(0, ...pts.map((p) => p.laneRates.length));
  const laneRateBps = lanes > 0 ? SERIAL_RATE_BPS / lanes : SERIAL_RATE_BPS;
  // The running bound of each lane over the headline phase: errors counted (rate x interval) over the bits sent so far.
  const errors = new Array<number>(lanes).fill(0);
  let seconds = 0;
  const rows = pts.map((p) => {
    let bound: number | null = null;
    if (p.phase === headlinePhase && p.dtS !== undefined) {
      seconds += p.dtS;
      p.laneRates.forEach((r, i) => {
        if (i < lanes) errors[i]! += Math.round(r * p.dtS!);
      });
      bound = Math.max(...errors.map((e) => berBounds(e, seconds * laneRateBps).ub95));
    }
    return { tS: p.tS, values: [...[...Array(lanes).keys()].map((i) => (p.laneRates[i] ?? 0) / laneRateBps), p.nicTempC, bound] };
  });
  const down = bucketRows(rows, tMax, maxPoints);
  // What a chart can show: BER to 4 significant digits, temperatures to 0.1 °C, times to 1 ms (the bound stays exact).
  const sig = (v: number | null) => (v === null ? null : Number(v.toPrecision(4)));
  const tenth = (v: number | null) => (v === null ? null : Math.round(v * 10) / 10);
  return {
    node,
    lanes,
    laneRateBps,
    rawPoints: pts.length,
    t: down.t.map((t) => Math.round(t * 1000) / 1000),
    // A lane with no error in an interval has no point on a log axis: null, drawn as a gap.
    laneBer: [...Array(lanes).keys()].map((i) => down.columns[i]!.map((v) => (v !== null && v > 0 ? sig(v) : null))),
    nicTempC: down.columns[lanes]!.map(tenth),
    soakBoundBer: down.columns[lanes + 1]!.map((v, i, all) => (i === all.length - 1 || v === null ? v : Number(v.toPrecision(6)))),
    soakBound: seconds > 0 ? errors.map((e, lane) => ({ lane, errors: e, seconds, ub95: berBounds(e, seconds * laneRateBps).ub95 })) : [],
    outlier: outlierOf(pts, lanes, ratioMarginal),
  };
}

// The lane far above the others over the receiver's last OUTLIER_WINDOW_S (errors counted from the intervals).
function outlierOf(pts: LanePoint[], lanes: number, ratioMarginal: number): ReceiverSeries['outlier'] {
  const end = pts.length ? pts[pts.length - 1]!.tS : 0;
  const counts = new Array<number>(lanes).fill(0);
  for (let i = pts.length - 1; i >= 0 && pts[i]!.tS > end - OUTLIER_WINDOW_S; i--) {
    const p = pts[i]!;
    p.laneRates.forEach((r, k) => {
      if (k < lanes) counts[k]! += Math.round(r * (p.dtS ?? 0));
    });
  }
  const ratio = certainLaneRatio(counts);
  return ratio && ratio.value >= ratioMarginal ? { lane: ratio.lane, ratio: ratio.value, windowS: OUTLIER_WINDOW_S, againstZero: ratio.againstZero } : null;
}

function throughputSeries(points: RailThroughputPoint[], tMax: number, maxPoints: number): RunSeries['throughput'] {
  const keys = [...new Set(points.map((p) => `${p.rail}\u0000${p.direction ?? ''}`))].sort();
  const sorted = [...points].sort((a, b) => a.tS - b.tS);
  // One column per rail and direction on a shared time axis: a point of one series is null in the others.
  const rows = sorted.map((p) => {
    const k = keys.indexOf(`${p.rail}\u0000${p.direction ?? ''}`);
    return { tS: p.tS, values: keys.map((_, i) => (i === k ? p.gbps : null)) };
  });
  const down = bucketRows(rows, tMax, maxPoints);
  return {
    t: down.t.map((t) => Math.round(t * 1000) / 1000),
    series: keys.map((k, i) => {
      const [rail, direction] = k.split('\u0000') as [string, string];
      return {
        label: `rail ${rail} ${direction ? direction.replace('->', ' → ') : '(both directions, halved)'}`,
        rail: Number(rail),
        direction: direction || null,
        gbps: down.columns[i]!,
      };
    }),
  };
}

// At most maxPoints rows: rows in the same time bucket become one, at the bucket's first time, holding each column's
// maximum (null when the column had no value there). The last row is kept as it is, so the chart ends on the last
// reading. Fewer rows than maxPoints pass unchanged.
export function bucketRows(rows: { tS: number; values: (number | null)[] }[], tMax: number, maxPoints: number): { t: number[]; columns: (number | null)[][] } {
  const width = rows[0]?.values.length ?? 0;
  const t: number[] = [];
  const columns: (number | null)[][] = [...Array(width).keys()].map(() => []);
  const emit = (tS: number, values: (number | null)[]) => {
    t.push(tS);
    values.forEach((v, i) => columns[i]!.push(v));
  };
  if (rows.length <= maxPoints) {
    for (const r of rows) emit(r.tS, r.values);
    return { t, columns };
  }
  const bucketS = (tMax || 1) / Math.max(1, maxPoints - 2); // maxPoints - 1 buckets, and the last row
  let bucket = -1;
  let acc: (number | null)[] = [];
  let accT = 0;
  for (const r of rows.slice(0, -1)) {
    const b = Math.floor(r.tS / bucketS);
    if (b !== bucket) {
      if (bucket >= 0) emit(accT, acc);
      bucket = b;
      accT = r.tS;
      acc = [...r.values];
      continue;
    }
    r.values.forEach((v, i) => {
      if (v !== null && (acc[i] === null || v > acc[i]!)) acc[i] = v;
    });
  }
  if (bucket >= 0) emit(accT, acc);
  const last = rows[rows.length - 1]!;
  emit(last.tS, last.values);
  return { t, columns };
}
