// CommandRunner of one simulated node: tokenises each command line, dispatches by program and answers from the model
// in the real output formats. Anything it does not model answers like a missing binary (exit 127), never success.
import { formatTickScriptOutput, parseTickScript, type ScriptItem } from '../transport/tick-script.js';
import type { CommandResult, CommandRunner, RemoteProcess, RunOptions, ShellSession, StartOptions } from '../transport/types.js';
import { TransportError } from '../transport/types.js';
import { cmd, matchEthtoolStatsPhy } from '../transport/commands.js';
import type { LabCore } from './lab-core.js';
import { err, ethtool, hostFact, ibdev2netdev, ipAddr, nvidiaSmi, rdmaLink, readFiles, systemctl, type Answer } from './programs-host.js';
import { exitedAtOnce, startGpuBurn, startIbWriteBw } from './programs-load.js';
import { startMpirun } from './programs-mpirun.js';
import { lddAnswer, sshAnswer, testAnswer } from './programs-access.js';
import { ipJson, lldpctl, ping, printenv } from './programs-net.js';
import { homeOf, knownProgram, pathKind, programPath } from './node-files.js';
import { grepFilter, parseCommand, splitCd, splitPipeline, type ParsedCommand } from './shell-words.js';
import { SimProcess, type ProcBehaviour } from './sim-process.js';
import { simReadingAnswer } from './readings.js';

const LOADS = new Set(['ib_write_bw', 'gpu_burn', 'mpirun']);
const OUTPUT_POLL_MS = 1000;

// Both streams of a short command into one pipe (2>&1): stdout to a pipe is block-buffered and written at exit, while
// stderr is written as it happens, so a tool's error lines (ethtool's netlink notices) come first.
function mergedThroughPipe(a: { stdout: string; stderr: string }): string {
  return a.stderr + a.stdout;
}

// How a command line is taken apart: a pure function of its text, kept per line (the sampler sends the same few lines
// every tick, each once per node).
type Plan =
  | { kind: 'cd'; dir: string; rest: string }
  | { kind: 'time' }
  | { kind: 'phy'; grep: string }
  | { kind: 'pipe'; left: string; filter: RegExp | null; filterProgram: string }
  | { kind: 'long-pipe' }
  | { kind: 'simple'; parsed: ParsedCommand | null };
const plans = new Map<string, Plan>();
const planOf = (command: string): Plan => remembered(plans, command, makePlan);

// The items of a tick script (null: not one), kept per script like a plan.
const tickScripts = new Map<string, readonly ScriptItem[] | null>();
const tickScriptOf = (command: string) => remembered(tickScripts, command, parseTickScript);

// What a pure function of a command line gave for it, remembered (at most 1024 lines; a batch's commands vary).
function remembered<T>(memo: Map<string, T>, command: string, make: (command: string) => T): T {
  if (memo.has(command)) return memo.get(command)!;
  if (memo.size >= 1024) memo.clear();
  const v = make(command);
  memo.set(command, v);
  return v;
}

function makePlan(command: string): Plan {
  const cd = splitCd(command);
  if (cd) return { kind: 'cd', ...cd };
  if (command === cmd.nodeTime()) return { kind: 'time' };
  const phyNetdev = matchEthtoolStatsPhy(command);
  if (phyNetdev !== null) return { kind: 'phy', grep: cmd.ethtoolStatsPhyGrep(phyNetdev) };
  const stages = splitPipeline(command);
  if (stages && stages.length === 2) {
    return { kind: 'pipe', left: stages[0]!, filter: grepFilter(parseCommand(stages[1]!)?.argv ?? []), filterProgram: stages[1]!.split(/\s+/)[0]! };
  }
  if (stages && stages.length > 2) return { kind: 'long-pipe' };
  return { kind: 'simple', parsed: parseCommand(command) };
}

export class SimRunner implements CommandRunner {
  readonly simulated = true;

