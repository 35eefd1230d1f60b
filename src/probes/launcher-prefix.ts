// The prefix a cluster launcher puts before every line of a job's output, as labs paste it from a job log:
// `srun --label` (` 0: `, the task id right-aligned to the width of the largest one) and OpenMPI `--tag-output`
// (`[1,0]<stdout>:`, job id and rank). docs/formats.md §6a; samples/nccl/*srun-label*, samples/nccl/*tag-output*.
import { ParseError } from '../domain/errors.js';
import { clip } from './read.js';

// Which launcher wrote the prefixes.
export type LauncherKind = 'srun --label' | 'mpirun --tag-output';

// What the prefixes said: the launcher, every rank they named (ascending), and the rank whose lines carried the result
// (the table, the result rows): null when the result lines had no prefix.
export interface LauncherPrefix {
  kind: LauncherKind;
  ranks: number[];
  resultRank: number | null;
}

// The text with each line's prefix taken off (same lines, same numbers) and the rank each prefix named (null: none).
export interface Unprefixed {
  lines: string[];
  ranks: (number | null)[];
  kind: LauncherKind | null;
}

// ` 0: text` (a bare ` 0:` for an empty line); the label is digits then a colon, then one space or the line's end.
const SRUN = /^\s*(\d{1,7}):(?: |\r?$)/;
// `[1,0]<stdout>:text` (OpenMPI 4) or `[1,0]<stdout>: text` (PRRTE, OpenMPI 5); stderr and stddiag are tagged alike.
const TAG = /^\s*\[(\d{1,9}),(\d{1,7})\]<(?:stdout|stderr|stddiag)>: ?/;

// Take a consistent launcher prefix off every line. Lines without one are the launcher's own messages (ssh warnings,
// mpirun's summary) and pass unchanged. Refused, naming the line: a second kind of prefix, or a second OpenMPI job id.
export function stripLauncherPrefix(text: string, kind: string): Unprefixed {
  const raw = text.split('\n');
  const lines: string[] = [];
  const ranks: (number | null)[] = [];
  let found: { kind: LauncherKind; line: number; job?: string } | null = null;
  for (let i = 0; i < raw.length; i++) {
    const line = raw[i]!;
    const tag = TAG.exec(line);
    const srun = tag ? null : SRUN.exec(line);
    const m = tag ?? srun;
    if (!m) {
      lines.push(line);
      ranks.push(null);
      continue;
    }
    const k: LauncherKind = tag ? 'mpirun --tag-output' : 'srun --label';
    if (found && found.kind !== k) {
      throw new ParseError(kind, i + 1, `${k} prefix ${clip(m[0])}, but line ${found.line} started ${found.kind} prefixes: paste one launcher's output`);
    }
    if (tag && found?.job !== undefined && found.job !== tag[1]) {
      throw new ParseError(kind, i + 1, `mpirun job ${tag[1]} in ${clip(m[0])}, but line ${found.line} was job ${found.job}: paste one job's output`);
    }
    found ??= { kind: k, line: i + 1, ...(tag ? { job: tag[1]! } : {}) };
    lines.push(line.slice(m[0].length));
    ranks.push(Number(tag ? tag[2] : srun![1]));
  }
  return { lines, ranks, kind: found?.kind ?? null };
}

// Watch the lines a parse takes its result from (a table, result rows): they must come from one rank, all with a
// prefix or all without one; otherwise the text holds two outputs and `take` refuses the first line that differs.
// `launcher()` then says what the prefixes named.
export function resultRank(u: Unprefixed, kind: string, what: string): { take: (index: number) => void; launcher: () => LauncherPrefix | undefined } {
  let first: { rank: number | null; line: number } | null = null;
  const say = (r: number | null) => (r === null ? 'no launcher prefix' : `rank ${r}`);
  return {
    take(index) {
      const rank = u.ranks[index] ?? null;
      if (first === null) first = { rank, line: index + 1 };
      else if (rank !== first.rank) {
        throw new ParseError(kind, index + 1, `${what} line from ${say(rank)}, but line ${first.line} came from ${say(first.rank)}: one ${what} per text`);
      }
    },
    launcher() {
      if (u.kind === null) return undefined;
      const named = [...new Set(u.ranks.filter((r): r is number => r !== null))].sort((a, b) => a - b);
      return { kind: u.kind, ranks: named, resultRank: first?.rank ?? null };
    },
  };
}
