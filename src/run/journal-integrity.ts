// What makes a journal unable to support any verdict, beyond a broken hash chain: the protocol it embeds is not the
// one it recorded running (or takes a built-in protocol's name on another text), it says it was written chained but
// no line carries the chain, or its samples disagree with the raw counters the node printed at the phase boundaries.
// Each is an ERROR naming the journal line: a journal must not be re-graded into a better verdict by editing it.
import { createHash } from 'node:crypto';
import type { Reason } from '../domain/outcome.js';
import { phyToNames } from '../domain/sample.js';
import { rawDumpMismatch, DUMP_BRACKET, type CounterReading, type RawDump } from '../grading/raw-dumps.js';
import { builtinStatus } from '../protocol/released.js';
import { parseEthtoolStats } from '../probes/ethtool-stats.js';
import type { JournalChain } from './journal-chain.js';
import type { JournalContents, JournalLine } from './journal.js';
import { decodeSample } from './sample-codec.js';
import { identityProblems } from './journal-labels.js';

// What run-start says of a journal written with the hash chain (journal-chain.ts).
export const CHAIN_MARK = 'sha256-prev';

const ADVICE = 'use the journal as the run wrote it (a backup or the lab archive), or qualify the cable again';

// Every integrity problem of a screened journal whose run-start is `start`, with its chain as read.
export function integrityReasons(contents: JournalContents, start: JournalLine, chain: JournalChain): Reason[] {
  // A journal that ends on its own write failure (journal-rescue.ts) is ERROR whatever its samples say: its last raw
  // dump may have no sample after it (the run stopped there), which is not the samples disagreeing with the node.
  const lost = contents.lines.some((l) => l.type === 'setup-error' && (l['reason'] as { rule?: unknown } | undefined)?.rule === 'journal-write');
  return [
    ...protocolProblems(contents, start),
    ...chainMarkProblems(contents, start, chain),
    ...identityProblems(contents),
    ...(lost ? [] : rawDumpProblems(contents)),
  ];
}

const lineOf = (contents: JournalContents, i: number) => contents.lineNos?.[i] ?? i + 1;

// The embedded protocol text must hash to the sha256 run-start recorded, and a built-in's name must be on a text of it.
function protocolProblems(contents: JournalContents, start: JournalLine): Reason[] {
  const line = lineOf(contents, contents.lines.indexOf(start));
  const recorded = start['protocol'] as { name?: unknown; sha256?: unknown } | undefined;
  const text = start['protocolText'];
  if (typeof text !== 'string' || typeof recorded?.sha256 !== 'string' || typeof recorded.name !== 'string') return [];
  const actual = createHash('sha256').update(text, 'utf8').digest('hex');
  if (actual !== recorded.sha256) {
    return [
      {
        rule: 'journal-protocol',
        value: actual,
        message: `journal line ${line} (run-start): the protocol text it embeds hashes to ${actual}, not to the ${recorded.sha256} the run recorded: the protocol in the journal is not the one that ran`,
        advice: `${ADVICE}; to grade with other limits, give them with --protocol (the record then names both)`,
      },
    ];
  }
  if (builtinStatus(recorded.name, actual) === 'foreign') {
    return [
      {
        rule: 'journal-protocol',
        value: recorded.name,
        message: `journal line ${line} (run-start): the protocol is named "${recorded.name}", a built-in protocol, but its text (${actual}) is none of the versions cablequal shipped under that name`,
        advice: ADVICE,
      },
    ];
  }
  return [];
}

// A journal whose run-start says it was written chained must be: `prev` stripped from every line reads as unchained.
function chainMarkProblems(contents: JournalContents, start: JournalLine, chain: JournalChain): Reason[] {
  if (start['chain'] !== CHAIN_MARK || chain.status !== 'unchained') return [];
  return [
    {
      rule: 'journal-chain',
      value: lineOf(contents, contents.lines.indexOf(start)),
      message: `journal line ${lineOf(contents, contents.lines.indexOf(start))} (run-start) says the journal was written with its hash chain, but no line carries one: the chain was stripped; the journal cannot support a verdict`,
      advice: ADVICE,
    },
  ];
}

const DUMP_WHAT = /(?:^|:)ethtool-stats:([^:]+)$/;

type SampleLine = JournalLine & { sample: { node: string; rails: { netdev: string }[] } };

// Each raw `ethtool -S` dump against the samples of the same node and function around it.
function rawDumpProblems(contents: JournalContents): Reason[] {
  const { lines } = contents;
  const sampleIdx = new Map<string, number[]>(); // node -> indexes of its sample lines, in journal order
  lines.forEach((l, i) => {
    if (l.type !== 'sample') return;
    const node = (l as SampleLine).sample.node;
    const list = sampleIdx.get(node) ?? [];
    list.push(i);
    sampleIdx.set(node, list);
  });
  const out: Reason[] = [];
  lines.forEach((l, i) => {
    const dump = dumpOf(l, lineOf(contents, i));
    if (!dump) return;
    const idx = sampleIdx.get(dump.node) ?? [];
    const at = lowerBound(idx, i);
    const reading = (j: number): CounterReading | null => {
      const rail = decodeSample((lines[j] as SampleLine).sample, dump.netdev).rails.find((r) => r.netdev === dump.netdev);
      return rail ? { line: lineOf(contents, j), counters: Object.fromEntries(phyToNames(rail.phy)) } : null;
    };
    const before = idx.slice(Math.max(0, at - DUMP_BRACKET), at).map(reading);
    const after = idx.slice(at, at + DUMP_BRACKET).map(reading);
    const r = rawDumpMismatch(
      dump,
      before.filter((x): x is CounterReading => x !== null),
      after.filter((x): x is CounterReading => x !== null),
      idx.length ? reading(idx[0]!) : null,
    );
    if (r) out.push(r);
  });
  return out.slice(0, 5);
}

// A raw line holding a complete `ethtool -S` of one function, parsed; null for any other line or one not readable.
function dumpOf(l: JournalLine, line: number): RawDump | null {
  if (l.type !== 'raw' || typeof l['what'] !== 'string' || typeof l['node'] !== 'string' || typeof l['stdout'] !== 'string') return null;
  if (l['exitCode'] !== 0) return null;
  const m = DUMP_WHAT.exec(l['what']);
  if (!m) return null;
  try {
    return { line, node: l['node'], netdev: m[1]!, counters: parseEthtoolStats(l['stdout']).counters };
  } catch {
    return null; // the node printed something this parser does not read: nothing to compare
  }
}

// The first index of `xs` (ascending) not below `v`.
function lowerBound(xs: readonly number[], v: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
