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
  launcher?: LauncherPrefix; // only when the lines carried an srun --label or mpirun --tag-output prefix
}

const DASHES = /^-{20,}$/;
const TITLE = /^(\S+) (Bidirectional )?BW Test$/;
const PEAK_WARNING = /^WARNING: BW peak won't be measured in this run\.$/;
const CPU_FREQ = /^Conflicting CPU frequency values detected: /;
const BANNER = /^\*+$/;
const WAITING = /^\* Waiting for client .*connect.*\*$/;
const RESULT_HEADER = /^#bytes\s+#iterations\s+BW peak\[(Gb|MB|MiB)\/sec\]\s+BW average\[(Gb|MB|MiB)\/sec\]\s+MsgRate\[Mpps\]$/;
// `Key : value` header lines, possibly two per line (`Dual-port : OFF<TAB><TAB>Device : mlx5_0`).
const HEADER_FIELD = /^[A-Za-z][\w .*/\t-]*:\s*\S/;
const INT = /^\d+$/;
const FLOAT = /^\d+(\.\d+)?$/;

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

// Parse ib_write_bw stdout (stderr may be merged); a header without a result row is an error even with exit 0. A
// launcher prefix (srun --label, mpirun --tag-output) is taken off first; the run's lines must come from one rank.
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
  let unit: PerftestUnit | null = null;
  let tableClosed = false;
  const notes: string[] = [];
  let firstNote: { n: number; line: string } | undefined;
  const rawRows: Array<{ bytes: number; iterations: number; peak: number; avg: number; rate: number }> = [];

  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const line = lines[i]!.replace(/\r$/, '').trim();
    if (line === '' || CPU_FREQ.test(line)) continue;
    if (PEAK_WARNING.test(line)) {
      peakWarning = true;
      continue;
    }
    if (DASHES.test(line)) {
      if (unit !== null && rawRows.length > 0) tableClosed = true;
      continue;
    }
    if (unit === null) {
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
      const header = RESULT_HEADER.exec(line);
      if (header) {
        result.take(i);
        if (header[1] !== header[2]) throw new ParseError(KIND, n, `peak and average units differ (${header[1]} vs ${header[2]})`);
        unit = unitOf(header[1]!);
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
    // Inside or after the result table only rows (and the noise skipped above) may appear.
    result.take(i);
    if (tableClosed) throw new ParseError(KIND, n, `unexpected line after the result table: "${line.slice(0, 80)}"`);
    const cols = line.split(/\s+/);
    if (!INT.test(cols[0]!)) throw new ParseError(KIND, n, `unexpected line in the result table: "${line.slice(0, 80)}"`);
    if (cols.length !== 5) throw new ParseError(KIND, n, `result row must have 5 columns, found ${cols.length}`);
    const [b, it, peak, avg, rate] = cols as [string, string, string, string, string];
    if (!INT.test(b) || !INT.test(it)) throw new ParseError(KIND, n, `#bytes and #iterations must be integers: "${b} ${it}"`);
    for (const v of [peak, avg, rate]) {
      if (!FLOAT.test(v)) throw new ParseError(KIND, n, `not a number: "${v}"`);
    }
    const bytes = Number(b);
    if (bytes === 0) throw new ParseError(KIND, n, 'message size 0');
    rawRows.push({ bytes, iterations: Number(it), peak: Number(peak), avg: Number(avg), rate: Number(rate) });
  }

  if (rawRows.length === 0 || unit === null) {
    if (firstNote) throw new ParseError(KIND, firstNote.n, `${NO_ROW_REASON}; first unexpected line: "${firstNote.line.slice(0, 80)}"`);
    throw new ParseError(KIND, Math.max(1, lines.length), NO_ROW_REASON);
  }
  const u = unit;
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
  return { test, bidirectional, device, role, unit: u, peakMeasured, rows, notes, ...(launcher && { launcher }) };
}
