// `ethtool [-I] --show-fec <iface>`: configured and active FEC, and the FEC block/bit counters (docs/formats.md §2).
//
// Accepted text: `FEC parameters for <if>:`, the configured line (`Supported/Configured FEC encodings:` since
// ethtool 5.18, `Configured FEC encodings:` before), `Active FEC encoding:`, then optionally `Statistics:` and
// its lines in either layout: `    Lane N: x` lines under a total (ethtool 5.13-6.18) or an inline
// `[ per_lane: a, b ]` (>= 6.19, with `fec_symbol(s)_err_*` histogram bins). A total printed without its
// newline (two statistics on one line) is read as two. Anything else is a ParseError.
import { ParseError } from '../domain/errors.js';
import { parseU64, type U64 } from '../domain/u64.js';
import { clip } from './read.js';

const KIND = 'ethtool-fec';
const HEADER = /^FEC parameters for (\S+):$/;
const CONFIGURED = /^(?:Supported\/)?Configured FEC encodings:((?:[ \t]+\S+)*)[ \t]*$/;
const ACTIVE = /^Active FEC encoding:((?:[ \t]+\S+)*)[ \t]*$/;
// ethtool's spellings (netlink renames None->Off and BASER->BaseR; "None" = nothing configured; BIT<n> = unknown bit).
const ENCODING = /^(?:Auto|Off|None|RS|BaseR|BASER|LLRS|BIT\d{1,3})$/;
const LANE_LINE = /^[ \t]+Lane (\d{1,2}): (\S+)[ \t]*$/;
// One statistic: `name: total` plus an optional inline per-lane array; several may share a line (missing newline).
const STAT = /[ \t]*([a-z][a-z0-9_]*): (\S+)(?:[ \t]+\[ per_lane:([^\]]*)\])?/y;
const EXPECTED = ['"FEC parameters for <iface>:"', 'the configured FEC encodings', 'the active FEC encoding'];
const HIST_BIN = /^fec_symbols?_err_(\d{1,4}(?:_to_\d{1,4})?)$/;

// Per-lane block counters (FireCode/BaseR on mlx5; RS modes give totals only).
export interface FecPerLane {
  correctedBlocks?: U64[];
  uncorrectableBlocks?: U64[];
  correctedBits?: U64[];
}

// One bin of the >= 6.19 FEC error histogram: codewords with that many symbol errors.
export interface FecHistogramBin {
  bin: string; // "0", "1_to_3", ...
  total: U64;
  perLane?: U64[];
}

// FEC counters; null = ethtool did not print that statistic. Blocks are RS codewords, bits are corrected bits.
export interface FecStats {
  correctedBlocks: U64 | null;
  uncorrectableBlocks: U64 | null;
  correctedBits: U64 | null;
  perLane?: FecPerLane;
  histogram?: FecHistogramBin[];
}

// What `ethtool -I --show-fec` says; stats is null when no `Statistics:` section was printed.
export interface EthtoolFec {
  iface: string;
  configured: string[];
  active: string;
  stats: FecStats | null;
}

type StatName = 'correctedBlocks' | 'uncorrectableBlocks' | 'correctedBits';
const TOTALS: Record<string, StatName> = {
  corrected_blocks: 'correctedBlocks',
  uncorrectable_blocks: 'uncorrectableBlocks',
  corrected_bits: 'correctedBits',
};

interface Stat {
  name: string;
  line: number;
  total: U64;
  lanes: U64[] | null;
  inline: boolean;
}

// Pure parser for the exact stdout of `ethtool [-I] --show-fec <iface>`.
export function parseEthtoolFec(text: string): EthtoolFec {
  const lines = text.split(/\r?\n/);
  let end = lines.length;
  while (end > 0 && lines[end - 1]!.trim() === '') end--;
  const at = (i: number): string => {
    if (i >= end) throw new ParseError(KIND, Math.min(i + 1, lines.length), `output ends before line ${i + 1} (${EXPECTED[i] ?? 'more'})`);
    return lines[i]!;
  };

  const header = HEADER.exec(at(0));
  if (!header) throw new ParseError(KIND, 1, `expected "FEC parameters for <iface>:", got ${clip(lines[0]!)}`);
  const conf = CONFIGURED.exec(at(1));
  if (!conf) throw new ParseError(KIND, 2, `expected "Supported/Configured FEC encodings: ...", got ${clip(lines[1]!)}`);
  const configured = encodings(conf[1]!, 2);
  if (configured.length === 0) throw new ParseError(KIND, 2, 'no configured FEC encoding listed');
  const act = ACTIVE.exec(at(2));
  if (!act) throw new ParseError(KIND, 3, `expected "Active FEC encoding: ...", got ${clip(lines[2]!)}`);
  const active = encodings(act[1]!, 3);
  if (active.length !== 1) throw new ParseError(KIND, 3, `expected one active FEC encoding, got ${active.length}`);

  if (end === 3) return { iface: header[1]!, configured, active: active[0]!, stats: null };
  if (lines[3]!.trim() !== 'Statistics:') throw new ParseError(KIND, 4, `expected "Statistics:" or the end, got ${clip(lines[3]!)}`);
  if (end === 4) throw new ParseError(KIND, 4, '"Statistics:" with no statistic after it');
  return { iface: header[1]!, configured, active: active[0]!, stats: statistics(lines, 4, end) };
}

