// The journal keeps the full `ethtool -S` of every cabled function at each phase boundary (raw, as the node printed
// it) beside the samples the verdict is computed from. A hardware counter only grows, so each raw dump must lie
// between the samples of the same function read around it: a sample series edited to hide errors (counters
// flattened) disagrees with the raw dumps, and the journal cannot support a verdict. Pure: the record builder hands in
// the dumps, already parsed, and the samples nearest to each.
import type { Reason } from '../domain/outcome.js';
import type { U64 } from '../domain/u64.js';

// One raw `ethtool -S` dump of the journal, parsed: its line, node, function and the *_phy counters it printed.
export interface RawDump {
  line: number;
  node: string;
  netdev: string;
  counters: Readonly<Record<string, U64>>;
}

// The counters of one sample of the same node and function, with its journal line.
export interface CounterReading {
  line: number;
  counters: Readonly<Record<string, U64>>;
}

// Counters that count errors or faults: the samples must account for every one the node counted, even after the last
// sample, where the samples never saw the counter move.
const ERROR_COUNTER = /^(rx_crc_errors|rx_pcs_symbol_err|link_down_events|rx_symbol_err|rx_corrected_bits|rx_err_lane_\d+)_phy$/;

// How many samples either side of a dump bound it: the dump's command and a tick's reads overlap in time, so the
// sample just before it in the journal may have been read just after it (and the other way round).
export const DUMP_BRACKET = 2;

// The first counter of a dump outside what the samples around it read, as an ERROR reason naming both lines; null
// when the dump agrees (or no sample brackets it). A counter that went backwards among the samples (a reset) is not
// compared: the dump may fall either side of the reset. A dump after the last sample (the run's end) bounds a fault
// counter the samples never saw move: the node counted faults the samples do not show (`first`: the function's
// first sample).
export function rawDumpMismatch(
  dump: RawDump,
  before: readonly CounterReading[],
  after: readonly CounterReading[],
  first: CounterReading | null = null,
): Reason | null {
  for (const [name, raw] of Object.entries(dump.counters)) {
    if (!name.endsWith('_phy')) continue;
    const last = before.at(-1)?.counters[name];
    if (!after.length && last !== undefined && ERROR_COUNTER.test(name) && raw > last && first?.counters[name] === last) {
      return {
        rule: 'journal-raw-mismatch',
        node: dump.node,
        value: name,
        message: `journal line ${dump.line} (the raw ethtool -S of ${dump.node} ${dump.netdev}) reads ${name} = ${raw}, but every sample of it, from journal line ${first.line} to line ${before.at(-1)!.line}, read ${last}: the samples do not show the faults the node counted`,
        advice: 'the journal was edited, or faults came after the last sample: use the journal as the run wrote it, or qualify the cable again',
      };
    }
    // The lowest reading before the dump and the highest after it, and whether the readings went backwards (a reset).
    let lo: { line: number; v: U64 } | null = null;
    let hi: { line: number; v: U64 } | null = null;
    let prev: U64 | null = null;
    let reset = false;
    for (const r of before) {
      const v = r.counters[name];
      if (v === undefined) continue;
      if (prev !== null && v < prev) reset = true;
      if (lo === null || v < lo.v) lo = { line: r.line, v };
      prev = v;
    }
    for (const r of after) {
      const v = r.counters[name];
      if (v === undefined) continue;
      if (prev !== null && v < prev) reset = true;
      if (hi === null || v > hi.v) hi = { line: r.line, v };
      prev = v;
    }
    if (reset || (lo === null && hi === null)) continue;
    const below = lo !== null && raw < lo.v;
    const above = hi !== null && raw > hi.v;
    if (!below && !above) continue;
    const against = below ? lo! : hi!;
    return {
      rule: 'journal-raw-mismatch',
      node: dump.node,
      value: name,
      message: `journal line ${dump.line} (the raw ethtool -S of ${dump.node} ${dump.netdev}) reads ${name} = ${raw}, but the sample on journal line ${against.line} read ${against.v} ${below ? 'before' : 'after'} it: a counter only grows, so the samples do not show what the node printed`,
      advice: 'the journal was edited: use the journal as the run wrote it (a backup or the lab archive), or qualify the cable again',
    };
  }
  return null;
}
