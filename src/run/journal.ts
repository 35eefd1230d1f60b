import { closeSync, fsyncSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { bigintReplacer } from '../domain/u64.js';

// The file calls the journal makes, injectable so tests can make the disk fill up mid-run.
export interface JournalIo {
  writeSync(fd: number, buf: Buffer, offset: number, length: number): number;
  fsyncSync(fd: number): void;
}
const nodeIo: JournalIo = { writeSync: (fd, buf, off, len) => writeSync(fd, buf, off, len), fsyncSync };

// The journal could not be written (disk full, quota, I/O error): the run can no longer prove anything.
export class JournalWriteError extends Error {
  override readonly name = 'JournalWriteError';
  constructor(
    readonly path: string,
    readonly errno: string,
    detail: string,
  ) {
    super(`cannot write the journal ${path}: ${errno} (${detail})`);
  }
}

// Every line of journal.jsonl has a type; readers skip types they do not know (forward compatible).
export type JournalLine = { type: string; tS?: number } & Record<string, unknown>;

// Append-only journal: every line is written through at once (a SIGKILL loses at most the line being written)
// and fsynced at least every `fsyncEveryMs`, so a crash keeps everything up to the last tick.
export class JournalWriter {
  private fd: number;
  private lastSync: number;
  private lines = 0;
  private bytes = 0;
  private closed = false;
  // Set by the first failed write or fsync; every later append fails the same way.
  failure: JournalWriteError | null = null;

  constructor(
    readonly path: string,
    private readonly wallNow: () => number = Date.now,
    private readonly fsyncEveryMs = 5000,
    private readonly io: JournalIo = nodeIo,
  ) {
    this.fd = openSync(path, 'a', 0o644);
    this.lastSync = wallNow();
    try {
      this.bytes = statSync(path).size;
    } catch {
      this.bytes = 0;
    }
  }

  // Write one line; bigints become numbers or decimal strings (u64 exact).
  append(line: JournalLine): void {
    if (this.closed) throw new Error(`journal ${this.path} is closed`);
    if (this.failure) throw this.failure;
    const text = `${JSON.stringify(line, bigintReplacer)}\n`;
    const buf = Buffer.from(text, 'utf8');
    let off = 0;
    try {
      while (off < buf.length) off += this.io.writeSync(this.fd, buf, off, buf.length - off);
    } catch (e) {
      throw this.fail(e);
    }
    this.lines++;
    this.bytes += buf.length;
    const now = this.wallNow();
    if (now - this.lastSync >= this.fsyncEveryMs) this.sync();
  }

  sync(): void {
    if (this.closed || this.failure) return;
    try {
      this.io.fsyncSync(this.fd);
    } catch (e) {
      throw this.fail(e);
    }
    this.lastSync = this.wallNow();
  }

  private fail(e: unknown): JournalWriteError {
    const err = e as NodeJS.ErrnoException;
    this.failure = new JournalWriteError(this.path, err.code ?? 'EIO', err.message ?? String(e));
    return this.failure;
  }

  get stats(): { lines: number; bytes: number } {
    return { lines: this.lines, bytes: this.bytes };
  }

  close(): void {
    if (this.closed) return;
    try {
      this.sync();
    } finally {
      closeSync(this.fd);
      this.closed = true;
    }
  }
}

// What a journal held, and whether its last line was cut off (a crash while writing).
export interface JournalContents {
  lines: JournalLine[];
  truncatedTail: boolean;
  badLines: number[];
}

// Read a journal written by JournalWriter; a torn last line (SIGKILL mid-write) is dropped and reported, not fatal.
export function readJournal(path: string): JournalContents {
  const text = readFileSync(path, 'utf8');
  const raw = text.split('\n');
  const lines: JournalLine[] = [];
  const badLines: number[] = [];
  let truncatedTail = false;
  raw.forEach((l, i) => {
    if (l === '') return;
    try {
      const v = JSON.parse(l) as unknown;
      if (v && typeof v === 'object' && typeof (v as { type?: unknown }).type === 'string') lines.push(v as JournalLine);
      else badLines.push(i + 1);
    } catch {
      if (i === raw.length - 1) truncatedTail = true;
      else badLines.push(i + 1);
    }
  });
  return { lines, truncatedTail, badLines };
}
