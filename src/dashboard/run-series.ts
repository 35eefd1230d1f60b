// A run's series for its page (/api/runs/<id>/series), read from its journal through the project's one way of turning
// readings into intervals (TimeseriesBuilder, which takes each receiver's intervals from src/analysis/intervals.ts): per-lane pre-FEC
// errors/s converted to BER with the lane rate, NIC temperature, the running 95% upper bound of each lane over the
// headline phase, throughput per rail and direction, phases and the decision. A journal is read once and then only
// its new lines (a running run's grows), each interval made its chart row as it is read (series-rows.ts), and every
// series is downsampled here to at most MAX_POINTS points, each the maximum of its time bucket so a burst stays
// visible; the last reading is always kept as it is. A journal is a regular file of at most the journal bound
// (io/read-input.ts: a FIFO is never opened for reading, which would block every request), its lines at most
// MAX_JOURNAL_LINE long, read a chunk per turn of the event loop.
import { closeSync, fstatSync, readSync, statSync } from 'node:fs';
import { FEC_LIMIT_BER } from '../analysis/counters.js';
import { openInput } from '../io/read-input.js';
import { journalLineProblem } from '../run/journal-shape.js';
import { MAX_JOURNAL_LINE, type JournalLine } from '../run/journal.js';
import { TimeseriesBuilder, type RailThroughputPoint } from '../run/journal-series.js';
import { ruleOf } from '../rules/versions.js';
import { ReceiverRows } from './series-rows.js';

