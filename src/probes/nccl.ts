import { ParseError } from '../domain/errors.js';
import { resultRank, stripLauncherPrefix, type LauncherPrefix } from './launcher-prefix.js';

const KIND = 'nccl';

// One half (out-of-place or in-place) of a nccl-tests row; GB/s = 1e9 bytes/s. wrong (elements that failed the check,
// nccl-tests >= 2.13) is null when checking was off or the table has an `error` column instead; maxError is that older
// column (the largest deviation found, e.g. 2e-07; null when checking was off) and is present only in that layout.
export interface NcclHalf {
  timeUs: number;
  algbwGBs: number;
  busbwGBs: number;
  wrong: number | null;
  maxError?: number | null;
}

// One message size of a nccl-tests table; redop and root are null where the table has no such column (before 2.13
// each collective printed only its own: all_gather neither, broadcast root only, all_reduce redop only).
export interface NcclRow {
  size: number;
  count: number;
  type: string;
  redop: string | null;
  root: number | null;
  outOfPlace: NcclHalf;
  inPlace: NcclHalf;
}

// Which table layout nccl-tests printed, read from its header: since 2.13 (2022) every collective prints size count
// type redop root and a `#wrong` count per half; before, each collective printed its own leading columns and a float
// `error` (max deviation). docs/formats.md §6b.
export type NcclTableLayout = 'nccl-tests>=2.13' | 'nccl-tests<2.13';

// A nccl-tests run plus what NCCL_DEBUG=INFO said about the network: one device name or Socket means a setup fault.
// A debug-only excerpt (NCCL lines, no table) parses to rows [] and avgBusBandwidthGBs null; rows pasted without the
// table header are read in nccl-tests' default 13-column layout.
export interface NcclResult {
  collective: string | null;
  tableLayout?: NcclTableLayout; // only when a table (header or rows) was read
  launcher?: LauncherPrefix; // only when the lines carried an srun --label or mpirun --tag-output prefix
  version?: string; // nccl-tests version, from `# nccl-tests version X`
  ncclVersion?: string; // NCCL library version, from `NCCL version X` (bare or INFO line)
  rows: NcclRow[];
  avgBusBandwidthGBs: number | null;
  avgBusBandwidthOk?: boolean; // only when nccl-tests was given a check threshold
  outOfBounds?: { count: number; ok: boolean };
  network: 'IB' | 'Socket' | null;
  netDevices: string[];
  // Per process (rank), from the `<host>:<pid>:<tid>` prefix of its NCCL lines: each rank picks its own network and
  // devices from its own environment, so a rank given another node's names shows here, not in the union above.
  ranks: NcclRank[];
}

// What one rank's NCCL_DEBUG lines said: its network, devices and the address of its bootstrap interface.
export interface NcclRank {
  host: string;
  pid: number;
  network: 'IB' | 'Socket' | null;
  devices: string[];
  ip: string | null; // the OOB / bootstrap address (`OOB enp1s0f1np1:192.168.100.10<0>`)
  launcherRank?: number; // the rank the launcher prefix of this process's lines named
  ncclVersion?: string; // the NCCL library this process loaded (its own `NCCL version X` INFO line)
}

interface NetSeen {
  usingNetwork: string[];
  ibDevices: string[];
  socketDevices: string[];
  ip: string | null;
}

// Any rank on Socket makes the run a TCP run; the explicit "Using network" line wins over NET/* lines.
function networkOf(seen: NetSeen): { network: 'IB' | 'Socket' | null; devices: string[] } {
  const { usingNetwork, ibDevices, socketDevices } = seen;
  const network: 'IB' | 'Socket' | null = usingNetwork.includes('Socket')
    ? 'Socket'
    : usingNetwork.includes('IB')
      ? 'IB'
      : usingNetwork.length > 0
        ? null
        : ibDevices.length > 0
          ? 'IB'
          : socketDevices.length > 0
            ? 'Socket'
            : null;
  const devices = network === 'IB' ? ibDevices : network === 'Socket' ? socketDevices : [...ibDevices, ...socketDevices.filter((d) => !ibDevices.includes(d))];
  return { network, devices };
}

// Read one NCCL_DEBUG message into what a rank (or the whole run) saw.
function noteNet(seen: NetSeen, msg: string): void {
  const net = /^Using network (\S+)/.exec(msg);
  if (net) addDistinct(seen.usingNetwork, net[1]!);
  const ib = /^NET\/IB ?: Using (.*)$/.exec(msg);
  if (ib) for (const m of ib[1]!.matchAll(/\[\d+\]([^\s:[\]]+):\d+\/(?:RoCE|IB|UNSPECIFIED)/g)) addDistinct(seen.ibDevices, m[1]!);
  const sock = /^NET\/Socket ?: Using (.*)$/.exec(msg);
  if (sock) for (const m of sock[1]!.matchAll(/\[\d+\]([^\s:[\]]+):/g)) addDistinct(seen.socketDevices, m[1]!);
  const oob = /(?:OOB|^Bootstrap ?: Using|^NET\/Socket ?: Using \[0\]) ?[^\s:]+:(\d{1,3}(?:\.\d{1,3}){3})</.exec(msg);
  if (oob) seen.ip ??= oob[1]!;
}