function encodings(list: string, lineNo: number): string[] {
  const tokens = list.split(/\s+/).filter(Boolean);
  for (const t of tokens) if (!ENCODING.test(t)) throw new ParseError(KIND, lineNo, `${clip(t)} is not an FEC encoding`);
  return tokens;
}

function statistics(lines: string[], from: number, end: number): FecStats {
  const stats: Stat[] = [];
  for (let i = from; i < end; i++) {
    const line = lines[i]!;
    const lineNo = i + 1;
    const lane = LANE_LINE.exec(line);
    if (lane) {
      const last = stats.at(-1);
      if (!last) throw new ParseError(KIND, lineNo, '"Lane N:" before any statistic');
      if (last.inline) throw new ParseError(KIND, lineNo, `"Lane N:" after the inline per_lane values of ${last.name}`);
      last.lanes ??= [];
      if (Number(lane[1]) !== last.lanes.length) {
        throw new ParseError(KIND, lineNo, `${last.name}: Lane ${lane[1]} where Lane ${last.lanes.length} was expected`);
      }
      last.lanes.push(u64(lane[2]!, `${last.name} Lane ${lane[1]}`, lineNo));
      continue;
    }
    let pos = 0;
    STAT.lastIndex = 0;
    while (pos < line.length && line.slice(pos).trim() !== '') {
      STAT.lastIndex = pos;
      const m = STAT.exec(line);
      if (!m || (pos > 0 && !/^[ \t]/.test(line.slice(pos)))) {
        throw new ParseError(KIND, lineNo, `not a FEC statistic: ${clip(line.slice(pos))}`);
      }
      const name = m[1]!;
      if (stats.some((s) => s.name === name)) throw new ParseError(KIND, lineNo, `statistic ${name} repeated`);
      if (!Object.hasOwn(TOTALS, name) && !HIST_BIN.test(name)) throw new ParseError(KIND, lineNo, `unknown FEC statistic ${name}`);
      const total = u64(m[2]!, name, lineNo);
      const lanes = m[3] === undefined ? null : perLane(m[3], name, lineNo);
      stats.push({ name, line: lineNo, total, lanes, inline: lanes !== null });
      pos = STAT.lastIndex;
    }
    if (pos === 0) throw new ParseError(KIND, lineNo, 'blank line inside the statistics');
  }

  const result: FecStats = { correctedBlocks: null, uncorrectableBlocks: null, correctedBits: null };
  const perLaneOut: FecPerLane = {};
  const histogram: FecHistogramBin[] = [];
  for (const s of stats) {
    const key = Object.hasOwn(TOTALS, s.name) ? TOTALS[s.name] : undefined;
    if (key) {
      result[key] = s.total;
      if (s.lanes) perLaneOut[key] = s.lanes;
    } else {
      const bin = HIST_BIN.exec(s.name)![1]!;
      if (histogram.some((h) => h.bin === bin)) throw new ParseError(KIND, s.line, `histogram bin ${bin} repeated`);
      histogram.push(s.lanes ? { bin, total: s.total, perLane: s.lanes } : { bin, total: s.total });
    }
  }
  if (Object.keys(perLaneOut).length > 0) result.perLane = perLaneOut;
  if (histogram.length > 0) result.histogram = histogram;
  return result;
}

function perLane(list: string, name: string, lineNo: number): U64[] {
  const parts = list.split(',').map((p) => p.trim());
  return parts.map((p, i) => u64(p, `${name} per_lane[${i}]`, lineNo));
}

function u64(raw: string, what: string, lineNo: number): U64 {
  const v = parseU64(raw);
  if (v === null) throw new ParseError(KIND, lineNo, `${what}: ${clip(raw)} is not an unsigned 64-bit integer`);
  return v;
}
