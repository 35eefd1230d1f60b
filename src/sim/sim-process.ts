// A long-running command on a simulated node: its output is a function of virtual time, its end either its own
// (planned duration, link drop, reboot) or stop(). No background timer drives it except one wake-up at a planned end.
import type { Clock } from '../domain/clock.js';
import type { CommandResult, RemoteProcess } from '../transport/types.js';

// What a process has printed by lab time tS, and whether it has ended on its own by then.
export interface ProcStatus {
  stdout: string;
  stderr: string;
  ended: boolean;
  exitCode: number | null;
  signal?: string | null;
}

// The program-specific part of a process (ib_write_bw, gpu_burn, mpirun...).
export interface ProcBehaviour {
  status(tS: number): ProcStatus;
  // Lab time at which it will end by itself if nothing else happens (null: runs until stopped or killed).
  plannedEndS(): number | null;
  // stop() was called at tS: remove the process's load from the model.
  onStop(tS: number): void;
}

// What lab.processes(node) lists.
export interface ProcessInfo {
  pid: number;
  name: string;
  command: string;
  startedS: number;
}

export class SimProcess implements RemoteProcess {
  readonly done: Promise<CommandResult>;
  private resolveDone!: (r: CommandResult) => void;
  private final: CommandResult | null = null;
  private readonly wake = new AbortController();

  constructor(
    readonly node: string,
    readonly name: string,
    readonly pid: number,
    readonly command: string,
    readonly startedS: number,
    private readonly behaviour: ProcBehaviour,
    private readonly clock: Clock,
    private readonly labTime: () => number,
    // Called once the process has ended, so that peers depending on it (an ib_write_bw server) notice at once.
    private readonly onFinished: () => void = () => undefined,
  ) {
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    const end = behaviour.plannedEndS();
    if (end !== null && Number.isFinite(end)) {
      const ms = Math.max(0, (end - this.labTime()) * 1000) + 1;
      clock.sleep(ms, this.wake.signal).then(
        () => this.check(),
        () => undefined,
      );
    }
    this.check();
  }

  get finished(): boolean {
    return this.final !== null;
  }

  info(): ProcessInfo {
    return { pid: this.pid, name: this.name, command: this.command, startedS: this.startedS };
  }

  // Notice an end that happened by itself (called on every runner call and lab query).
  check(): void {
    if (this.final) return;
    const s = this.behaviour.status(this.labTime());
    if (s.ended) this.finish(s);
  }

  async output(): Promise<{ stdout: string; stderr: string }> {
    this.check();
    if (this.final) return { stdout: this.final.stdout, stderr: this.final.stderr };
    const s = this.behaviour.status(this.labTime());
    return { stdout: s.stdout, stderr: s.stderr };
  }

  async stop(): Promise<void> {
    this.check();
    if (this.final) return;
    const t = this.labTime();
    this.behaviour.onStop(t);
    const s = this.behaviour.status(t);
    this.finish({ ...s, ended: true, exitCode: null, signal: 'SIGTERM' });
  }

  private finish(s: ProcStatus): void {
    this.wake.abort();
    this.final = {
      command: this.command,
      stdout: s.stdout,
      stderr: s.stderr,
      exitCode: s.signal ? null : s.exitCode,
      signal: s.signal ?? null,
      durationMs: Math.round((this.labTime() - this.startedS) * 1000),
    };
    this.resolveDone(this.final);
    this.onFinished();
  }
}
