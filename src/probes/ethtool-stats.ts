// `ethtool -S <iface>`: every counter kept exact (u64 as bigint), plus the PHY counters burn-in grading reads.
//
// Accepted text: an optional `NIC statistics:` first line, then one `name: value` counter per line (any
// indentation: ethtool indents by 5 spaces, grep'ed pastes have none). Without the header every non-blank
// line must still be a counter, so a partial paste parses but stray prose does not. Trailing blank lines
// and CRLF line ends are tolerated; anything else (duplicates, "-1", "N/A", >= 2^64, no counter) is a ParseError.
import { ParseError } from '../domain/errors.js';
import { parseU64, type U64 } from '../domain/u64.js';
import { clip } from './read.js';

const KIND = 'ethtool-stats';
const HEADER = 'NIC statistics:';
// Driver counter names: mlx5 uses [a-z0-9_]; other drivers add dots, brackets, dashes (`port.rx_bytes`,
// `[0]: rx_ucast_packets` on bnxt, hence one optional `: ` inside the name). The value follows the last `: `.
const COUNTER_LINE = /^[ \t]*([A-Za-z0-9_.[\]-]+(?:: [A-Za-z0-9_.[\]-]+)?):[ \t]+(\S+)[ \t]*$/;
const LANE = /^rx_err_lane_(0|[1-9]\d?)_phy$/;

// A parsed `ethtool -S`: `counters` holds every counter; the named fields are conveniences (null = not printed).
export interface EthtoolStats {
  counters: Record<string, U64>;
  // rx_err_lane_0_phy.. in lane order (pre-FEC raw errors); empty when the driver lacks the capability.
  lanes: U64[];
  correctedBits: U64 | null; // rx_corrected_bits_phy
  pcsSymbolErrors: U64 | null; // rx_pcs_symbol_err_phy (post-FEC)
  symbolErrors: U64 | null; // rx_symbol_err_phy
  crcErrors: U64 | null; // rx_crc_errors_phy
  linkDownEvents: U64 | null; // link_down_events_phy
  rxBits: U64 | null; // rx_bits_phy (only on 2026+ kernels)
}

// Pure parser for the exact stdout of `ethtool -S <iface>`.
export function parseEthtoolStats(text: string): EthtoolStats {
  const lines = text.split(/\r?\n/);
  let end = lines.length;
  while (end > 0 && lines[end - 1]!.trim() === '') end--;
  if (end === 0) throw new ParseError(KIND, 1, 'empty output, expected "NIC statistics:" and counters');

  const seen = new Map<string, { value: U64; line: number }>();
  let start = 0;
  if (lines[0]!.trim() === HEADER) start = 1;
  for (let i = start; i < end; i++) {
    const line = lines[i]!;
    const lineNo = i + 1;
    const m = COUNTER_LINE.exec(line);
    if (!m) {
      const why = line.trim() === '' ? 'blank line inside the counter list' : `not a "name: value" counter line: ${clip(line)}`;
      throw new ParseError(KIND, lineNo, why);
    }
    const name = m[1]!;
    const raw = m[2]!;
    const value = parseU64(raw);
    if (value === null) throw new ParseError(KIND, lineNo, `counter ${name}: ${clip(raw)} is not an unsigned 64-bit integer`);
    const prev = seen.get(name);
    if (prev) throw new ParseError(KIND, lineNo, `counter ${name} repeated (first on line ${prev.line})`);
    seen.set(name, { value, line: lineNo });
  }
  if (seen.size === 0) throw new ParseError(KIND, Math.min(end + 1, lines.length), 'no counters after "NIC statistics:"');

  // Object.fromEntries defines own properties, so even a counter named __proto__ is kept as data.
  const counters: Record<string, U64> = Object.fromEntries([...seen].map(([k, v]) => [k, v.value]));
  const get = (name: string): U64 | null => seen.get(name)?.value ?? null;
  return {
    counters,
    lanes: laneCounters(seen),
    correctedBits: get('rx_corrected_bits_phy'),
    pcsSymbolErrors: get('rx_pcs_symbol_err_phy'),
    symbolErrors: get('rx_symbol_err_phy'),
    crcErrors: get('rx_crc_errors_phy'),
    linkDownEvents: get('link_down_events_phy'),
    rxBits: get('rx_bits_phy'),
  };
}

// Lane N must sit at index N: a gap would shift every later lane, so it is refused rather than packed.
function laneCounters(seen: Map<string, { value: U64; line: number }>): U64[] {
  const byLane = new Map<number, { value: U64; line: number }>();
  for (const [name, v] of seen) {
    const m = LANE.exec(name);
    if (m) byLane.set(Number(m[1]), v);
  }
  const lanes: U64[] = [];
  for (let n = 0; n < byLane.size; n++) {
    const v = byLane.get(n);
    if (!v) {
      const [first] = [...byLane.entries()].filter(([k]) => k > n).sort((a, b) => a[0] - b[0]);
      throw new ParseError(KIND, first?.[1].line ?? 1, `rx_err_lane_${first?.[0] ?? n}_phy present without rx_err_lane_${n}_phy`);
    }
    lanes.push(v.value);
  }
  return lanes;
}
