// The contract in front of the outside world (labgrid's CommandProtocol): run commands on one node.
// Implementations: SshRunner (ssh2), LocalRunner (execa), SimRunner (the simulated lab, in virtual time).

// What a finished command gave back; exitCode is null when it died by a signal.
export interface CommandResult {
  command: string;
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  timedOut?: boolean;
}

export interface RunOptions {
  timeoutMs?: number;
  stdin?: string;
  signal?: AbortSignal;
  // Output as it appears, before the command ends (the simulated lab streams a long-running load's flushed output;
  // other runners may deliver everything in the result only). The result still carries all of it.
  onOutput?: (chunk: { stdout: string; stderr: string }) => void;
}

// A long-lived command's handle (load generator, ib_write_bw server): stop() must be safe to call twice.
export interface RemoteProcess {
  readonly name: string;
  readonly pid: number | null;
  // Resolves when the process ends (stopped or exited on its own), with all its output.
  readonly done: Promise<CommandResult>;
  // Output so far (ib_write_bw prints rows while running).
  output(): Promise<{ stdout: string; stderr: string }>;
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  // Per-run directory on the node for pid and output files (`/tmp/cablequal/<runId>` by default).
  runDir: string;
  // Short identifier of the process, [a-z0-9-]+, unique within the run.
  name: string;
}

// A persistent shell on the node: one round trip per call, no new session (the sampler's channel).
export interface ShellSession {
  run(command: string, opts?: RunOptions): Promise<CommandResult>;
  close(): Promise<void>;
}

// "Run this on node X".
export interface CommandRunner {
  readonly node: string;
  // True for the simulated lab: its outputs are generated, never to be presented as recorded.
  readonly simulated: boolean;
  run(command: string, opts?: RunOptions): Promise<CommandResult>;
  start(command: string, opts: StartOptions): Promise<RemoteProcess>;
  openShell(): Promise<ShellSession>;
  close(): Promise<void>;
}

import { commandText } from '../domain/text.js';

// A command ran but failed: carries its evidence and reads well in one line (execa/labgrid style).
export class RemoteCommandError extends Error {
  override readonly name = 'RemoteCommandError';
  constructor(
    readonly node: string,
    readonly result: CommandResult,
    why?: string,
  ) {
    const how = result.timedOut === true ? 'timed out' : result.signal ? `killed with ${result.signal}` : `exited with ${result.exitCode}`;
    const tail = result.stderr.trim().split('\n').slice(-3).join(' | ');
    super(`${node}: \`${commandText(result.command)}\` ${why ?? how}${tail ? `: ${commandText(tail, 300)}` : ''}`);
  }
}

// The node could not be reached (connect, auth, host key, dropped session): a harness ERROR, never a cable FAIL.
export class TransportError extends Error {
  override readonly name = 'TransportError';
  constructor(
    readonly node: string,
    message: string,
    readonly advice?: string,
    options?: { cause?: unknown },
  ) {
    super(`${node}: ${message}${advice ? ` (${advice})` : ''}`, options);
  }
}

// A command cut short by the caller's abort signal (Ctrl-C): the run is being stopped, nothing failed. Kept apart
// from TransportError so that an interrupted command is never read as a lost node.
export class CommandAbortedError extends Error {
  override readonly name = 'CommandAbortedError';
  constructor(
    readonly node: string,
    readonly command: string,
  ) {
    super(`${node}: \`${commandText(command)}\` cut short by the abort signal`);
  }
}