  constructor(
    private readonly core: LabCore,
    readonly node: string,
  ) {}

  private reachable(): void {
    this.core.reap();
    const why = this.core.unreachable(this.node);
    if (why) throw new TransportError(this.node, why, 'the simulated fault ends by itself; retry later');
  }

  async run(command: string, opts: RunOptions = {}): Promise<CommandResult> {
    this.reachable();
    const startMs = this.core.clock.now();
    const items = tickScriptOf(command);
    if (items) {
      const outputs = [];
      for (const it of items) {
        // An extra reading is answered by its id from the model where the lab has an answer for it, else like any command.
        const answer = it.id.startsWith('reading:') ? simReadingAnswer(it.id.slice('reading:'.length)) : undefined;
        const r = answer ? { stdout: answer({ core: this.core, node: this.node }), stderr: '', exitCode: 0 } : await this.exec(it.command, opts);
        outputs.push({ id: it.id, stdout: mergedThroughPipe(r), exitCode: r.exitCode ?? 128 + 15 });
      }
      return { command, stdout: formatTickScriptOutput(outputs), stderr: '', exitCode: 0, signal: null, durationMs: this.core.clock.now() - startMs };
    }
    const r = await this.exec(command, opts);
    return { command, ...r, durationMs: this.core.clock.now() - startMs };
  }

