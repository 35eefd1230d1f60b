// The store's hook into `run` and `batch`: start, a throttled live status, end. Writes are queued and never awaited
// by the run; a store failure is one warning and never loses or fails a run (journal and record are on disk, and
// `cablequal db import` adds the run later).
import { hostname } from 'node:os';
import { certificateOf } from './run-files.js';
import type { ResultsStore, RunStart } from './store.js';
import type { RunPlace } from './run-row.js';

// The live figures a run reports once a second (src/run/context.ts LiveStatus, read structurally).
export interface LiveFigures {
  phase: string;
  elapsedS: number;
  remainingS: number | null;
  samples?: unknown;
}

export class StoreRecorder {
  private queue: Promise<void> = Promise.resolve();
  private readonly lastWrite = new Map<string, number>();
  private readonly seq = new Map<string, number>();
  private readonly pending = new Map<string, LiveFigures>();
  private warned = false;
  readonly controller = hostname();

  constructor(
    readonly store: ResultsStore | null,
    private readonly warn: (line: string) => void,
    private readonly opts: { minIntervalMs?: number; now?: () => number } = {},
  ) {}

  // A run began (before its EEPROM is read: no cable yet).
  started(s: Omit<RunStart, 'controller'>): void {
    this.enqueue((st) => st.runStarted({ ...s, controller: this.controller }));
  }

  // At most one write per run every few seconds; the latest status wins, older ones in between are dropped.
  status(runId: string, s: LiveFigures): void {
    if (!this.store) return;
    // The raw samples (counters as bigints) are for the metrics, not the store.
    const { samples: _samples, ...figures } = s;
    s = figures as LiveFigures;
    const now = (this.opts.now ?? Date.now)();
    const last = this.lastWrite.get(runId);
    this.pending.set(runId, s);
    if (last !== undefined && now - last < (this.opts.minIntervalMs ?? 3000)) return;
    this.lastWrite.set(runId, now);
    this.flushStatus(runId, now);
  }

  // The run ended and its record (and reports) are written: the full row; the live row goes.
  async finished(record: unknown, runDir: string, place: Omit<RunPlace, 'runDir' | 'controller' | 'certificate'> = {}): Promise<void> {
    this.enqueue((st) => st.runFinished(record, { ...place, runDir, controller: this.controller, certificate: certificateOf(runDir) }).then(() => undefined));
    await this.flush();
  }

  // Anything else to write (a batch row), through the same queue and failure handling.
  write(fn: (st: ResultsStore) => Promise<void>): void {
    this.enqueue(fn);
  }

  async flush(): Promise<void> {
    await this.queue;
  }

  async close(): Promise<void> {
    await this.flush();
    await this.store?.close().catch(() => undefined);
  }

  private flushStatus(runId: string, now: number): void {
    const s = this.pending.get(runId);
    if (!s) return;
    this.pending.delete(runId);
    const seq = (this.seq.get(runId) ?? 0) + 1;
    this.seq.set(runId, seq);
    this.enqueue((st) => st.runLive(runId, seq, new Date(now).toISOString(), s));
  }

  private enqueue(fn: (st: ResultsStore) => Promise<void>): void {
    const store = this.store;
    if (!store) return;
    this.queue = this.queue.then(() =>
      fn(store).catch((e: unknown) => {
        if (this.warned) return;
        this.warned = true;
        this.warn(
          `cablequal: warning: results store ${store.where}: ${(e as Error).message}; the run goes on (journal and record are on disk; \`cablequal db import\` adds it later)`,
        );
      }),
    );
  }
}
