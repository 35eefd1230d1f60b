import { ParseError } from '../domain/errors.js';
import { resultRank, stripLauncherPrefix, type LauncherPrefix } from './launcher-prefix.js';

const KIND = 'ib_write_bw';

// The bandwidth unit perftest printed in the result header (MB before 2024, MiB since, Gb with --report_gbits);
// MB and MiB are the same unit (2^20 bytes/s), kept apart only to say what the header said.
export type PerftestUnit = 'Gb/s' | 'MB/s' | 'MiB/s';

// One result row; every bandwidth is converted to Gb/s so rails and runs compare directly.
export interface IbWriteBwRow {
  bytes: number;
  iterations: number;
  bwPeakGbps: number | null; // null when perftest did not measure the peak (-D, --run_infinitely, > 20000 iters)
  bwAverageGbps: number;
  msgRateMpps: number;
}

// What one ib_write_bw (client or server) run printed; bidirectional figures are the sum of both directions.
export interface IbWriteBwResult {
  test: string | null; // e.g. RDMA_Write, from the title line
  bidirectional: boolean;
  device: string | null;
  role: 'client' | 'server' | null;
  unit: PerftestUnit;
  peakMeasured: boolean;
  rows: IbWriteBwRow[];
  notes: string[]; // lines before the table that are not header fields (e.g. "Using sampled CPU speed ...")
  // Lines outside the rows that this parser does not know (after the closing dashes, a warning inside the table): kept
  // as printed, for the run to report; never a reason to refuse the rows.
  warnings: string[];
  // What some builds print around the table: `Connected: <date>` before it, `Completed: <date>` and
  // `Total run time: 187.693s` after it (null when not printed).
  connected: string | null;
  completed: string | null;
  runTimeS: number | null;
  launcher?: LauncherPrefix; // only when the lines carried an srun --label or mpirun --tag-output prefix
}

const DASHES = /^-{20,}$/;
const TITLE = /^(\S+) (Bidirectional )?BW Test$/;
const PEAK_WARNING = /^WARNING: BW peak won't be measured in this run\.$/;
// get_clock.c (stderr, merged): "Conflicting CPU frequency values detected: %lf != %lf. CPU Frequency is not max."
const CPU_FREQ = /^Conflicting CPU frequency values detected: /;
// Any other warning perftest or a library prints while the rows are printed: kept, never a row.
const WARNING_LINE = /^(?:-w-\s*)?(?:WARNING|Warning|warning)\b/;
const BANNER = /^\*+$/;
const WAITING = /^\* Waiting for client .*connect.*\*$/;
const CONNECTED = /^Connected:\s*(\S.*)$/;
const COMPLETED = /^Completed:\s*(\S.*)$/;
const RUN_TIME = /^Total run time:\s*(\d+(?:\.\d+)?)\s*s(?:ec(?:onds?)?)?$/;
// What perftest's GPU memory code prints as it frees its buffers (src/cuda_memory.c cuda_memory_free_buffer and
// free_gpu; rocm_memory.c and musa_memory.c print the same deallocation line), and the server of a run_infinitely
// write test when its client goes (write_bw.c: " Client closed connection").
const KNOWN_AFTER = [
  /^deallocating GPU buffer \S+$/,
  /^destroying current (?:CUDA|MUSA|ROCm|HIP) Ctx$/,
  /^stopping CUDA gpu touch running kernel$/,
  /^Client closed connection$/,
];
// write_bw.c with --report-both on a bidirectional run: the summed table, then the local and the remote one.
const PART_TITLE = /^(Local|Remote) results:$/;
// `Key : value` header lines, possibly two per line (`Dual-port : OFF<TAB><TAB>Device : mlx5_0`).
const HEADER_FIELD = /^[A-Za-z][\w .*/\t-]*:\s*\S/;
const INT = /^\d+$/;
const FLOAT = /^\d+(\.\d+)?$/;