const emptySeen = (): NetSeen => ({ usingNetwork: [], ibDevices: [], socketDevices: [], ip: null });
// `<host>:<pid>:<tid> [<dev>]` at the start of an NCCL line, after an optional `[timestamp]`.
const RANK_PREFIX = /^(?:\[[^\]]*\]\s*)?([A-Za-z0-9][A-Za-z0-9_.-]*):(\d+):\d+\s+\[/;

// `[<timestamp>] <host>:<pid>:<tid> [<dev>] NCCL INFO <message>`; any prefix is accepted (timestamps since NCCL 2.26).
const NCCL_LINE = /^(?:.*?\s)?NCCL (INFO|WARN|TRACE|ABORT)(?: (.*))?$/;
const BARE_VERSION = /^NCCL version (\S+)\s*$/;
const NUM = /^-?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i;
const INT = /^-?\d+$/;
const UNSIGNED = /^(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i; // times and bandwidths, never negative
// Where one half's cells are; `check` is `#wrong` (>= 2.13) or `error` (before).
interface HalfColumns {
  time: number;
  algbw: number;
  busbw: number;
  check: number;
}

interface Columns {
  count: number;
  layout: NcclTableLayout;
  redop: number | null;
  root: number | null;
  halves: [HalfColumns, HalfColumns];
}

// Map the `# size count type [redop] [root] time algbw busbw #wrong|error ...` header to column indexes (extra
// columns allowed): the leading columns name what each collective printed, the check column names the layout.
function readColumns(tokens: string[], line: number): Columns {
  ['size', 'count', 'type'].forEach((name, i) => {
    if (tokens[i] !== name) throw new ParseError(KIND, line, `column ${i + 1} of the table header must be "${name}"`);
  });
  let next = 3;
  const optional = (name: string): number | null => (tokens[next] === name ? next++ : null);
  const redop = optional('redop');
  const root = optional('root');
  if (tokens[next] !== 'time' && tokens[next] !== 'cputime') {
    throw new ParseError(
      KIND,
      line,
      `column ${next + 1} of the table header must be "redop", "root" or "time", not ${JSON.stringify(tokens[next]?.slice(0, 20) ?? '')}`,
    );
  }
  const twice = (names: string[], say: string): [number, number] | null => {
    const at = tokens.flatMap((t, i) => (names.includes(t) ? [i] : []));
    if (at.length === 0) return null;
    if (at.length !== 2) throw new ParseError(KIND, line, `table header must have ${say} twice (out-of-place, in-place)`);
    return [at[0]!, at[1]!];
  };
  const need = (names: string[], say: string): [number, number] => {
    const at = twice(names, say);
    if (!at) throw new ParseError(KIND, line, `table header must have ${say} twice (out-of-place, in-place)`);
    return at;
  };
  const time = need(['time', 'cputime'], '"time"');
  const algbw = need(['algbw'], '"algbw"');
  const busbw = need(['busbw'], '"busbw"');
  const wrong = twice(['#wrong'], '"#wrong"');
  const error = twice(['error'], '"error"');
  if (!wrong === !error) throw new ParseError(KIND, line, 'table header must have "#wrong" (nccl-tests >= 2.13) or "error" (before 2.13) twice');
  const check = (wrong ?? error)!;
  const half = (k: 0 | 1): HalfColumns => ({ time: time[k], algbw: algbw[k], busbw: busbw[k], check: check[k] });
  return { count: tokens.length, layout: wrong ? 'nccl-tests>=2.13' : 'nccl-tests<2.13', redop, root, halves: [half(0), half(1)] };
}

const halvesFrom = (first: number): [HalfColumns, HalfColumns] => [
  { time: first, algbw: first + 1, busbw: first + 2, check: first + 3 },
  { time: first + 4, algbw: first + 5, busbw: first + 6, check: first + 7 },
];

// The row shapes read without a header (bug reports keep the table rows and the `# Avg bus bandwidth` trailer only),
// each only when a row has exactly its shape: every collective since nccl-tests 2.13 (util.cu: size count type redop
// root, then time algbw busbw #wrong out-of-place and in-place), and all_reduce before 2.13 (size count type redop,
// then time algbw busbw error twice).
const HEADERLESS: Columns[] = [
  { count: 13, layout: 'nccl-tests>=2.13', redop: 3, root: 4, halves: halvesFrom(5) },
  { count: 12, layout: 'nccl-tests<2.13', redop: 3, root: null, halves: halvesFrom(4) },
];
const WORD = /^[a-z][a-z0-9_]*$/;

// A row in a headerless shape: integers where the shape has size, count and root, names for type and redop, numbers
// for time, algbw and busbw, N/A or a count of wrong elements (>= 2.13) or a deviation (before) in the check column.
function hasShape(cells: string[], cols: Columns): boolean {
  if (cells.length !== cols.count) return false;
  const [size, count, type] = cells as [string, string, string];
  if (!/^\d+$/.test(size) || !/^\d+$/.test(count) || !WORD.test(type)) return false;
  if (cols.redop !== null && !WORD.test(cells[cols.redop]!)) return false;
  if (cols.root !== null && !INT.test(cells[cols.root]!)) return false;
  const check = (c: string) => c === 'N/A' || (NUM.test(c) && (cols.layout === 'nccl-tests<2.13' || Number.isInteger(Number(c))));
  return cols.halves.every((h) => [h.time, h.algbw, h.busbw].every((i) => UNSIGNED.test(cells[i]!)) && check(cells[h.check]!));
}

function num(cell: string, what: string, line: number): number {
  if (!NUM.test(cell)) throw new ParseError(KIND, line, `${what} is not a number: "${cell.slice(0, 40)}"`);
  return Number(cell);
}

function readRow(cells: string[], cols: Columns, line: number): NcclRow {
  if (cells.length !== cols.count) {
    throw new ParseError(KIND, line, `table row has ${cells.length} columns, the header has ${cols.count}`);
  }
  const [size, count, type] = cells as [string, string, string];
  const root = cols.root === null ? null : cells[cols.root]!;
  for (const [v, what] of [
    [size, 'size'],
    [count, 'count'],
    [root, 'root'],
  ] as const) {
    if (v !== null && !INT.test(v)) throw new ParseError(KIND, line, `${what} is not an integer: "${v.slice(0, 40)}"`);
  }
  const half = (k: 0 | 1): NcclHalf => {
    const c = cols.halves[k];
    const raw = cells[c.check]!;
    const check = raw === 'N/A' ? null : num(raw, cols.layout === 'nccl-tests>=2.13' ? '#wrong' : 'error', line);
    return {
      timeUs: num(cells[c.time]!, 'time', line),
      algbwGBs: num(cells[c.algbw]!, 'algbw', line),
      busbwGBs: num(cells[c.busbw]!, 'busbw', line),
      ...(cols.layout === 'nccl-tests>=2.13' ? { wrong: check } : { wrong: null, maxError: check }),
    };
  };
  return {
    size: Number(size),
    count: Number(count),
    type,
    redop: cols.redop === null ? null : cells[cols.redop]!,
    root: root === null ? null : Number(root),
    outOfPlace: half(0),
    inPlace: half(1),
  };
}

function addDistinct(list: string[], name: string): void {
  if (!list.includes(name)) list.push(name);
}

// Parse nccl-tests output with NCCL_DEBUG lines and launcher noise (mpirun, ssh, X11 authorization) interleaved, in
// either table layout, with or without a launcher prefix (srun --label, mpirun --tag-output) on its lines.
export function parseNccl(text: string): NcclResult {
  const unprefixed = stripLauncherPrefix(text, KIND);
  const lines = unprefixed.lines;
  let collective: string | null = null;
  let version: string | undefined;
  let ncclVersion: string | undefined;
  let cols: Columns | null = null;
  let headerless: Columns | null = null; // the shape rows were read in because no header came first
  const rows: NcclRow[] = [];
  const result = resultRank(unprefixed, KIND, 'nccl-tests table'); // the header, rows and footer: one rank printed them
  let avg: number | null = null;
  let avgOk: boolean | undefined;
  let outOfBounds: { count: number; ok: boolean } | undefined;
  let ncclLines = 0;
  const all = emptySeen();
  const perRank = new Map<string, { host: string; pid: number; seen: NetSeen; launcherRank: number | null; line: number; version?: string }>();

  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const line = lines[i]!.replace(/\r$/, '').trim();
    if (line === '') continue;

    const debug = NCCL_LINE.exec(line);
    if (debug) {
      ncclLines++;
      const msg = debug[2] ?? '';
      const v = /^NCCL version (\S+)/.exec(msg);
      if (v) ncclVersion ??= v[1]!;
      noteNet(all, msg);
      const who = RANK_PREFIX.exec(line);
      if (who) {
        const key = `${who[1]}:${who[2]}`;
        const launcherRank = unprefixed.ranks[i] ?? null;
        let r = perRank.get(key);
        if (!r) perRank.set(key, (r = { host: who[1]!, pid: Number(who[2]), seen: emptySeen(), launcherRank, line: n }));
        else if (r.launcherRank !== launcherRank) {
          throw new ParseError(
            KIND,
            n,
            `process ${key} under launcher rank ${launcherRank ?? 'none'}, but line ${r.line} put it under rank ${r.launcherRank ?? 'none'}: one process is one rank`,
          );
        }
        noteNet(r.seen, msg);
        if (v) r.version ??= v[1]!;
      }
      continue;
    }
    const bare = BARE_VERSION.exec(line);
    if (bare) {
      ncclVersion ??= bare[1]!;
      continue;
    }

    if (line.startsWith('#')) {
      const body = line.slice(1).trim();
      const tokens = body.split(/\s+/);
      let m: RegExpExecArray | null;
      if ((m = /^nccl-tests version (\S+)/.exec(body))) version = m[1]!;
      else if ((m = /^Collective test (?:starting|concluded): (\S+)$/.exec(body))) collective ??= m[1]!;
      else if (tokens[0] === 'size' && tokens.includes('busbw')) {
        if (cols) throw new ParseError(KIND, n, 'a second table header: one nccl-tests run per text');
        cols = readColumns(tokens, n);
        result.take(i);
      } else if (body.startsWith('Out of bounds values')) {
        m = /^Out of bounds values\s*:\s*(\d+)\s+(OK|FAILED)$/.exec(body);
        if (!m) throw new ParseError(KIND, n, `cannot read "${body.slice(0, 60)}"`);
        outOfBounds = { count: Number(m[1]), ok: m[2] === 'OK' };
        result.take(i);
      } else if (body.startsWith('Avg bus bandwidth')) {
        m = /^Avg bus bandwidth\s*:\s*(\S+)(?:\s+(OK|FAILED))?$/.exec(body);
        if (!m) throw new ParseError(KIND, n, `cannot read "${body.slice(0, 60)}"`);
        avg = num(m[1]!, 'Avg bus bandwidth', n);
        if (m[2]) avgOk = m[2] === 'OK';
        result.take(i);
      }
      // Other comment lines (device list, units row, banners) carry nothing the harness needs.
      continue;
    }

    // nccl-tests aborts after "<host>: Test NCCL failure common.cu:..."; partial rows must not pass for a result.
    if (/\bTest (?:NCCL |CUDA )?failure\b/.test(line)) {
      throw new ParseError(KIND, n, `nccl-tests reported a failure: "${line.slice(0, 120)}"`);
    }
    // A line starting with a size is a table row and must be complete; anything else is launcher noise.
    const cells = line.split(/\s+/);
    if (!/^\d+$/.test(cells[0]!)) continue;
    if (avg !== null || outOfBounds !== undefined) continue;
    const shape: Columns | undefined = cols ?? headerless ?? HEADERLESS.find((c) => hasShape(cells, c));
    if (shape !== undefined && (shape === cols || hasShape(cells, shape))) {
      if (shape !== cols) headerless = shape;
      rows.push(readRow(cells, shape, n));
      result.take(i);
    } else if (cells.length >= 5) {
      throw new ParseError(
        KIND,
        n,
        headerless
          ? `table row not in the ${headerless.count}-column shape of the rows above it`
          : 'table row before the "# size count type ..." header, and not in the 13-column shape of a nccl-tests row (or the 12-column all_reduce shape before nccl-tests 2.13)',
      );
    }
  }
  if (headerless && cols !== null) throw new ParseError(KIND, lines.length, 'table rows both before and after a "# size count type ..." header');

  if (rows.length === 0 && avg === null && ncclLines === 0) {
    throw new ParseError(KIND, Math.max(1, lines.length), 'no nccl-tests result row, no "# Avg bus bandwidth" footer and no NCCL debug line');
  }
  const launcher = result.launcher();
  const { network, devices: netDevices } = networkOf(all);
  const ranks: NcclRank[] = [...perRank.values()].map((r) => ({
    host: r.host,
    pid: r.pid,
    ...networkOf(r.seen),
    ip: r.seen.ip,
    ...(r.launcherRank !== null && { launcherRank: r.launcherRank }),
    ...(r.version !== undefined && { ncclVersion: r.version }),
  }));
  const layout = (cols ?? headerless)?.layout;

  return {
    collective,
    ...(layout !== undefined && { tableLayout: layout }),
    ...(launcher && { launcher }),
    ...(version !== undefined && { version }),
    ...(ncclVersion !== undefined && { ncclVersion }),
    rows,
    avgBusBandwidthGBs: avg,
    ...(avgOk !== undefined && { avgBusBandwidthOk: avgOk }),
    ...(outOfBounds && { outOfBounds }),
    network,
    netDevices,
    ranks,
  };
}
