// What watches a run besides the journal: the results store (start, throttled live status, end) and, with
// --metrics-port, the Prometheus endpoint. `run` and `batch` create one and call it from their existing hooks.
// Neither can lose or fail a run: a store problem is one warning; only a metrics port that cannot be bound stops
// the command before anything runs (bad usage, exit 2).
import { systemClock, type Clock } from '../domain/clock.js';
import { RunMetrics } from '../metrics/run-metrics.js';
import { serveMetrics, type MetricsServer } from '../metrics/serve.js';
import { shellQuote } from '../transport/commands.js';
import { chooseStore, openStore, whereOf } from './open-store.js';
import { StoreRecorder, type LiveFigures } from './recorder.js';
import type { RunPlace } from './run-row.js';

export interface ObserverOptions {
  storeDir: string; // the reports directory whose cablequal.db is the embedded store
  db?: string | undefined; // --db URL (else $CABLEQUAL_DB); "off" writes no store
  metricsPort?: number | undefined;
  metricsHost?: string | undefined;
  // Seconds --metrics-port stays up after the last run (a scrape every 15 s must still see the outcome); 0: none.
  metricsLingerS?: number | undefined;
}

// The run as observers see it at its start.
export interface ObservedRun {
  runId: string;
  label: string | null;
  startedAt: string;
  simulated: boolean;
  scenario: string | null;
  protocol: { name: string; sha256: string; file: string; regression?: unknown };
  nodes: { name: string; host: string }[];
}

export class RunObservers {
  private recorder: StoreRecorder = new StoreRecorder(null, () => undefined);
  private chosen = false;
  private metrics: RunMetrics | null = null;
  private server: MetricsServer | null = null;
  private ran = false;

  constructor(
    private readonly opts: ObserverOptions,
    private readonly io: { env: NodeJS.ProcessEnv; cwd: string; stderr: (s: string) => void },
    // The linger's clock, and the signal that cuts it short (Ctrl-C: the operator wants to quit).
    private readonly wait: { clock?: Pick<Clock, 'sleep'>; signal?: AbortSignal } = {},
  ) {}

  // Bind the metrics port, if asked (a failure is a usage error, before anything connects or runs).
  async listen(): Promise<void> {
    if (this.opts.metricsPort === undefined || this.server) return;
    this.metrics = new RunMetrics();
    this.server = await serveMetrics(this.metrics, { port: this.opts.metricsPort, ...(this.opts.metricsHost ? { host: this.opts.metricsHost } : {}) });
    this.io.stderr(`cablequal: metrics at ${this.server.url}\n`);
  }

  // Choose the store once the run is about to start (a command refused before that writes nothing). Nothing waits for
  // it: the recorder opens it with its first write, and a store that cannot be chosen or opened is one warning.
  async open(): Promise<void> {
    await this.listen();
    if (this.chosen) return;
    this.chosen = true;
    const db = this.opts.db ?? this.io.env['CABLEQUAL_DB'];
    if (db === 'off') return;
    const warn = (line: string) => this.io.stderr(`${line}\n`);
    try {
      const choice = chooseStore({ out: this.opts.storeDir, db, env: {}, cwd: this.io.cwd });
      // The same store for `db import`: the --db given, else $CABLEQUAL_DB (still set), else the reports directory's file.
      const to = this.opts.db ? ` --db ${shellQuote(whereOf(choice))}` : db ? '' : ` --out ${shellQuote(this.opts.storeDir)}`;
      const importCommand = `cablequal db import ${shellQuote(this.opts.storeDir)}${to}`;
      this.recorder = new StoreRecorder({ where: whereOf(choice), open: () => openStore(choice, { writer: true }), importCommand }, warn);
    } catch (e) {
      warn(`cablequal: warning: ${(e as Error).message}; runs go on without the store (\`cablequal db import\` adds them later)`);
    }
  }

  started(run: ObservedRun, place: Pick<RunPlace, 'batchId' | 'batchRole'> = {}): void {
    this.ran = true;
    this.metrics?.started(run.runId, { label: run.label, protocol: run.protocol.name, simulated: run.simulated });
    this.recorder.started({ ...run, runDir: null, ...place });
  }

  status(runId: string, s: LiveFigures): void {
    try {
      this.metrics?.update(runId, s as Parameters<RunMetrics['update']>[1]);
    } catch {
      // a malformed status never stops a run
    }
    this.recorder.status(runId, s);
  }

  // The run's record is final and its reports written.
  async finished(record: { runId: string; outcome: string }, runDir: string, place: Pick<RunPlace, 'batchId' | 'batchRole'> = {}): Promise<void> {
    this.metrics?.decided(record.runId, record.outcome);
    await this.recorder.finished(record, runDir, place);
  }

  // The run never got a journal (nothing on disk to index): its started row goes.
  async abandoned(runId: string): Promise<void> {
    this.recorder.write((st) => st.runAbandoned(runId));
    await this.recorder.flush();
  }

  // Batch rows and the like, through the store's queue.
  get store(): StoreRecorder {
    return this.recorder;
  }

  // After the last run: the store is flushed, the metrics endpoint lingers (if a run started and nobody pressed
  // Ctrl-C), then closes.
  async close(): Promise<void> {
    await this.recorder.close();
    await this.linger();
    await this.server?.close();
  }

  private async linger(): Promise<void> {
    const s = this.opts.metricsLingerS ?? 0;
    if (!this.server || !this.ran || s <= 0 || this.wait.signal?.aborted) return;
    this.io.stderr(`cablequal: metrics stay at ${this.server.url} for ${s} s, so a scrape sees the outcome (--metrics-linger; Ctrl-C to quit now)\n`);
    await (this.wait.clock ?? systemClock).sleep(s * 1000, this.wait.signal).catch(() => undefined);
  }
}

// The observed run from the deps `run` and `batch` hand to runQualification.
export function observedRunOf(d: {
  runId: string;
  label: string | null;
  wallNow?: () => number;
  simulated: boolean;
  scenario?: string;
  protocol: ObservedRun['protocol'];
  nodes: { name: string; host: string }[];
}): ObservedRun {
  return {
    runId: d.runId,
    label: d.label,
    startedAt: new Date((d.wallNow ?? Date.now)()).toISOString(), // the wall clock, as the journal's run-start says
    simulated: d.simulated,
    scenario: d.scenario ?? null,
    protocol: { name: d.protocol.name, sha256: d.protocol.sha256, file: d.protocol.file, regression: d.protocol.regression },
    nodes: d.nodes.map((n) => ({ name: n.name, host: n.host })),
  };
}