// The column headers perftest prints over a bandwidth table (perftest_parameters.h RESULT_FMT*, RESULT_EXT_CPU_UTIL):
// the default five, with the per-port columns (--report-per-port), the service level (RESULT_FMT_QOS) or the CPU
// utilisation (--cpu_util) added. Each name is read as a whole whatever whitespace (spaces, tabs) lies between.
const COLUMN = /^(#bytes|#sl|#iterations|BW (?:peak|average|Port\d)\[(Gb|MB|MiB)\/sec\]|MsgRate(?: Port\d)?\[Mpps\]|CPU_Util\[%\])(?=\s|$)\s*/;

interface Columns {
  unit: PerftestUnit;
  names: string[];
  at: { bytes: number; iterations: number; peak: number; avg: number; rate: number };
}

// The table's column header, or null when the line is not one; units that differ are refused with the line.
function columnsOf(line: string, n: number): Columns | null {
  if (!line.startsWith('#bytes')) return null;
  const names: string[] = [];
  const units = new Set<string>();
  let rest = line;
  while (rest !== '') {
    const m = COLUMN.exec(rest);
    if (!m) return null;
    names.push(m[1]!.replace(/\[(Gb|MB|MiB)\/sec\]$/, ''));
    if (m[2]) units.add(m[2]);
    rest = rest.slice(m[0].length);
  }
  const idx = (name: string) => names.indexOf(name);
  const at = { bytes: idx('#bytes'), iterations: idx('#iterations'), peak: idx('BW peak'), avg: idx('BW average'), rate: idx('MsgRate[Mpps]') };
  if (Object.values(at).some((i) => i < 0)) return null;
  if (units.size !== 1) throw new ParseError(KIND, n, `the columns' units differ (${[...units].join(' vs ')})`);
  return { unit: unitOf([...units][0]!), names, at };
}

const NO_ROW_REASON = 'no result row: the test did not run (check the GID index -x and that the server is reachable)';

// perftest's MB/sec and MiB/sec are both 2^20 bytes per second (its --help: "MB=2^20 byte, while Gb=10^9 bits";
// the 2024 rename to MiB/sec only corrected the label, format_factor stayed 0x100000). Gb/sec is 10^9 bits per second.
function toGbps(value: number, unit: PerftestUnit): number {
  if (unit === 'Gb/s') return value;
  return (value * 1048576 * 8) / 1e9;
}

function unitOf(printed: string): PerftestUnit {
  return printed === 'Gb' ? 'Gb/s' : printed === 'MB' ? 'MB/s' : 'MiB/s';
}

type RawRow = { bytes: number; iterations: number; peak: number; avg: number; rate: number };

// One row of the table under its columns, refused with its line when it is not one.
function rowOf(line: string, n: number, c: Columns): RawRow {
  const cols = line.split(/\s+/);
  if (!INT.test(cols[0]!)) throw new ParseError(KIND, n, `unexpected line in the result table: "${line.slice(0, 80)}"`);
  if (cols.length !== c.names.length) throw new ParseError(KIND, n, `result row must have ${c.names.length} columns, found ${cols.length}`);
  const b = cols[c.at.bytes]!;
  const it = cols[c.at.iterations]!;
  if (!INT.test(b) || !INT.test(it)) throw new ParseError(KIND, n, `#bytes and #iterations must be integers: "${b} ${it}"`);
  for (const v of cols.slice(1)) {
    if (!FLOAT.test(v)) throw new ParseError(KIND, n, `not a number: "${v}"`);
  }
  const bytes = Number(b);
  if (bytes === 0) throw new ParseError(KIND, n, 'message size 0');
  return { bytes, iterations: Number(it), peak: Number(cols[c.at.peak]), avg: Number(cols[c.at.avg]), rate: Number(cols[c.at.rate]) };
}

// Parse ib_write_bw stdout (stderr may be merged); a header without a result row is an error even with exit 0. A
// launcher prefix (srun --label, mpirun --tag-output) is taken off first; the run's lines must come from one rank.
// Inside the table every line is a row or a warning; after its closing dashes a line this parser does not know is a
// warning, not an error (builds differ in what they print there: docs/formats.md §5).
export function parseIbWriteBw(text: string): IbWriteBwResult {
  const unprefixed = stripLauncherPrefix(text, KIND);
  const lines = unprefixed.lines;
  const result = resultRank(unprefixed, KIND, 'ib_write_bw run'); // the title, header fields and rows: one run printed them
  let test: string | null = null;
  let bidirectional = false;
  let device: string | null = null;
  let waiting = false;
  let txDepth = false;
  let peakWarning = false;
  let columns: Columns | null = null;
  let tableClosed = false;
  let inPart = false; // inside a --report-both local or remote table after the summed one
  let connected: string | null = null;
  let completed: string | null = null;
  let runTimeS: number | null = null;
  const notes: string[] = [];
  const warnings: string[] = [];
  let firstNote: { n: number; line: string } | undefined;
  const rawRows: RawRow[] = [];

  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const line = lines[i]!.replace(/\r$/, '').trim();
    if (line === '' || CPU_FREQ.test(line)) continue;
    if (PEAK_WARNING.test(line)) {
      peakWarning = true;
      continue;
    }
    if (DASHES.test(line)) {
      if (columns !== null) tableClosed = true;
      continue;
    }
    if (columns === null) {
      const title = TITLE.exec(line);
      if (title) {
        result.take(i);
        test = title[1]!;
        bidirectional = title[2] !== undefined;
        continue;
      }
      if (BANNER.test(line)) continue;
      if (WAITING.test(line)) {
        waiting = true;
        continue;
      }
      const cols = columnsOf(line, n);
      if (cols) {
        result.take(i);
        columns = cols;
        continue;
      }
      const conn = CONNECTED.exec(line);
      if (conn) {
        connected = conn[1]!;
        continue;
      }
      if (HEADER_FIELD.test(line)) {
        result.take(i);
        const dev = /(?:^|\s)Device\s*:\s*(\S+)/.exec(line);
        if (dev) device = dev[1]!;
        if (/^TX depth\s*:/.test(line)) txDepth = true;
        continue;
      }
      // Informational or error text before the table (perftest versions differ); kept, and named if no row follows.
      notes.push(line);
      firstNote ??= { n, line };
      continue;
    }
    if (!tableClosed) {
      // Inside the table: a row, a warning printed while it runs, or a line that says the test went wrong (refused).
      if (WARNING_LINE.test(line) || KNOWN_AFTER.some((re) => re.test(line))) {
        if (WARNING_LINE.test(line)) warnings.push(line);
        continue;
      }
      result.take(i);
      rawRows.push(rowOf(line, n, columns));
      continue;
    }
    // After the closing dashes: what builds print as they finish, the --report-both tables, anything else a warning.
    if (TITLE.test(line) || (!inPart && columnsOf(line, n))) {
      result.take(i);
      throw new ParseError(KIND, n, `a second ib_write_bw run after the first one's result table: one run per text`);
    }
    const done = COMPLETED.exec(line);
    const time = RUN_TIME.exec(line);
    if (done) completed = done[1]!;
    else if (time) runTimeS = Number(time[1]);
    else if (PART_TITLE.test(line)) inPart = true;
    else if (inPart && (columnsOf(line, n) || INT.test(line.split(/\s+/)[0]!))) continue;
    else if (!KNOWN_AFTER.some((re) => re.test(line))) warnings.push(line);
  }

  if (rawRows.length === 0 || columns === null) {
    if (firstNote) throw new ParseError(KIND, firstNote.n, `${NO_ROW_REASON}; first unexpected line: "${firstNote.line.slice(0, 80)}"`);
    throw new ParseError(KIND, Math.max(1, lines.length), NO_ROW_REASON);
  }
  const u = columns.unit;
  const peakMeasured = !peakWarning && rawRows.some((r) => r.peak > 0);
  const rows = rawRows.map((r) => ({
    bytes: r.bytes,
    iterations: r.iterations,
    bwPeakGbps: peakMeasured ? toGbps(r.peak, u) : null,
    bwAverageGbps: toGbps(r.avg, u),
    msgRateMpps: r.rate,
  }));
  // The server prints a "Waiting for client" banner; TX depth is client-only unless bidirectional.
  const role = waiting ? 'server' : txDepth && !bidirectional ? 'client' : null;
  const launcher = result.launcher();
  return {
    test,
    bidirectional,
    device,
    role,
    unit: u,
    peakMeasured,
    rows,
    notes,
    warnings,
    connected,
    completed,
    runTimeS,
    ...(launcher && { launcher }),
  };
}
