import type { LiveProgress } from '../domain/result.js';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import type { NodeSpec } from '../domain/node.js';
import type { Reason } from '../domain/outcome.js';
import type { CableEndRecord, NodeRecord, PhaseRecord, BenchmarkRecord } from '../domain/record.js';
import type { Protocol } from '../protocol/index.js';
import type { CountedTotals } from '../analysis/intervals.js';
import type { CageLinks } from '../probes/ibdev2netdev.js';
import type { CommandResult, CommandRunner, RemoteProcess } from '../transport/types.js';
import { RemoteCommandError } from '../transport/types.js';
import type { SharingCable } from '../grading/soak-evidence.js';
import type { JournalWriter } from './journal.js';
import { FailDecided, RunAborted } from './run-errors.js';
import { anySignal } from './fail-stop.js';
import type { Together } from './together.js';

// What the run knows about one node once preflight has looked at it.
export interface NodeState {
  spec: NodeSpec;
  runner: CommandRunner;
  cage: CageLinks | null;
  railIps: [string | null, string | null];
  // Each rail's IPv4 network in CIDR notation (192.168.100.0/24), from the same `ip addr` read.
  railSubnets: [string | null, string | null];
  record: NodeRecord;
  // Its boot id when sampling started (null: unreadable): a counter reset under the same boot id is a clearing, not a
  // reboot (src/run/sampling-loop.ts).
  bootId?: string | null;
}

// Live figures for the status line and progress output.
// The run's clock (phase, elapsed, phase and whole-run time left) is its LiveProgress (src/domain/result.ts), the same
// in the terminal, live.json, `status`, the store's live row, the dashboard and the metrics.
export interface LiveStatus extends LiveProgress {
  laneRates: Record<string, number[]>; // node -> errors/s per lane, last tick
  nicTempC: Record<string, number | null>;
  gpuTempC: Record<string, number | null>;
  gpuUtilPct: Record<string, number | null>;
  throughputGbps: number | null;
  // What each node counted since its first sample, from the sampling loop's intervals, for live metrics
  // (--metrics-port); absent before sampling starts.
  counted?: Record<string, CountedTotals>;
}

// The mutable state of one run, shared by its steps (one per run, never global).
export class RunContext {
  readonly processes: RemoteProcess[] = [];
  readonly phases: PhaseRecord[] = [];
  readonly ends: CableEndRecord[] = [];
  readonly errors: Reason[] = [];
  benchmarks: BenchmarkRecord = { loopback: [], ibWriteBw: null, nccl: null };
  currentPhase = 'setup';
  phaseEndsAtS: number | null = null;
  // A dry run: each soak samples only this many seconds (its commands repeat after the first ticks); null: the whole soak.
  soakCapS: number | null = null;
  lastThroughputGbps: number | null = null;
  // Told each warning the run has for its operator (the CLI prints it); null: run.log only.
  onWarning: ((line: string) => void) | null = null;
  // One of two cables qualified at once (src/run/together.ts): what this run shares with the other; null alone.
  together: Together | null = null;
  // How far above the default TCP ports this run's link-load streams listen (RunDeps.portOffset).
  portOffset = 0;
  // The other cable whose link load shares the soak under way (two cables qualified at once), as the soak started.
  soakSharedWith: SharingCable[] = [];
  readonly startedMs: number;
  // Aborted when the sampling loop decides a certain FAIL (decide()): from then on the phase's sleeps and waits are cut
  // and no load process starts (FailDecided), so every phase stops its loads within one sampling interval.
  private readonly decidedCtl = new AbortController();

  constructor(
    readonly runId: string,
    readonly clock: Clock,
    readonly protocol: Protocol,
    readonly nodes: NodeState[],
    readonly journal: JournalWriter,
    readonly log: Logger,
    readonly signal: AbortSignal,
    readonly remoteRunDir: string,
  ) {
    this.startedMs = clock.now();
  }

  // Seconds since the run started, on the run's clock (virtual under the simulator).
  get tS(): number {
    return Math.round(this.clock.now() - this.startedMs) / 1000;
  }

  node(name: string): NodeState {
    const n = this.nodes.find((x) => x.spec.name === name);
    if (!n) throw new Error(`unknown node ${name}`);
    return n;
  }

  // Something the operator should know that does not stop the run: kept in run.log and passed on to onWarning.
  warn(line: string): void {
    this.log.warn({ warning: line }, 'warning');
    this.onWarning?.(line);
  }

  checkAborted(): void {
    if (this.signal.aborted) throw new RunAborted(String(this.signal.reason ?? 'interrupted'));
  }

  // A certain FAIL is decided (the sampling loop's decision line is written): the loads stop.
  decide(): void {
    this.decidedCtl.abort();
  }

  get decided(): AbortSignal {
    return this.decidedCtl.signal;
  }