  // One simple command; loads run as a process that run() waits for (virtual time passes meanwhile). A non-interactive
  // session starts in the user's home directory; `cd <dir> && ...` moves it, as sh does.
  private async exec(
    command: string,
    opts: RunOptions,
    keep?: RegExp,
    cwd = homeOf(this.core, this.node),
  ): Promise<Omit<CommandResult, 'command' | 'durationMs'>> {
    const plan = planOf(command);
    if (plan.kind === 'cd') {
      if (pathKind(this.core, this.node, plan.dir) !== 'd') return { stdout: '', stderr: `sh: 1: cd: can't cd to ${plan.dir}\n`, exitCode: 2, signal: null };
      return this.exec(plan.rest, opts, keep, plan.dir);
    }
    // The sampler's two shell constructs: node time as bash's $EPOCHREALTIME prints it, and the *_phy filter
    // (the same lines as its grep form, which the simulator renders without the full dump).
    if (plan.kind === 'time') return { stdout: `${(this.core.clock.now() / 1000).toFixed(6)}\n`, stderr: '', exitCode: 0, signal: null };
    if (plan.kind === 'phy') return this.exec(plan.grep, opts);
    if (plan.kind === 'pipe') {
      const filter = plan.filter;
      if (!filter) return { stdout: '', stderr: `sh: 1: ${plan.filterProgram}: not found\n`, exitCode: 127, signal: null };
      const left = await this.exec(plan.left, opts, filter);
      const lines = left.stdout.split('\n').filter((l) => l !== '' && filter.test(l));
      // A pipeline's status is its last stage's: grep exits 1 when nothing matched.
      return { stdout: lines.length ? `${lines.join('\n')}\n` : '', stderr: left.stderr, exitCode: lines.length ? 0 : 1, signal: null };
    }
    if (plan.kind === 'long-pipe') return { stdout: '', stderr: 'sh: 1: pipelines of more than two stages are not simulated\n', exitCode: 127, signal: null };
    const p = plan.parsed;
    if (!p || p.argv.length === 0) return { stdout: '', stderr: `sh: 1: Syntax error: Unterminated quoted string\n`, exitCode: 2, signal: null };
    const prog = p.argv[0]!.split('/').pop()!;
    const shape = (a: Answer) => ({
      stdout: p.stderrToStdout ? mergedThroughPipe(a) : a.stdout,
      stderr: p.stderrToNull || p.stderrToStdout ? '' : a.stderr,
      exitCode: a.exitCode,
      signal: null,
    });
    if (p.sudo && this.sudoRefuses(prog)) return shape(p.sudoList ? err('', 1) : err('sudo: a password is required\n'));
    // `sudo -n -l <command>` prints the command's full path when the sudoers lines allow it, and runs nothing.
    if (p.sudoList)
      return shape(
        hostFact(this.core, this.node, ['command', '-v', prog])?.exitCode === 0 ? { stdout: `${p.argv.join(' ')}\n`, stderr: '', exitCode: 0 } : err('', 1),
      );
    if (this.notInstalled(p.argv[0]!)) return shape(err(`sh: 1: ${p.argv[0]}: not found\n`, 127));
    if (LOADS.has(prog)) {
      const proc = this.spawn(command, `run-${this.core.pid()}`, prog, p.argv, cwd, p.stdout);
      if (opts.onOutput) void this.stream(proc, opts.onOutput);
      // Cut by the caller's abort signal as SSH would cut it (the channel signalled KILL): the load does not outlive it.
      const onAbort = () => void proc.stop();
      if (opts.signal?.aborted) onAbort();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      void proc.done.finally(() => opts.signal?.removeEventListener('abort', onAbort));
      const timeout = opts.timeoutMs;
      if (timeout !== undefined) {
        const ac = new AbortController();
        const timer = this.core.clock.sleep(timeout, ac.signal).then(
          () => 'timeout' as const,
          () => 'done' as const,
        );
        const winner = await Promise.race([proc.done.then(() => 'done' as const), timer]);
        ac.abort();
        if (winner === 'timeout') {
          await proc.stop();
          const r = await proc.done;
          return { stdout: r.stdout, stderr: r.stderr, exitCode: null, signal: 'SIGTERM', timedOut: true };
        }
      }
      const r = await proc.done;
      return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode, signal: r.signal };
    }
    if (prog === 'sleep') {
      await this.core.clock.sleep(Number(p.argv[1] ?? 0) * 1000, opts.signal);
      return shape({ stdout: '', stderr: '', exitCode: 0 });
    }
    return shape(this.answer(prog, p.argv, p.sudo, keep));
  }

  // `sudo -n <prog>` without a NOPASSWD line for it asks for a password, which -n refuses.
  private sudoRefuses(prog: string): boolean {
    const n = this.core.nodeSpec(this.node);
    return Boolean(n.sudoRefuses) || (n.sudoCommands !== undefined && !n.sudoCommands.includes(prog));
  }

  private answer(prog: string, argv: string[], sudo: boolean, keep?: RegExp): Answer {
    const core = this.core;
    switch (prog) {
      case 'ethtool':
        return ethtool(core, this.node, argv, sudo, keep);
      case 'ibdev2netdev':
        return ibdev2netdev(core, this.node);
      case 'ip':
        return argv.includes('-j') || argv.includes('-json') ? ipJson(core, this.node, argv) : ipAddr(core, this.node, argv);
      case 'ping':
        return ping(core, this.node, argv);
      case 'lldpctl':
        return lldpctl(core, this.node, argv);
      case 'printenv':
        return printenv(argv);
      case 'rdma':
        return rdmaLink(core, this.node);
      case 'nvidia-smi':
        return nvidiaSmi(core, this.node, argv);
      case 'systemctl':
      case 'reboot':
        return systemctl(core, this.node, argv, sudo);
      case 'grep':
      case 'cat':
        return readFiles(core, this.node, argv);
      case 'test':
        return testAnswer(core, this.node, argv);
      case 'ssh':
        return sshAnswer(core, this.node, argv);
      case 'ldd':
        return lddAnswer(core, this.node, argv);
      default:
        return hostFact(core, this.node, argv) ?? err(`sh: 1: ${prog}: not found\n`, 127);
    }
  }

  // A program the model knows that this node's scenario says is not installed (scenario node `missing`).
  private notInstalled(word: string): boolean {
    return knownProgram(word) && programPath(this.core, this.node, word) === null;
  }

  // Pass on what a running load has flushed so far, once per lab second, until it ends (`sim serve` exec channels).
  private async stream(proc: SimProcess, emit: NonNullable<RunOptions['onOutput']>): Promise<void> {
    const ac = new AbortController();
    void proc.done.finally(() => ac.abort());
    let out = 0;
    let err = 0;
    while (!proc.finished) {
      try {
        await this.core.clock.sleep(OUTPUT_POLL_MS, ac.signal);
      } catch {
        return;
      }
      const o = await proc.output();
      if (proc.finished) return;
      if (o.stdout.length > out || o.stderr.length > err) {
        emit({ stdout: o.stdout.slice(out), stderr: o.stderr.slice(err) });
        out = o.stdout.length;
        err = o.stderr.length;
      }
    }
  }

  private spawn(command: string, name: string, prog: string, argv: string[], cwd: string, stdout: ParsedCommand['stdout'] = 'full'): SimProcess {
    const core = this.core;
    let b: ProcBehaviour;
    if (prog === 'ib_write_bw') b = startIbWriteBw(core, this.node, argv, stdout);
    else if (prog === 'gpu_burn') b = startGpuBurn(core, this.node, argv, cwd);
    else if (prog === 'mpirun') b = startMpirun(core, this.node, argv);
    else b = exitedAtOnce('', `sh: 1: ${prog}: not found\n`, 127);
    const proc = new SimProcess(
      this.node,
      name,
      core.pid(),
      command,
      core.now(),
      b,
      core.clock,
      () => core.now(),
      () => core.reap(),
    );
    core.procs.push(proc);
    return proc;
  }

  async start(command: string, opts: StartOptions): Promise<RemoteProcess> {
    this.reachable();
    // Started processes run in the run directory (the start script cds there), or where `cd <dir> &&` moves them.
    let cwd = opts.runDir;
    let line = command;
    const cd = splitCd(command);
    if (cd) {
      if (pathKind(this.core, this.node, cd.dir) !== 'd') return this.register(command, opts.name, exitedAtOnce('', `sh: 1: cd: can't cd to ${cd.dir}\n`, 2));
      cwd = cd.dir;
      line = cd.rest;
    }
    const p = parseCommand(line);
    const prog = p?.argv[0]?.split('/').pop() ?? '';
    if (p && p.sudo && this.sudoRefuses(prog)) {
      return this.register(command, opts.name, exitedAtOnce('', 'sudo: a password is required\n', 1));
    }
    if (p && p.argv[0] && this.notInstalled(p.argv[0])) return this.register(command, opts.name, exitedAtOnce('', `sh: 1: ${p.argv[0]}: not found\n`, 127));
    if (p && LOADS.has(prog)) return this.spawn(command, opts.name, prog, p.argv, cwd, p.stdout);
    if (p && prog === 'sleep') {
      const end = this.core.now() + Number(p.argv[1] ?? 0);
      let stoppedAt: number | null = null;
      return this.register(command, opts.name, {
        plannedEndS: () => end,
        onStop: (t) => (stoppedAt = t),
        status: (t) => ({ stdout: '', stderr: '', ended: stoppedAt !== null || t >= end, exitCode: 0 }),
      });
    }
    // Anything else runs to completion at once (a missing program exits 127).
    const r = await this.exec(line, {}, undefined, cwd);
    return this.register(command, opts.name, exitedAtOnce(r.stdout, r.stderr, r.exitCode ?? 1));
  }

  private register(command: string, name: string, b: ProcBehaviour): SimProcess {
    const proc = new SimProcess(
      this.node,
      name,
      this.core.pid(),
      command,
      this.core.now(),
      b,
      this.core.clock,
      () => this.core.now(),
      () => this.core.reap(),
    );
    this.core.procs.push(proc);
    return proc;
  }

  async openShell(): Promise<ShellSession> {
    this.reachable();
    return { run: (c, o) => this.run(c, o), close: async () => undefined };
  }

  async close(): Promise<void> {}
}