// At most this many points per series, whatever the run's length.
export const MAX_POINTS = 2000;
// The phase a certificate's headline states (record.headline.phase): the GPU-loaded soak.
export const HEADLINE_PHASE = 'soak-loaded';
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
  readonly receivers = new Map<string, ReceiverRows>();
  untilS = 0; // the last interval's time
  readonly throughput: RailThroughputPoint[] = []; // the builder's throughput points, in time order
  skipping = false; // inside a line longer than MAX_JOURNAL_LINE: dropped up to its newline
  // The last answer and the offset and options it was made at: an unchanged journal is not downsampled again.
  made: { key: string; series: RunSeries } | null = null;
  readonly phases: RunSeries['phases'] = [];
  decision: RunSeries['decision'] = null;
  ended = false;
  lanes = new Map<string, number>();
  fecMargin = { fail: 1, marginal: 2 };
  ratioMarginal = 100;
  badLines = 0;

  constructor(
    readonly path: string,
    readonly headlinePhase: string,
  ) {
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
    const { fd } = openInput(this.path, 'journal');
    try {
      const st = fstatSync(fd);
      if (st.ino !== this.ino || st.size < this.offset) {
        if (this.ino !== -1) throw new JournalReplaced(this.path);
        this.ino = st.ino;
      }
      const buf = Buffer.allocUnsafe(CHUNK);
      // The start of a line not ended yet, in the chunks it came in (joined once, when its end comes).
      let parts: Buffer[] = [];
      let held = 0;
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, this.offset + held);
        if (n <= 0) break;
        const fresh = buf.subarray(0, n);
        const last = fresh.lastIndexOf(10);
        if (last < 0) {
          // No line ends in it: held until one does, up to MAX_JOURNAL_LINE; a longer line is one bad line, dropped.
          if (held + n > MAX_JOURNAL_LINE) {
            if (!this.skipping) this.badLines++;
            this.skipping = true;
            this.offset += held + n;
            parts = [];
            held = 0;
          } else {
            parts.push(Buffer.from(fresh));
            held += n;
          }
          await new Promise<void>((done) => setImmediate(done));
          continue;
        }
        const whole = parts.length ? Buffer.concat([...parts, fresh.subarray(0, last)]) : fresh.subarray(0, last);
        const text = whole.toString('utf8').split('\n');
        if (this.skipping) {
          text.shift(); // the end of the long line
          this.skipping = false;
        }
        for (const line of text) this.line(line);
        this.rowsOfNewPoints();
        this.offset += held + last + 1;
        parts = last + 1 < n ? [Buffer.from(fresh.subarray(last + 1))] : [];
        held = n - last - 1;
        await new Promise<void>((done) => setImmediate(done));
      }
    } finally {
      closeSync(fd);
    }
  }

  // The builder's new intervals become their receivers' rows, and are let go.
  private rowsOfNewPoints(): void {
    const points = this.builder.points;
    for (const p of points) {
      let r = this.receivers.get(p.node);
      if (!r) this.receivers.set(p.node, (r = new ReceiverRows(p.node, this.headlinePhase)));
      r.add(p, this.lanes.get(p.node) ?? null);
      this.untilS = p.tS;
    }
    points.length = 0;
    // In time order as they come (a benchmark's rows are spread back over its phase: placed among the ones before).
    for (const p of this.builder.throughput) {
      let i = this.throughput.length;
      while (i > 0 && this.throughput[i - 1]!.tS > p.tS) i--;
      this.throughput.splice(i, 0, p);
    }
    this.builder.throughput.length = 0;
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

// Journals read so far, by path and headline phase (at most `max`, the least recently used dropped first).
export class SeriesCache {
  private readonly tails = new Map<string, JournalTail>();
  constructor(private readonly max = 16) {}

  // The series of the journal at `path` as it is now (reading only what was added since the last call).
  async series(runId: string, path: string, o: { maxPoints?: number; headlinePhase?: string } = {}): Promise<RunSeries> {
    const headlinePhase = o.headlinePhase ?? HEADLINE_PHASE;
    const key = `${path}\u0000${headlinePhase}`;
    let tail = this.tails.get(key) ?? new JournalTail(path, headlinePhase);
    this.tails.set(key, tail);
    try {
      await tail.catchUp();
    } catch (e) {
      if (!(e instanceof JournalReplaced)) throw e;
      tail = new JournalTail(path, headlinePhase);
      this.tails.set(key, tail);
      await tail.catchUp();
    }
    this.tails.delete(key);
    this.tails.set(key, tail);
    while (this.tails.size > this.max) this.tails.delete(this.tails.keys().next().value!);
    const made = `${tail.offset}\u0000${runId}\u0000${o.maxPoints ?? MAX_POINTS}`;
    if (tail.made?.key !== made) tail.made = { key: made, series: seriesOf(runId, tail, o.maxPoints ?? MAX_POINTS) };
    return tail.made.series;
  }

  // Whether a journal is there to read.
  static exists(path: string): boolean {
    return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  }
}

function seriesOf(runId: string, tail: JournalTail, maxPoints: number): RunSeries {
  const untilS = tail.untilS;
  let tMax = untilS;
  for (const p of tail.throughput) if (p.tS > tMax) tMax = p.tS;
  const { fail, marginal } = tail.fecMargin;
  return {
    runId,
    untilS,
    ended: tail.ended,
    maxPoints,
    phases: tail.phases.map((p) => ({ ...p })),
    decision: tail.decision,
    headlinePhase: tail.headlinePhase,
    limits: {
      fecLimitBer: FEC_LIMIT_BER,
      failBer: FEC_LIMIT_BER / 10 ** fail,
      marginalBer: FEC_LIMIT_BER / 10 ** marginal,
      failDecades: fail,
      marginalDecades: marginal,
    },
    receivers: [...tail.receivers.values()].map((r) => receiverSeries(r, tMax, maxPoints, tail.ratioMarginal)),
    throughput: throughputSeries(tail.throughput, tMax, maxPoints),
  };
}

function receiverSeries(r: ReceiverRows, tMax: number, maxPoints: number, ratioMarginal: number): ReceiverSeries {
  const lanes = Math.max(0, r.lanes);
  const down = bucketRows(r.rows(), tMax, maxPoints);
  // What a chart can show: BER to 4 significant digits, temperatures to 0.1 °C, times to 1 ms (the bound stays exact).
  const sig = (v: number | null) => (v === null ? null : Number(v.toPrecision(4)));
  const tenth = (v: number | null) => (v === null ? null : Math.round(v * 10) / 10);
  return {
    node: r.node,
    lanes,
    laneRateBps: r.laneRateBps,
    rawPoints: r.rawRows,
    t: down.t.map((t) => Math.round(t * 1000) / 1000),
    // A lane with no error in an interval has no point on a log axis: null, drawn as a gap.
    laneBer: [...Array(lanes).keys()].map((i) => down.columns[i]!.map((v) => (v !== null && v > 0 ? sig(v) : null))),
    nicTempC: down.columns[lanes]!.map(tenth),
    soakBoundBer: down.columns[lanes + 1]!.map((v, i, all) => (i === all.length - 1 || v === null ? v : Number(v.toPrecision(6)))),
    soakBound: r.soakBound(),
    outlier: r.outlier(ratioMarginal),
  };
}

function throughputSeries(sorted: RailThroughputPoint[], tMax: number, maxPoints: number): RunSeries['throughput'] {
  const keys = [...new Set(sorted.map((p) => `${p.rail}\u0000${p.direction ?? ''}`))].sort();
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
  // One plain pass (a request of a day's journal downsamples ~86,000 rows per receiver: no copy, no closure per row).
  for (let k = 0; k < rows.length - 1; k++) {
    const r = rows[k]!;
    const b = Math.floor(r.tS / bucketS);
    if (b !== bucket) {
      if (bucket >= 0) emit(accT, acc);
      bucket = b;
      accT = r.tS;
      acc = r.values.slice();
      continue;
    }
    const values = r.values;
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (v !== null && (acc[i] === null || v > acc[i]!)) acc[i] = v;
    }
  }
  if (bucket >= 0) emit(accT, acc);
  const last = rows[rows.length - 1]!;
  emit(last.tS, last.values);
  return { t, columns };
}
