// CommandRunner for a controller that is itself one of the nodes: the same contract as SSH, run with execa.
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import { basename, join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { validate } from './commands.js';
import { buildEndMarked, newEndMark, takeEndMarked } from './end-marker.js';
import { TransportError, type CommandResult, type CommandRunner, type RemoteProcess, type RunOptions, type ShellSession, type StartOptions } from './types.js';

const SH = '/bin/sh';
const MAX_BUFFER = 256 * 1024 * 1024;

// Options for LocalRunner; env is added to the controller's own environment.
export interface LocalRunnerOptions {
  node?: string;
  env?: Record<string, string>;
  cwd?: string;
}

// Signal a whole process group (our children are started detached, so pid = pgid); false when it is gone.
function killGroup(pgid: number | undefined, signal: NodeJS.Signals): boolean {
  if (pgid === undefined) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

// Live (non-zombie) members of a process group, read from /proc: kill -0 would also count zombies nobody reaps.
export async function processGroupMembers(pgid: number): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((e) => /^\d+$/.test(e));
  const stats = await Promise.all(pids.map((p) => readFile(`/proc/${p}/stat`, 'utf8').catch(() => null)));
  return pids.flatMap((p, i) => {
    const stat = stats[i];
    if (!stat) return []; // exited while we looked
    // Fields after the parenthesised command name: state ppid pgrp ...
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[0] !== 'Z' && Number(rest[2]) === pgid ? [Number(p)] : [];
  });
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// Wait until the group has no live member; true if it emptied within ms.
async function groupGone(pgid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if ((await processGroupMembers(pgid)).length === 0) return true;
    if (Date.now() >= until) return false;
    await delay(20);
  }
}

// A detached child calls setsid() just after fork: until then kill(-pid) misses it, so wait for the group.
async function groupFormed(pid: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    try {
      process.kill(-pid, 0);
      return;
    } catch {
      await delay(2);
    }
  }
}

// TERM to the group, KILL after the grace period (the RemoteProcess stop contract).
async function terminateGroup(pgid: number, graceMs: number): Promise<void> {
  if (!killGroup(pgid, 'SIGTERM')) return;
  if (await groupGone(pgid, graceMs)) return;
  killGroup(pgid, 'SIGKILL');
  await groupGone(pgid, 2000);
}

function resultOf(
  command: string,
  r: { stdout?: unknown; stderr?: unknown; exitCode?: number; signal?: string; durationMs: number },
  timedOut: boolean,
): CommandResult {
  return {
    command,
    stdout: typeof r.stdout === 'string' ? r.stdout : '',
    stderr: typeof r.stderr === 'string' ? r.stderr : '',
    exitCode: r.exitCode ?? null,
    signal: r.signal ?? null,
    durationMs: r.durationMs,
    ...(timedOut ? { timedOut: true } : {}),
  };
}

// A command started in the background: its own process group, pid/out/err/rc files under runDir.
class LocalProcess implements RemoteProcess {
  private stopping: Promise<void> | null = null;
  private exited = false;

  constructor(
    readonly name: string,
    readonly pid: number,
    readonly done: Promise<CommandResult>,
    private readonly base: string,
  ) {
    void done.then(() => (this.exited = true));
  }

  async output(): Promise<{ stdout: string; stderr: string }> {
    const read = (f: string) => readFile(f, 'utf8').catch(() => '');
    return { stdout: await read(`${this.base}.out`), stderr: await read(`${this.base}.err`) };
  }

  // Idempotent: a second call waits for the first.
  stop(graceMs = 3000): Promise<void> {
    this.stopping ??= (async () => {
      // Once the leader and every member are gone the pid may be reused: signal nothing then.
      if (this.exited && (await processGroupMembers(this.pid)).length === 0) return;
      await terminateGroup(this.pid, graceMs);
      await this.done;
    })();
    return this.stopping;
  }
}

