import { ParseError } from '../domain/errors.js';

const KIND = 'nccl';

// One half (out-of-place or in-place) of a nccl-tests row; GB/s = 1e9 bytes/s; wrong is null when checking was off.
export interface NcclHalf {
  timeUs: number;
  algbwGBs: number;
  busbwGBs: number;
  wrong: number | null;
}

// One message size of a nccl-tests table.
export interface NcclRow {
  size: number;
  count: number;
  type: string;
  redop: string;
  root: number;
  outOfPlace: NcclHalf;
  inPlace: NcclHalf;
}

// A nccl-tests run plus what NCCL_DEBUG=INFO said about the network: one device name or Socket means a setup fault.
// A debug-only excerpt (NCCL lines, no table) parses to rows [] and avgBusBandwidthGBs null; rows pasted without the
// table header are read in nccl-tests' default 13-column layout.
export interface NcclResult {
  collective: string | null;
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
const HALF_COLUMNS = ['time', 'algbw', 'busbw', '#wrong'] as const;

interface Columns {
  count: number;
  halves: [Record<(typeof HALF_COLUMNS)[number], number>, Record<(typeof HALF_COLUMNS)[number], number>];
}

// Map the `# size count type redop root time algbw busbw #wrong ...` header to column indexes (extra columns allowed).
function readColumns(tokens: string[], line: number): Columns {
  const fixed = ['size', 'count', 'type', 'redop', 'root'];
  fixed.forEach((name, i) => {
    if (tokens[i] !== name) throw new ParseError(KIND, line, `column ${i + 1} of the table header must be "${name}"`);
  });
  const find = (name: string): [number, number] => {
    const alias = name === 'time' ? ['time', 'cputime'] : [name];
    const at = tokens.flatMap((t, i) => (alias.includes(t) ? [i] : []));
    if (at.length !== 2) throw new ParseError(KIND, line, `table header must have "${name}" twice (out-of-place, in-place)`);
    return [at[0]!, at[1]!];
  };
  const idx = Object.fromEntries(HALF_COLUMNS.map((c) => [c, find(c)])) as Record<(typeof HALF_COLUMNS)[number], [number, number]>;
  const half = (k: 0 | 1) => ({ time: idx.time[k], algbw: idx.algbw[k], busbw: idx.busbw[k], '#wrong': idx['#wrong'][k] });
  return { count: tokens.length, halves: [half(0), half(1)] };
}

// The layout every nccl-tests collective prints by default (util.cu): size count type redop root, then time algbw busbw
// #wrong out-of-place and in-place. Rows pasted without their header (bug reports keep the table rows and the
// `# Avg bus bandwidth` trailer only) are read with it when they have exactly this shape.
const DEFAULT_COLUMNS: Columns = {
  count: 13,
  halves: [
    { time: 5, algbw: 6, busbw: 7, '#wrong': 8 },
    { time: 9, algbw: 10, busbw: 11, '#wrong': 12 },
  ],
};
const WORD = /^[a-z][a-z0-9_]*$/;

// A row of the default table shape: integers where the header has size, count and root, names for type and redop,
// numbers for time, algbw and busbw, a number or N/A for #wrong.
function hasDefaultShape(cells: string[]): boolean {
  if (cells.length !== DEFAULT_COLUMNS.count) return false;
  const [size, count, type, redop, root] = cells as [string, string, string, string, string];
  if (!/^\d+$/.test(size) || !/^\d+$/.test(count) || !INT.test(root) || !WORD.test(type) || !WORD.test(redop)) return false;
  return DEFAULT_COLUMNS.halves.every(
    (h) => [h.time, h.algbw, h.busbw].every((i) => NUM.test(cells[i]!)) && (cells[h['#wrong']] === 'N/A' || NUM.test(cells[h['#wrong']]!)),
  );
}

function num(cell: string, what: string, line: number): number {
  if (!NUM.test(cell)) throw new ParseError(KIND, line, `${what} is not a number: "${cell.slice(0, 40)}"`);
  return Number(cell);
}

function readRow(cells: string[], cols: Columns, line: number): NcclRow {
  if (cells.length !== cols.count) {
    throw new ParseError(KIND, line, `table row has ${cells.length} columns, the header has ${cols.count}`);
  }
  const [size, count, type, redop, root] = cells as [string, string, string, string, string];
  for (const [v, what] of [
    [size, 'size'],
    [count, 'count'],
    [root, 'root'],
  ] as const) {
    if (!INT.test(v)) throw new ParseError(KIND, line, `${what} is not an integer: "${v.slice(0, 40)}"`);
  }
  const half = (k: 0 | 1): NcclHalf => {
    const c = cols.halves[k];
    const wrong = cells[c['#wrong']]!;
    return {
      timeUs: num(cells[c.time]!, 'time', line),
      algbwGBs: num(cells[c.algbw]!, 'algbw', line),
      busbwGBs: num(cells[c.busbw]!, 'busbw', line),
      wrong: wrong === 'N/A' ? null : num(wrong, '#wrong', line),
    };
  };
  return { size: Number(size), count: Number(count), type, redop, root: Number(root), outOfPlace: half(0), inPlace: half(1) };
}

function addDistinct(list: string[], name: string): void {
  if (!list.includes(name)) list.push(name);
}

// Parse nccl-tests output with NCCL_DEBUG lines and launcher noise (mpirun, ssh, X11 authorization) interleaved.
export function parseNccl(text: string): NcclResult {
  const lines = text.split('\n');
  let collective: string | null = null;
  let version: string | undefined;
  let ncclVersion: string | undefined;
  let cols: Columns | null = null;
  let headerless = false; // rows read in the default layout because no header came first
  const rows: NcclRow[] = [];
  let avg: number | null = null;
  let avgOk: boolean | undefined;
  let outOfBounds: { count: number; ok: boolean } | undefined;
  let ncclLines = 0;
  const all = emptySeen();
  const perRank = new Map<string, { host: string; pid: number; seen: NetSeen }>();

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
        let r = perRank.get(key);
        if (!r) perRank.set(key, (r = { host: who[1]!, pid: Number(who[2]), seen: emptySeen() }));
        noteNet(r.seen, msg);
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
      } else if (body.startsWith('Out of bounds values')) {
        m = /^Out of bounds values\s*:\s*(\d+)\s+(OK|FAILED)$/.exec(body);
        if (!m) throw new ParseError(KIND, n, `cannot read "${body.slice(0, 60)}"`);
        outOfBounds = { count: Number(m[1]), ok: m[2] === 'OK' };
      } else if (body.startsWith('Avg bus bandwidth')) {
        m = /^Avg bus bandwidth\s*:\s*(\S+)(?:\s+(OK|FAILED))?$/.exec(body);
        if (!m) throw new ParseError(KIND, n, `cannot read "${body.slice(0, 60)}"`);
        avg = num(m[1]!, 'Avg bus bandwidth', n);
        if (m[2]) avgOk = m[2] === 'OK';
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
    if (cols !== null) rows.push(readRow(cells, cols, n));
    else if (hasDefaultShape(cells)) {
      headerless = true;
      rows.push(readRow(cells, DEFAULT_COLUMNS, n));
    } else if (cells.length >= 5) {
      throw new ParseError(
        KIND,
        n,
        `table row before the "# size count type ..." header, and not in the ${DEFAULT_COLUMNS.count}-column shape of a nccl-tests row`,
      );
    }
  }
  if (headerless && cols !== null) throw new ParseError(KIND, lines.length, 'table rows both before and after a "# size count type ..." header');

  if (rows.length === 0 && avg === null && ncclLines === 0) {
    throw new ParseError(KIND, Math.max(1, lines.length), 'no nccl-tests result row, no "# Avg bus bandwidth" footer and no NCCL debug line');
  }
  const { network, devices: netDevices } = networkOf(all);
  const ranks: NcclRank[] = [...perRank.values()].map((r) => ({ host: r.host, pid: r.pid, ...networkOf(r.seen), ip: r.seen.ip }));

  return {
    collective,
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
