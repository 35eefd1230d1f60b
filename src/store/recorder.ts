// The store's hook into `run` and `batch`: start, a throttled live status, end. The run never waits on the store:
// each hook queues its write and returns, the store is opened by the first write, and each write (the opening
// included) must be done within a deadline. The first write that fails or misses it gives the store up for the rest
// of the command, with one warning: journal and record are on disk, and `cablequal db import` adds the runs later.
import { hostname } from 'node:os';
import { systemClock, within, type Clock } from '../domain/clock.js';
import { storeErrorText } from './open-store.js';
import { certificateOf } from './run-files.js';
import type { ResultsStore, RunStart } from './store.js';
import type { RunPlace } from './run-row.js';

// The live figures a run reports once a second (src/run/context.ts LiveStatus, read structurally).
export interface LiveFigures {
  phase: string;
  elapsedS: number;
  phaseRemainingS: number | null;
  runRemainingS: number | null;
  counted?: unknown;
}

// The store a recorder writes to: where it is (for the warning) and how to open it (the recorder's first write).
export interface StoreTarget {
  where: string;
  open(): Promise<ResultsStore>;
  // The command that adds the runs to this store afterwards, for the warning (`cablequal db import <reports dir>`).
  importCommand: string;
  // What goes on without the store, when not runs (the warning's end; `cablequal watch` says where its journal is).
  without?: string;
}

// How long one write (the opening included) may take before the store is given up: twice the engines' own bound on a
// wait (open-store.ts WRITER_WAIT_MS), so that their error, which says why, normally comes first.
export const WRITE_DEADLINE_MS = 10_000;

export class StoreRecorder {
  private queue: Promise<void> = Promise.resolve();
  private readonly lastWrite = new Map<string, number>();
  private readonly seq = new Map<string, number>();
  private readonly pending = new Map<string, LiveFigures>();
  private opening: Promise<ResultsStore> | null = null;
  private gaveUp = false;
  readonly controller = hostname();

  constructor(
    private readonly target: StoreTarget | null,
    private readonly warn: (line: string) => void,
    private readonly opts: { minIntervalMs?: number; now?: () => number; clock?: Clock; deadlineMs?: number } = {},
  ) {}

  // Whether writes go anywhere (a store was given and has not been given up).
  get writing(): boolean {
    return this.target !== null && !this.gaveUp;
  }

  // A run began (before its EEPROM is read: no cable yet).
  started(s: Omit<RunStart, 'controller'>): void {
    this.enqueue((st) => st.runStarted({ ...s, controller: this.controller }));
  }

  // At most one write per run every few seconds; the latest status wins, older ones in between are dropped.
  status(runId: string, s: LiveFigures): void {
    if (!this.writing) return;
    // What each node counted since its first sample is for the metrics, not the store.
    const { counted: _counted, ...figures } = s;
    s = figures as LiveFigures;
    const now = (this.opts.now ?? Date.now)();
    const last = this.lastWrite.get(runId);
    this.pending.set(runId, s);
    if (last !== undefined && now - last < (this.opts.minIntervalMs ?? 3000)) return;
    this.lastWrite.set(runId, now);
    this.flushStatus(runId, now);
  }

  // The run ended and its record (and reports) are written: the full row; the live row goes. Waits for the queue,
  // which each write's deadline bounds.
  async finished(record: unknown, runDir: string, place: Omit<RunPlace, 'runDir' | 'controller' | 'certificate'> = {}): Promise<void> {
    this.enqueue((st) =>
      st.runFinished(record, { journalCheck: 'run', ...place, runDir, controller: this.controller, certificate: certificateOf(runDir) }).then(() => undefined),
    );
    await this.flush();
  }

  // Anything else to write (a batch row), through the same queue and failure handling.
  write(fn: (st: ResultsStore) => Promise<void>): void {
    this.enqueue(fn);
  }

  async flush(): Promise<void> {
    await this.queue;
  }

  // After the queue, the store closed (a store given up is closed as well; neither waits past the deadline).
  async close(): Promise<void> {
    await this.flush();
    const opening = this.opening;
    if (!opening) return;
    const closing = opening.then((st) => st.close());
    await within(this.clock, this.deadlineMs, closing, () => new Error('close')).catch(() => undefined);
  }

  private get clock(): Clock {
    return this.opts.clock ?? systemClock;
  }

  private get deadlineMs(): number {
    return this.opts.deadlineMs ?? WRITE_DEADLINE_MS;
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
    if (!this.writing) return;
    this.queue = this.queue.then(() => this.attempt(fn));
  }

  // One write, within the deadline; its failure gives the store up.
  private async attempt(fn: (st: ResultsStore) => Promise<void>): Promise<void> {
    const target = this.target;
    if (!target || this.gaveUp) return;
    this.opening ??= target.open();
    const work = this.opening.then(fn);
    const s = this.deadlineMs / 1000;
    try {
      await within(this.clock, this.deadlineMs, work, () => new Error(`no answer within ${s} s (busy or unreachable)`));
    } catch (e) {
      this.gaveUp = true;
      this.warn(
        `cablequal: warning: results store ${target.where}: ${storeErrorText(e)}; ${target.without ?? `runs go on without the store (journals and records are on disk: \`${target.importCommand}\` adds them afterwards)`}`,
      );
    }
  }
}
