import { constants as osConstants } from 'node:os';

// What a run does when the controller's terminal or SSH session goes away (SIGHUP): go on (default), or stop
// cleanly as ABORTED with the loads stopped.
export type HangupMode = 'continue' | 'abort';
export const HANGUP_MODES: readonly HangupMode[] = ['continue', 'abort'];

// The CLI's streams, injected so commands can be run in-process by tests.
export interface CliIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  readStdin: () => Promise<string>;
  isTTY: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
  // Aborted on Ctrl-C / SIGTERM (and SIGHUP with --on-hangup abort): a run stops its loads and leaves an ABORTED record.
  signal?: AbortSignal;
  // The signal that stopped the command (null when none did): its exit code is 128 + its number.
  interruptedBy?: () => NodeJS.Signals | null;
  // A run says what SIGHUP should do while it runs, and hears of it (to note it in its log).
  onHangup?: (mode: HangupMode, note?: () => void) => void;
  // What Ctrl-C / SIGTERM say they stop (default: the loads on every node; the dashboard: itself).
  onStop?: (say: string) => void;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

// The conventional exit code of a process stopped by `sig`: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP.
export function signalExitCode(sig: NodeJS.Signals): number {
  return 128 + (osConstants.signals[sig] ?? 2);
}

// Writes to a stream that may go away (`run ... | head -c 10`, a closed terminal): an error on it (EPIPE, EIO,
// ENOSPC on a redirect) ends what is printed there, never the command. Errors come both as a throw and as an
// 'error' event; both are taken.
function guardedWriter(stream: NodeJS.WriteStream): (s: string) => void {
  let gone = false;
  stream.on('error', () => {
    gone = true;
  });
  return (s) => {
    if (gone || stream.destroyed) return;
    try {
      stream.write(s);
    } catch {
      gone = true;
    }
  };
}

// The real process streams.
export function processIo(): CliIo {
  const stdout = guardedWriter(process.stdout);
  const stderr = guardedWriter(process.stderr);
  const signals = interruptSignal(stderr);
  return {
    stdout,
    stderr,
    readStdin: () => readAll(process.stdin),
    isTTY: Boolean(process.stdout.isTTY),
    cwd: process.cwd(),
    env: process.env,
    ...signals,
  };
}

// First SIGINT/SIGTERM asks the run to stop cleanly; a second one exits at once. SIGHUP never kills: by default the
// command goes on (output to a terminal that is gone is dropped), or it is a clean stop when the run asked for that.
function interruptSignal(say: (s: string) => void): Pick<CliIo, 'signal' | 'interruptedBy' | 'onHangup' | 'onStop'> {
  const ac = new AbortController();
  let by: NodeJS.Signals | null = null;
  let stopping = 'stopping the loads on every node';
  let hangup: { mode: HangupMode; note?: () => void } = { mode: 'continue' };
  const stop = (sig: NodeJS.Signals, why = `interrupted by ${sig}`) => {
    if (ac.signal.aborted) process.exit(signalExitCode(sig));
    by = sig;
    say(`\ncablequal: ${sig}: ${stopping} (again to quit at once)\n`);
    ac.abort(why);
  };
  process.on('SIGINT', (sig) => stop(sig));
  process.on('SIGTERM', (sig) => stop(sig));
  process.on('SIGHUP', (sig) => {
    hangup.note?.();
    if (hangup.mode === 'abort') stop(sig, "the controller's terminal or SSH session closed (SIGHUP, --on-hangup abort)");
  });
  return {
    signal: ac.signal,
    interruptedBy: () => by,
    onHangup: (mode, note) => {
      hangup = { mode, ...(note ? { note } : {}) };
    },
    onStop: (what) => {
      stopping = what;
    },
  };
}
