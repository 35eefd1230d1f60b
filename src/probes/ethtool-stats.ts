// `ethtool -S <iface>`: every counter kept exact (u64 as bigint), plus the PHY counters burn-in grading reads.
//
// Accepted text: an optional `NIC statistics:` first line, then one `name: value` counter per line (any
// indentation: ethtool indents by 5 spaces, grep'ed pastes have none). Without the header every non-blank
// line must still be a counter, so a partial paste parses but stray prose does not. Trailing blank lines
// and CRLF line ends are tolerated; anything else (duplicates, "-1", "N/A", >= 2^64, no counter) is a ParseError.
import { ParseError } from '../domain/errors.js';
import { parseU64, type U64 } from '../domain/u64.js';
import { phyFromNames, type PhyCounters } from '../domain/sample.js';
import { clip } from './read.js';

const KIND = 'ethtool-stats';
const HEADER = 'NIC statistics:';
// Driver counter names: mlx5 uses [a-z0-9_]; other drivers add dots, brackets, dashes (`port.rx_bytes`,
// `[0]: rx_ucast_packets` on bnxt, hence one optional `: ` inside the name). The value follows the last `: `.
const COUNTER_LINE = /^[ \t]*([A-Za-z0-9_.[\]-]+(?:: [A-Za-z0-9_.[\]-]+)?):[ \t]+(\S+)[ \t]*$/;
const LANE = /^rx_err_lane_(0|[1-9]\d?)_phy$/;

// A parsed `ethtool -S`: `counters` holds every counter; `phy` the *_phy counters a sample carries, typed (what the
// sampler keeps); the named fields are conveniences of `cablequal parse` (null = not printed).
export interface EthtoolStats {
  counters: Record<string, U64>;
  phy: PhyCounters;
  // rx_err_lane_0_phy.. in lane order (pre-FEC raw errors); empty when the driver lacks the capability.
  lanes: U64[];
  correctedBits: U64 | null; // rx_corrected_bits_phy
  pcsSymbolErrors: U64 | null; // rx_pcs_symbol_err_phy (post-FEC)
  symbolErrors: U64 | null; // rx_symbol_err_phy
  crcErrors: U64 | null; // rx_crc_errors_phy
  linkDownEvents: U64 | null; // link_down_events_phy
  rxBits: U64 | null; // rx_bits_phy (only on 2026+ kernels)
  recoveries: U64 | null; // total_success_recovery_phy (only on kernels with the 2025-03 mlx5 patch)
}

// Pure parser for the exact stdout of `ethtool -S <iface>`. Runs on every sampling tick for each rail (twice a second
// per node at 1 Hz), so it makes one pass over the lines and no intermediate entries.
export function parseEthtoolStats(text: string): EthtoolStats {
  // Lines as split(/\r?\n/) gives them: one CR before each LF belongs to the line end.
  const lines = text.split('\n');
  for (let i = 0; i < lines.length - 1; i++) if (lines[i]!.endsWith('\r')) lines[i] = lines[i]!.slice(0, -1);
  let end = lines.length;
  while (end > 0 && lines[end - 1]!.trim() === '') end--;
  if (end === 0) throw new ParseError(KIND, 1, 'empty output, expected "NIC statistics:" and counters');

  // Object.defineProperty keeps even a counter named __proto__ as data (an assignment would set the prototype).
  const counters: Record<string, U64> = {};
  let count = 0;
  const laneAt: { lane: number; value: U64; line: number }[] = [];
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
    if (Object.hasOwn(counters, name)) throw new ParseError(KIND, lineNo, `counter ${name} repeated (first on line ${firstLine(lines, name, start) + 1})`);
    count++;
    if (name === '__proto__') Object.defineProperty(counters, name, { value, enumerable: true, writable: true, configurable: true });
    else counters[name] = value;
    const lane = name.startsWith('rx_err_lane_') ? LANE.exec(name) : null;
    if (lane) laneAt.push({ lane: Number(lane[1]), value, line: lineNo });
  }
  if (count === 0) throw new ParseError(KIND, Math.min(end + 1, lines.length), 'no counters after "NIC statistics:"');

  const lanes = laneCounters(laneAt); // refuses a gap, so phy.laneErrors (lanes up to the first missing) are all of them
  const phy = phyFromNames((name) => (Object.hasOwn(counters, name) ? counters[name] : undefined));
  return {
    counters,
    phy,
    lanes,
    correctedBits: phy.correctedBits ?? null,
    pcsSymbolErrors: phy.pcsSymbolErrors ?? null,
    symbolErrors: phy.symbolErrors ?? null,
    crcErrors: phy.crcErrors ?? null,
    linkDownEvents: phy.linkDownEvents ?? null,
    rxBits: phy.rxBits ?? null,
    recoveries: phy.recoveries ?? null,
  };
}

// Index of the first counter line of that name (for the message about a repeated one).
function firstLine(lines: string[], name: string, from: number): number {
  for (let i = from; i < lines.length; i++) if (COUNTER_LINE.exec(lines[i]!)?.[1] === name) return i;
  return from;
}

// Lane N must sit at index N: a gap would shift every later lane, so it is refused rather than packed.
function laneCounters(found: { lane: number; value: U64; line: number }[]): U64[] {
  const byLane = new Map(found.map((f) => [f.lane, f]));
  const lanes: U64[] = [];
  for (let n = 0; n < byLane.size; n++) {
    const v = byLane.get(n);
    if (!v) {
      const [first] = [...byLane.values()].filter((f) => f.lane > n).sort((a, b) => a.lane - b.lane);
      throw new ParseError(KIND, first?.line ?? 1, `rx_err_lane_${first?.lane ?? n}_phy present without rx_err_lane_${n}_phy`);
    }
    lanes.push(v.value);
  }
  return lanes;
}