// Framed round trips on one persistent /bin/sh. Each call is `command eval '<cmd>'` (state such as cd persists;
// a syntax error does not kill the shell) followed by a random end marker with the exit code on stdout and the
// same marker on stderr, so stdout and stderr are kept SEPARATE. Stdin of the command is /dev/null or the given
// text as a here-document. A timeout or abort kills the shell's process group: the session is then closed and
// later calls throw TransportError (open a new one). A command that runs `exit` ends the session the same way.
class LocalShell implements ShellSession {
  private out = '';
  private err = '';
  private queue: Promise<unknown> = Promise.resolve();
  private closedBy: string | null = null;
  private wake: (() => void) | null = null;
  private readonly exited: Promise<unknown>;

  constructor(
    private readonly node: string,
    private readonly sub: ResultPromise<{ detached: true; reject: false; buffer: false }>,
  ) {
    sub.stdout?.setEncoding('utf8');
    sub.stderr?.setEncoding('utf8');
    sub.stdout?.on('data', (d: string) => {
      this.out += d;
      this.wake?.();
    });
    sub.stderr?.on('data', (d: string) => {
      this.err += d;
      this.wake?.();
    });
    sub.stdin?.on('error', () => undefined); // EPIPE after the shell died: reported by `exited`
    this.exited = sub.then(() => {
      this.closedBy ??= 'the shell exited';
      this.wake?.();
    });
  }

  get pid(): number | undefined {
    return this.sub.pid;
  }