  checkDecided(): void {
    if (this.decidedCtl.signal.aborted) throw new FailDecided();
  }

  // Run a command and keep its full output in the journal (phase boundaries, identity, benchmarks).
  async runLogged(node: NodeState, command: string, what: string, timeoutMs = 60_000): Promise<CommandResult> {
    this.checkAborted();
    const result = await node.runner.run(command, { timeoutMs, signal: this.signal });
    this.journal.append({
      type: 'raw',
      tS: this.tS,
      phase: this.currentPhase,
      node: node.spec.name,
      what,
      command,
      exitCode: result.exitCode,
      stdout: result.stdout,
      stderr: result.stderr,
    });
    return result;
  }

  // Like runLogged, but a non-zero exit is an error carrying the command's evidence.
  async runChecked(node: NodeState, command: string, what: string, timeoutMs = 60_000): Promise<string> {
    const r = await this.runLogged(node, command, what, timeoutMs);
    if (r.exitCode !== 0) throw new RemoteCommandError(node.spec.name, r);
    return r.stdout;
  }

  // Start a load process and remember it so that every exit path stops it (`own: false`: a process shared with another
  // cable's run, which whoever holds it last stops: src/run/together.ts).
  // No load starts once a FAIL is decided (FailDecided).
  async startProcess(node: NodeState, command: string, name: string, o: { own?: boolean } = {}): Promise<RemoteProcess> {
    this.checkAborted();
    this.checkDecided();
    const p = await node.runner.start(command, { runDir: this.remoteRunDir, name });
    if (o.own !== false) this.processes.push(p);
    this.journal.append({ type: 'process-start', tS: this.tS, node: node.spec.name, name, command, pid: p.pid });
    return p;
  }

  // Stop processes (all when none given), keeping their output in the journal.
  async stopProcesses(which: RemoteProcess[] = [...this.processes]): Promise<void> {
    await Promise.all(
      which.map(async (p) => {
        try {
          await p.stop();
        } catch (e) {
          this.log.warn({ err: e, process: p.name }, 'stopping a remote process failed');
        }
        const i = this.processes.indexOf(p);
        if (i >= 0) this.processes.splice(i, 1);
      }),
    );
  }

  // A load run to its end in the foreground of a phase (NCCL's mpirun, a loopback client) within timeoutMs: started as a
  // process, so that a FAIL decided meanwhile stops it at once (its process group on the node: remote-process.ts) with
  // its output so far, and its output journaled as runLogged journals a command's (`stopped`: why it did not run to its
  // end).
  async runLoad(node: NodeState, command: string, what: string, name: string, timeoutMs: number): Promise<CommandResult> {
    const p = await this.startProcess(node, command, name);
    const cut = anySignal([this.signal, this.decided]);
    const limitCut = new AbortController();
    let timedOut = false;
    let ended = false;
    try {
      const limit = this.clock.sleep(timeoutMs, limitCut.signal).then(
        () => void (timedOut = true),
        () => undefined,
      );
      const finished = p.done.then(
        () => void (ended = true),
        () => void (ended = true),
      );
      const interrupted = new Promise<void>((resolve) =>
        cut.signal.aborted ? resolve() : cut.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
      await Promise.race([finished, limit, interrupted]);
    } finally {
      limitCut.abort();
      cut.dispose();
    }
    const stopped = ended ? null : timedOut ? 'timeout' : this.signal.aborted ? 'aborted' : 'decision';
    if (!ended) await this.stopProcesses([p]);
    else if (this.processes.includes(p)) this.processes.splice(this.processes.indexOf(p), 1);
    const r = await p.done;
    this.journal.append({
      type: 'raw',
      tS: this.tS,
      phase: this.currentPhase,
      node: node.spec.name,
      what,
      // The command is on the process-start line of `process` (the journal names each command once).
      process: name,
      exitCode: r.exitCode,
      stdout: r.stdout,
      stderr: r.stderr,
      ...(stopped ? { stopped } : {}),
    });
    this.checkAborted();
    this.checkDecided();
    return timedOut ? { ...r, exitCode: null, timedOut: true } : r;
  }

  // Sleep on the run's clock, cut short by Ctrl-C and, unless pastDecision (the tail of sampling after a FAIL), by the
  // FAIL's decision (FailDecided).
  async sleep(ms: number, o: { pastDecision?: boolean } = {}): Promise<void> {
    this.checkAborted();
    if (!o.pastDecision) this.checkDecided();
    const cut = anySignal(o.pastDecision ? [this.signal] : [this.signal, this.decided]);
    try {
      await this.clock.sleep(ms, cut.signal);
    } catch {
      this.checkAborted();
      if (!o.pastDecision) this.checkDecided();
    } finally {
      cut.dispose();
    }
  }
}
