// The watch's journal, `<out>/watch.jsonl`: every event and each tick's figures, one JSON line each, appended as they
// happen (a watcher killed with SIGKILL loses at most the tick it was taking). A watcher started again on the same
// directory resumes from it: the watch's origin, its alarms not cleared and each cable's drops; counters are taken
// again from the nodes, so nothing is counted twice. A line cut short by a kill is skipped (and said).
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { ensureDir } from '../io/ensure-dir.js';
import type { ActiveAlarm } from './alarms.js';
import type { WatchEvent } from './events.js';
import type { ReceiverFigures, WatchResume, WatchSinks } from './watcher.js';

export const WATCH_JOURNAL = 'watch.jsonl';

// One tick line: every receiver's interval, its figures rounded as a journal line needs them.
export interface TickLine {
  type: 'tick';
  atS: number;
  at: string;
  receivers: ReceiverFigures[];
}

export type JournalLine = WatchEvent | TickLine;

// A cable as a resume knows it: the same cage at the same nodes holding the same serial (a swapped cable starts afresh).
export const cableKey = (c: { cable: string; serial: string | null }) => `${c.cable}|${c.serial ?? ''}`;

// What a journal's lines say for a restart (null: nothing watched yet).
export function resumeOf(lines: readonly JournalLine[]): WatchResume | null {
  const start = lines.find((l) => l.type === 'start');
  if (!start) return null;
  const active = new Map<string, ActiveAlarm>();
  const resets: Record<string, number> = {};
  const down: Record<string, number | null> = {};
  for (const l of lines) {
    const key = 'rule' in l ? `${l.node}|${l.cage}|${l.rule}|${l.lane ?? '-'}` : '';
    if (l.type === 'alarm') {
      const was = active.get(key);
      active.set(key, {
        rule: l.rule,
        grade: l.grade,
        node: l.node,
        cage: l.cage,
        lane: l.lane,
        cable: l.cable,
        serial: l.serial,
        raisedS: was?.raisedS ?? l.atS,
        lastSeenS: l.atS,
      });
    } else if (l.type === 'clear') active.delete(key);
    else if (l.type === 'link-down') {
      resets[cableKey(l)] = Math.max(resets[cableKey(l)] ?? 0, l.resets);
      down[cableKey(l)] = l.atS;
    } else if (l.type === 'link-up') down[cableKey(l)] = null;
  }
  const last = lines.at(-1)!;
  return { originMs: Date.parse(start.at) - start.atS * 1000, lastMs: Date.parse(last.at), alarms: [...active.values()], resets, down };
}

// Every line of a journal's text. A line cut short by a kill (the last one, or one a restart wrote after) is left out
// and counted; a first line that is not a watch's is refused (the directory holds something else).
export function readJournalText(text: string, file: string): { lines: JournalLine[]; cut: number } {
  const raw = text.split('\n');
  if (raw.at(-1) === '') raw.pop();
  const lines: JournalLine[] = [];
  let cut = 0;
  for (const t of raw) {
    try {
      lines.push(JSON.parse(t) as JournalLine);
    } catch {
      cut++;
    }
  }
  if (raw.length > 0 && lines[0]?.type !== 'start')
    throw new UsageError(`${file}: not a watch journal (its first line is not a watch's start): give --out a directory of its own`);
  return { lines, cut };
}

// The journal of a directory (created when needed) as the watch's sinks, and what it holds for a resume.
export function openWatchJournal(dir: string): {
  sinks: Required<Pick<WatchSinks, 'event' | 'tick'>>;
  resume: WatchResume | null;
  path: string;
  cutLines: number;
} {
  ensureDir(dir, '--out');
  const path = join(dir, WATCH_JOURNAL);
  let resume: WatchResume | null = null;
  let cutLines = 0;
  if (existsSync(path)) {
    const text = readFileSync(path, 'utf8');
    const { lines, cut } = readJournalText(text, path);
    resume = resumeOf(lines);
    cutLines = cut;
    // A line cut short by a kill ends without a newline: the next line must not be glued to it.
    if (text.length > 0 && !text.endsWith('\n')) appendFileSync(path, '\n');
  }
  const append = (line: JournalLine) => appendFileSync(path, `${JSON.stringify(line)}\n`);
  return {
    path,
    resume,
    cutLines,
    sinks: {
      event: (e) => append(e),
      tick: (atS, at, receivers) => {
        if (receivers.length) append({ type: 'tick', atS, at, receivers });
      },
    },
  };
}