  run(command: string, opts: RunOptions = {}): Promise<CommandResult> {
    const next = this.queue.then(() => this.roundTrip(command, opts));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async roundTrip(command: string, opts: RunOptions): Promise<CommandResult> {
    if (this.closedBy) throw new TransportError(this.node, `shell session closed (${this.closedBy})`);
    const mark = newEndMark();
    const script = buildEndMarked(mark, command, opts.stdin);
    this.out = '';
    this.err = '';
    const t0 = performance.now();
    let cut: 'timeout' | 'abort' | null = null;
    const stopIt = (why: 'timeout' | 'abort') => {
      cut ??= why;
      this.kill(why === 'timeout' ? 'a command timed out' : 'a command was aborted');
    };
    const timer = opts.timeoutMs !== undefined ? setTimeout(() => stopIt('timeout'), opts.timeoutMs) : undefined;
    const onAbort = () => stopIt('abort');
    if (opts.signal?.aborted) onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      this.sub.stdin?.write(script);
      for (;;) {
        const done = takeEndMarked(mark, this.out, this.err);
        if (done) return { command, ...done, signal: null, durationMs: performance.now() - t0 };
        if (cut || this.closedBy) {
          if (!cut) throw new TransportError(this.node, `shell session closed (${this.closedBy})`);
          return {
            command,
            stdout: this.out,
            stderr: this.err,
            exitCode: null,
            signal: 'SIGKILL',
            durationMs: performance.now() - t0,
            ...(cut === 'timeout' ? { timedOut: true } : {}),
          };
        }
        await new Promise<void>((r) => (this.wake = r));
        this.wake = null;
      }
    } finally {
      if (timer) clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  private kill(why: string): void {
    this.closedBy ??= why;
    killGroup(this.sub.pid, 'SIGKILL');
    this.wake?.();
  }

  async close(): Promise<void> {
    if (!this.closedBy) {
      this.closedBy = 'closed';
      this.sub.stdin?.end('exit 0\n');
      const quit = await Promise.race([this.exited.then(() => true), delay(1000).then(() => false)]);
      if (!quit) killGroup(this.sub.pid, 'SIGKILL');
    }
    // Background leftovers of commands run in this shell.
    if (this.sub.pid !== undefined && killGroup(this.sub.pid, 'SIGKILL')) await groupGone(this.sub.pid, 2000);
    await this.exited;
  }
}

// Runs commands on this machine through /bin/sh; close() kills every process group it started.
export class LocalRunner implements CommandRunner {
  readonly node: string;
  readonly simulated = false;
  private readonly running = new Set<number>();
  private readonly processes = new Set<LocalProcess>();
  private readonly shells = new Set<LocalShell>();

  constructor(private readonly opts: LocalRunnerOptions = {}) {
    this.node = opts.node ?? 'local';
  }

  private base() {
    return {
      shell: false,
      detached: true,
      reject: false,
      stripFinalNewline: false,
      maxBuffer: MAX_BUFFER,
      ...(this.opts.env ? { env: this.opts.env } : {}),
      ...(this.opts.cwd ? { cwd: this.opts.cwd } : {}),
    } as const;
  }

  async run(command: string, opts: RunOptions = {}): Promise<CommandResult> {
    // Own group, so a timeout kills grandchildren too and the pipes close.
    const sub = execa(SH, ['-c', command], { ...this.base(), stdin: opts.stdin === undefined ? 'ignore' : 'pipe' });
    if (opts.stdin !== undefined) {
      sub.stdin?.on('error', () => undefined);
      sub.stdin?.end(opts.stdin);
    }
    const pid = sub.pid;
    if (pid !== undefined) this.running.add(pid);
    let timedOut = false;
    const timer =
      opts.timeoutMs !== undefined
        ? setTimeout(() => {
            timedOut = true;
            killGroup(pid, 'SIGKILL');
          }, opts.timeoutMs)
        : undefined;
    const onAbort = () => killGroup(pid, 'SIGKILL');
    if (opts.signal?.aborted) onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const r = await sub;
      if (pid === undefined || (r.failed && r.exitCode === undefined && r.signal === undefined && !timedOut)) {
        throw new TransportError(this.node, `could not start ${SH}: ${r.shortMessage}`, undefined, { cause: r });
      }
      return resultOf(command, r, timedOut);
    } finally {
      if (timer) clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (pid !== undefined) this.running.delete(pid);
    }
  }

  async start(command: string, { runDir, name }: StartOptions): Promise<RemoteProcess> {
    validate.path(runDir);
    validate.name(name);
    await mkdir(runDir, { recursive: true });
    const base = join(runDir, name);
    const sub = execa(SH, ['-c', command], {
      ...this.base(),
      env: { ...this.opts.env, CABLEQUAL_RUN: basename(runDir) },
      stdin: 'ignore',
      stdout: { file: `${base}.out` },
      stderr: { file: `${base}.err` },
    });
    const pid = sub.pid;
    if (pid === undefined) {
      const r = await sub;
      throw new TransportError(this.node, `could not start ${name}: ${r.shortMessage}`, undefined, { cause: r });
    }
    await groupFormed(pid);
    await writeFile(`${base}.pid`, `${pid}\n`);
    const read = (f: string) => readFile(f, 'utf8').catch(() => '');
    const done = sub.then(async (r) => {
      // As the remote wrapper's `echo $?` would write it: 128 + signal number for a killed process.
      const rc = r.exitCode ?? (r.signal ? 128 + (osConstants.signals[r.signal] ?? 0) : '');
      await writeFile(`${base}.rc`, `${rc}\n`).catch(() => undefined);
      return resultOf(command, { ...r, stdout: await read(`${base}.out`), stderr: await read(`${base}.err`) }, false);
    });
    const proc = new LocalProcess(name, pid, done, base);
    this.processes.add(proc);
    return proc;
  }

  async openShell(): Promise<ShellSession> {
    const sub = execa(SH, [], { ...this.base(), stdin: 'pipe', stdout: 'pipe', stderr: 'pipe', buffer: false });
    if (sub.pid === undefined) {
      const r = await sub;
      throw new TransportError(this.node, `could not start ${SH}: ${r.shortMessage}`);
    }
    await groupFormed(sub.pid);
    const shell = new LocalShell(this.node, sub);
    this.shells.add(shell);
    return shell;
  }

  async close(): Promise<void> {
    for (const pid of this.running) killGroup(pid, 'SIGKILL');
    await Promise.all([...this.shells].map((s) => s.close()));
    await Promise.all([...this.processes].map((p) => p.stop(0)));
    this.shells.clear();
    this.processes.clear();
  }
}
