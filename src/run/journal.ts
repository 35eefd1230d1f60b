import { accessSync, closeSync, constants, fstatSync, fsyncSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { grewPastLimit, openInput, readFailed } from '../io/read-input.js';
import { bigintReplacer } from '../domain/u64.js';
import { CHAIN_START, ChainTracker, chainLine, lastLineHash, lineHash, type JournalChain } from './journal-chain.js';
import { JOURNAL_SIG, sigPayload, type JournalSigner } from './journal-signing.js';

// The file calls the journal makes, injectable so tests can make the disk fill up (or the run directory read-only)
// mid-run. `fstatSync` tells a deleted journal (no link left) before each line; `dirWritable` throws when the run
// directory can no longer take the record (checked at each checkpoint).
export interface JournalIo {
  writeSync(fd: number, buf: Buffer, offset: number, length: number): number;
  fsyncSync(fd: number): void;
  fstatSync?(fd: number): { nlink: number; ino: number; dev: number };
  statSync?(path: string): { ino: number; dev: number };
  dirWritable?(dir: string): void;
}
const nodeIo: JournalIo = {
  writeSync: (fd, buf, off, len) => writeSync(fd, buf, off, len),
  fsyncSync,
  fstatSync,
  statSync: (path) => statSync(path),
  dirWritable: (dir) => accessSync(dir, constants.W_OK),
};

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
// and fsynced at least every `fsyncEveryMs`, so a crash keeps everything up to the last tick. Each line carries
// `prev`, the hash of the line before it (journal-chain.ts). With a signer (the lab key), every fsync and every
// checkpoint() first appends a `journal-sig` line signing the chain head (journal-signing.ts).
export class JournalWriter {
  private fd: number;
  private prev = CHAIN_START;
  private lastSync: number;
  private lines = 0;
  private bytes = 0;
  private closed = false;
  private unsigned = 0; // lines written since the last signature line
  private lastTS: number | undefined; // the tS of the last line appended (a signature line carries it)
  // Set by the first failed write or fsync; every later append fails the same way.
  failure: JournalWriteError | null = null;

  constructor(
    public path: string,
    private readonly wallNow: () => number = Date.now,
    private readonly fsyncEveryMs = 5000,
    private readonly io: JournalIo = nodeIo,
    private readonly signer: JournalSigner | null = null,
  ) {
    this.fd = openSync(path, 'a+', 0o644); // read as well: a journal deleted mid-run is rescued from its fd
    this.lastSync = wallNow();
    try {
      this.bytes = statSync(path).size;
    } catch {
      this.bytes = 0;
    }
    if (this.bytes > 0) this.prev = lastLineHash(path);
  }

  // The run directory was renamed (named by the cable's serial once read): the open fd follows, the path is told.
  relocate(path: string): void {
    this.path = path;
  }

  // The hash of the last line written (what the next line carries as `prev`; the record names it).
  get lastHash(): string {
    return this.prev;
  }

  // Write one line; bigints become numbers or decimal strings (u64 exact). `plain`: the caller already made the
  // line JSON-safe (no bigint anywhere), so the per-key replacer, most of a sample line's cost, is skipped.
  append(line: JournalLine, opts?: { plain?: boolean }): void {
    if (this.closed) throw new Error(`journal ${this.path} is closed`);
    if (this.failure) throw this.failure;
    // Before each line (two syscalls, ~7 us): the file still linked, its directory writable.
    this.checkPlace();
    if (line.tS !== undefined) this.lastTS = line.tS;
    this.write(opts?.plain ? JSON.stringify(line) : JSON.stringify(line, bigintReplacer));
    this.unsigned++;
    const now = this.wallNow();
    if (now - this.lastSync >= this.fsyncEveryMs) this.checkpoint();
  }

  // Sign the chain head (with a signer) and fsync: at phase ends and before closing, as at every periodic fsync.
  checkpoint(): void {
    if (this.closed || this.failure) return;
    if (this.signer && this.unsigned > 0) {
      this.write(JSON.stringify(this.sigLine()));
      this.unsigned = 0;
    }
    this.sync();
  }

  private sigLine(): JournalLine {
    return {
      type: JOURNAL_SIG,
      ...(this.lastTS !== undefined ? { tS: this.lastTS } : {}),
      signer: this.signer!.fingerprint,
      sig: this.signer!.sign(sigPayload(this.prev)),
    };
  }

  // A journal deleted while the run writes it has no link left: every later line would go nowhere. A run directory
  // that can no longer be written cannot take the record at the end.
  private checkPlace(): void {
    let st: { nlink: number; ino: number; dev: number } | null;
    try {
      st = this.io.fstatSync?.(this.fd) ?? null;
    } catch (e) {
      throw this.fail(e);
    }
    if (st?.nlink === 0) throw this.fail({ code: 'ENOENT', message: 'the journal file was deleted while the run was writing it' });
    if (st && this.io.statSync) {
      let at: { ino: number; dev: number };
      try {
        at = this.io.statSync(this.path);
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        throw this.fail({
          code: err.code ?? 'ENOENT',
          message: `the run directory ${dirname(this.path)} was moved, deleted or replaced while the run was writing its journal`,
        });
      }
      if (at.ino !== st.ino || at.dev !== st.dev)
        throw this.fail({ code: 'ENOENT', message: `${this.path} is no longer the file the run writes (replaced while the run was writing it)` });
    }
    try {
      this.io.dirWritable?.(dirname(this.path));
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw this.fail({ code: err.code ?? 'EACCES', message: `the run directory ${dirname(this.path)} is no longer writable: ${err.message}` });
    }
  }

  // What the journal holds, rescued from its open fd (deleted or on a full disk), with `extra` lines appended to the
  // chain (and signed, with a signer): every complete line written, a torn last line dropped.
  rescue(extra: JournalLine[]): Buffer {
    const size = fstatSync(this.fd).size;
    const buf = Buffer.alloc(size);
    let got = 0;
    while (got < size) {
      const n = readSync(this.fd, buf, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    const end = buf.lastIndexOf(10, got - 1) + 1;
    const parts = [buf.subarray(0, end)];
    const from = end >= 2 ? buf.lastIndexOf(10, end - 2) + 1 : 0; // the last complete line's first byte
    let prev = end > 0 ? lineHash(buf.subarray(from, end - 1)) : CHAIN_START;
    const add = (json: string) => {
      const line = chainLine(json, prev);
      prev = lineHash(line);
      parts.push(Buffer.from(`${line}\n`, 'utf8'));
    };
    for (const l of extra) add(JSON.stringify(l, bigintReplacer));
    if (this.signer) {
      this.prev = prev;
      add(JSON.stringify(this.sigLine()));
    }
    return Buffer.concat(parts);
  }

  private write(json: string): void {
    const chained = chainLine(json, this.prev);
    const buf = Buffer.from(`${chained}\n`, 'utf8');
    let off = 0;
    try {
      while (off < buf.length) off += this.io.writeSync(this.fd, buf, off, buf.length - off);
    } catch (e) {
      throw this.fail(e);
    }
    this.prev = lineHash(buf.subarray(0, buf.length - 1));
    this.lines++;
    this.bytes += buf.length;
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
      this.checkpoint();
    } finally {
      closeSync(this.fd);
      this.closed = true;
    }
  }
}

// A journal line left out on reading, with why (1-based line number).
export interface JournalProblem {
  line: number;
  reason: string;
}

// What a journal held, and whether its last line was cut off (a crash while writing).
export interface JournalContents {
  lines: JournalLine[];
  truncatedTail: boolean;
  badLines: number[];
  // Why each bad line was left out (not JSON, no type, or fields a reader needs missing or of the wrong type).
  problems?: JournalProblem[];
  // File line number of each entry of `lines` (absent: lines are numbered in order).
  lineNos?: number[];
  // Set once screenJournal has checked the lines' fields.
  screened?: boolean;
  // The hash chain as read from the file's bytes (absent: the lines were not read from a file).
  chain?: JournalChain;
}

// What a journal read may be given: `maxBytes`, the largest journal read (default INPUT_LIMITS.journal, 768 MiB; a
// larger one is refused with one line naming it, before a byte is parsed).
export interface JournalReadOptions {
  maxBytes?: number;
}

// The longest journal line read: a run-start line carries the protocol's text (at most 1 MiB, escaped at most 6x);
// the longest line of the full procedure's journal is 46 KB. A longer one (a gigabyte of zeros, a line never ended)
// is one bad line, skipped to its end without being held.
export const MAX_JOURNAL_LINE = 16 << 20;

// Read a journal written by JournalWriter; a torn last line (SIGKILL mid-write) is dropped and reported, not fatal.
// Line numbers are kept (lineNos[i] is the file line of lines[i]) so that a line screened out later is named.
// A FIFO, a device or a journal over the bound is a UsageError naming it (read-input.ts).
export function readJournal(path: string, o: JournalReadOptions = {}): JournalContents {
  const lines: JournalLine[] = [];
  const lineNos: number[] = [];
  const chain = new ChainTracker();
  const { truncatedTail, badLines, problems } = forEachJournalLine(
    path,
    (l, n) => {
      lines.push(l);
      lineNos.push(n);
    },
    chain,
    o,
  );
  return { lines, truncatedTail, badLines, problems, lineNos, chain: chain.result() };
}

// Stream a journal line by line (never the whole file in one string: a 10 Hz run's journal is ~100 MB);
// same tolerance as readJournal: a torn last line is reported, a bad line elsewhere is listed by number and left
// out. (Lines that parse but lack fields a reader needs are screened out by screenJournal, journal-shape.ts.)
export function forEachJournalLine(
  path: string,
  visit: (line: JournalLine, lineNo: number) => void,
  chain?: ChainTracker, // follows the hash chain over each line's bytes when given
  o: JournalReadOptions = {},
): { truncatedTail: boolean; badLines: number[]; problems: JournalProblem[] } {
  const badLines: number[] = [];
  const problems: JournalProblem[] = [];
  let truncatedTail = false;
  let lineNo = 0;
  const bad = (reason: string) => {
    badLines.push(lineNo);
    problems.push({ line: lineNo, reason });
  };
  const take = (bytes: Buffer, last: boolean) => {
    lineNo++;
    if (bytes.length === 0) return;
    const text = bytes.toString('utf8');
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      if (last) truncatedTail = true;
      else {
        bad('not JSON');
        chain?.line(lineNo, bytes, null);
      }
      return;
    }
    if (!v || typeof v !== 'object' || Array.isArray(v) || typeof (v as { type?: unknown }).type !== 'string') {
      chain?.line(lineNo, bytes, null);
      return bad('not a journal line (no "type")');
    }
    chain?.line(lineNo, bytes, v as Record<string, unknown>);
    visit(v as JournalLine, lineNo);
  };
  const { fd, size, label, limit } = openInput(path, 'journal', o.maxBytes !== undefined ? { maxBytes: o.maxBytes } : {});
  try {
    let buf = Buffer.allocUnsafe(Math.min(1 << 22, size + 1));
    let filled = 0; // bytes in buf; [0, filled) holds the start of a line not yet complete
    let skipping = false; // inside a line longer than MAX_JOURNAL_LINE: its bytes are dropped up to its newline
    let read = 0;
    for (;;) {
      if (filled === buf.length) {
        if (filled >= MAX_JOURNAL_LINE) {
          if (!skipping) {
            lineNo++;
            bad(`longer than ${MAX_JOURNAL_LINE} bytes: not a journal line cablequal wrote`);
            chain?.line(lineNo, buf.subarray(0, 0), null);
          }
          skipping = true;
          filled = 0;
        } else {
          const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, MAX_JOURNAL_LINE)); // one line longer than the buffer
          buf.copy(bigger, 0, 0, filled);
          buf = bigger;
        }
      }
      let n: number;
      try {
        n = readSync(fd, buf, filled, buf.length - filled, null);
      } catch (e) {
        throw readFailed(label, 'journal', e);
      }
      if (n === 0) break;
      read += n;
      // A journal that grows while it is read (a run still writing it) is read to the bound, never for ever.
      if (read > limit) throw grewPastLimit(label, 'journal', limit);
      const end = filled + n;
      let start = 0;
      for (let nl = buf.indexOf(10, filled); nl !== -1 && nl < end; nl = buf.indexOf(10, start)) {
        if (skipping) skipping = false;
        else take(buf.subarray(start, nl), false);
        start = nl + 1;
        if (start >= end) break;
      }
      filled = end - start;
      if (skipping && start === 0)
        filled = 0; // still no newline: drop what was read of the long line
      else if (start > 0 && filled > 0) buf.copy(buf, 0, start, end);
    }
    if (!skipping) take(buf.subarray(0, filled), true); // the bytes after the last newline (none when the file ends with one)
  } finally {
    closeSync(fd);
  }
  return { truncatedTail, badLines, problems };
}
