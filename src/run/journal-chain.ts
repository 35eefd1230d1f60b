// The journal's hash chain: every line written carries `prev`, the SHA-256 (hex) of the previous line's bytes (without
// its newline); the first line carries CHAIN_START. A line deleted, inserted, duplicated, reordered or edited breaks
// the chain at the line after it, and the reader names that line. The chain is not a signature (anyone can recompute
// it): it makes a partial edit visible, the certificate's signed journal hash makes any edit visible. Journals written
// before the chain (no `prev` anywhere) are read as unchained, with a note.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, fstatSync } from 'node:fs';

// What the first line of a chained journal carries as `prev`.
export const CHAIN_START = '0'.repeat(64);

// SHA-256 (hex) of one line's bytes, without its newline.
export function lineHash(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

// A line as the writer puts it on disk: its JSON with `prev` added last.
export function chainLine(json: string, prev: string): string {
  return `${json.slice(0, -1)}${json.length > 2 ? ',' : ''}"prev":"${prev}"}`;
}

// What the chain says about a journal.
export interface JournalChain {
  status: 'intact' | 'broken' | 'unchained';
  lastHash: string | null; // hash of the journal's last complete line (what the next line would carry)
  breaks: { line: number; reason: string }[];
}

// Follows the chain line by line as a journal is read.
export class ChainTracker {
  private expected = CHAIN_START;
  private chained = false;
  private readonly breaks: { line: number; reason: string }[] = [];
  private readonly unchained: number[] = [];
  private readonly unreadable: number[] = [];
  private last: string | null = null;

  // One line (non-empty) with its bytes; `parsed` is its JSON object, or null when it was not a journal line.
  line(lineNo: number, bytes: Buffer | string, parsed: Record<string, unknown> | null): void {
    const h = lineHash(bytes);
    if (parsed === null) this.unreadable.push(lineNo);
    else if (typeof parsed['prev'] === 'string') {
      this.chained = true;
      if (parsed['prev'] !== this.expected) {
        this.breaks.push({
          line: lineNo,
          reason:
            this.expected === CHAIN_START
              ? "the chain does not start here (the journal's first line was deleted or replaced)"
              : `its prev hash does not match the line before it: a line was deleted, inserted, reordered or edited just before line ${lineNo}`,
        });
      }
    } else this.unchained.push(lineNo);
    this.expected = h;
    this.last = h;
  }

  result(): JournalChain {
    if (!this.chained) return { status: 'unchained', lastHash: this.last, breaks: [] };
    const breaks = [
      ...this.breaks,
      ...this.unchained.map((line) => ({ line, reason: 'no prev hash in a chained journal: the line was inserted or rewritten' })),
      ...this.unreadable.map((line) => ({ line, reason: 'not a journal line in a chained journal: the line was damaged or inserted' })),
    ].sort((a, b) => a.line - b.line);
    return { status: breaks.length ? 'broken' : 'intact', lastHash: this.last, breaks };
  }
}

// The chain of lines already parsed (a journal held in memory): each line's bytes are its JSON text, which is what
// the writer put on disk for every line it wrote.
export function chainOfLines(lines: readonly Record<string, unknown>[], lineNos?: readonly number[]): JournalChain {
  const t = new ChainTracker();
  lines.forEach((l, i) => t.line(lineNos?.[i] ?? i + 1, JSON.stringify(l), l));
  return t.result();
}

// The hash of a file's last complete line (CHAIN_START for an empty file), to continue the chain when appending.
export function lastLineHash(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return CHAIN_START;
    let chunk = 1 << 16;
    for (;;) {
      const from = Math.max(0, size - chunk);
      const buf = Buffer.alloc(size - from);
      readSync(fd, buf, 0, buf.length, from);
      const end = buf[buf.length - 1] === 10 ? buf.length - 1 : buf.length;
      const nl = end > 0 ? buf.lastIndexOf(10, end - 1) : -1;
      if (nl >= 0 || from === 0) return lineHash(buf.subarray(nl + 1, end));
      chunk *= 4;
    }
  } finally {
    closeSync(fd);
  }
}
