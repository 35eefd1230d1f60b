// Long-lived commands (load generators, ib_write_bw servers) on a node, started so they can always be found and
// stopped again: own process group (setsid), pid/out/err/rc files under /tmp/cablequal/<runId>/, env marker
// CABLEQUAL_RUN=<runId>. A pid is only signalled after /proc/<pid>/environ shows the marker, so a reused pid is
// never killed, and nothing is ever killed by process name.
// Each script is one line built from a template; parse*() recognises the same line again (the SSH server for the
// simulated lab maps it onto a runner's native start()/stop()).
import type { Clock } from '../domain/clock.js';
import { systemClock } from '../domain/clock.js';
import { UsageError } from '../domain/errors.js';
import { shellQuote, validate } from './commands.js';
import type { CommandResult, CommandRunner, RemoteProcess } from './types.js';
import { TransportError } from './types.js';

export const RUN_ROOT = '/tmp/cablequal';
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

// Run ids become directory names and env values on the node: refuse anything else before it runs.
export function validateRunId(runId: string): string {
  if (typeof runId !== 'string' || !RUN_ID.test(runId) || runId.includes('..')) {
    throw new UsageError(`refusing run id ${JSON.stringify(runId)}: it must match ${RUN_ID.source}`);
  }
  return runId;
}

// The run id a run directory belongs to (its last path component).
export function runIdOf(runDir: string): string {
  return validateRunId(validate.path(runDir).replace(/\/+$/, '').split('/').pop() ?? '');
}

export interface ProcessSpec {
  runDir: string;
  name: string;
  runId: string;
}

// Is any process of group $p marked with our run? (the group leader may be gone while its children live on)
const MARKED = (run: string) =>
  `cq_m() { for q in $p $(pgrep -g "$p" 2>/dev/null); do tr '\\0' '\\n' < /proc/$q/environ 2>/dev/null | grep -qx 'CABLEQUAL_RUN=${run}' && return 0; done; return 1; }`;
// Does group $p still have a member that is not a zombie? (`kill -0` also succeeds on unreaped zombies)
const GROUP = `cq_g() { ps -e -o pgid=,stat= | awk -v g="$p" '$1==g && $2 !~ /^Z/ {f=1} END {exit !f}'; }`;

const T = {
  start:
    ': cq-start; mkdir -p {dir} && cd {dir} && rm -f {name}.rc {name}.pid || exit 1; CABLEQUAL_RUN={run} setsid sh -c \'(eval "$1"); echo $? > "$2"\' cq {cmd} {dir}/{name}.rc < /dev/null > {name}.out 2> {name}.err & echo $! > {name}.pid; echo "cq-started $!"',
  status: `: cq-status; cd {dir} 2>/dev/null || { echo 'cq-status missing'; exit 0; }; p=$(cat {name}.pid 2>/dev/null); ${MARKED('{run}')}; if [ -n "$p" ] && cq_m; then echo "cq-status running $p"; elif [ -f {name}.rc ]; then echo "cq-status exited $p $(cat {name}.rc)"; else echo "cq-status gone $p"; fi`,
  stop: `: cq-stop; cd {dir} 2>/dev/null || { echo 'cq-stop missing'; exit 0; }; p=$(cat {name}.pid 2>/dev/null); ${MARKED('{run}')}; ${GROUP}; if [ -n "$p" ] && cq_m; then kill -TERM -$p 2>/dev/null; i=0; while cq_g && [ $i -lt {grace} ]; do sleep 0.1; i=$((i+1)); done; if cq_g; then kill -KILL -$p 2>/dev/null; echo "cq-stop killed $p"; else echo "cq-stop terminated $p"; fi; else echo "cq-stop not-running $p"; fi`,
  read: ': cq-read; cat {dir}/{name}.out 2>/dev/null; cat {dir}/{name}.err >&2 2>/dev/null; true',
  stale: `: cq-stale; for f in {root}/*/*.pid; do [ -f "$f" ] || continue; p=$(cat "$f"); [ -n "$p" ] || continue; d=\${f%/*}; r=\${d##*/}; n=\${f##*/}; n=\${n%.pid}; for q in $p $(pgrep -g "$p" 2>/dev/null); do if tr '\\0' '\\n' < /proc/$q/environ 2>/dev/null | grep -qx "CABLEQUAL_RUN=$r"; then echo "cq-stale $r $n $p"; break; fi; done; done; true`,
};

type Slots = Record<string, string>;
const SLOT_RE: Record<string, string> = {
  dir: '(/[A-Za-z0-9_./-]{0,255})',
  name: '([a-z0-9][a-z0-9-]{0,63})',
  run: '([A-Za-z0-9][A-Za-z0-9_.-]{0,63})',
  grace: '(\\d+)',
  root: '(/[A-Za-z0-9_./-]{0,255})',
  cmd: "([A-Za-z0-9_./:=,@%+-]+|'(?:[^']|'\\\\'')*')",
};

function fill(tpl: string, slots: Slots): string {
  return tpl.replace(/\{(\w+)\}/g, (_m, k: string) => slots[k]!);
}

// Template -> regex: each slot a capture group; a slot used twice must hold the same text.
function match(tpl: string, script: string): Slots | null {
  const group = new Map<string, number>();
  const src = tpl
    .split(/(\{\w+\})/)
    .map((part) => {
      const m = /^\{(\w+)\}$/.exec(part);
      if (!m) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const k = m[1]!;
      const seen = group.get(k);
      if (seen !== undefined) return `\\${seen}`;
      group.set(k, group.size + 1);
      return SLOT_RE[k]!;
    })
    .join('');
  const found = new RegExp(`^${src}$`).exec(script.trim());
  if (!found) return null;
  const slots: Slots = {};
  for (const [k, n] of group) slots[k] = found[n]!;
  return slots;
}

function unquote(q: string): string {
  return q.startsWith("'") ? q.slice(1, -1).replaceAll(`'\\''`, "'") : q;
}

function specSlots(s: ProcessSpec): Slots {
  return { dir: validate.path(s.runDir), name: validate.name(s.name), run: validateRunId(s.runId) };
}

// Start `command` detached in its own process group; prints `cq-started <pid>`.
export function buildStart(spec: ProcessSpec & { command: string }): string {
  if (spec.command.includes('\n')) throw new UsageError(`refusing multi-line command for ${spec.name}`);
  return fill(T.start, { ...specSlots(spec), cmd: shellQuote(spec.command) });
}
export function parseStart(script: string): (ProcessSpec & { command: string }) | null {
  const s = match(T.start, script);
  return s ? { runDir: s.dir!, name: s.name!, runId: s.run!, command: unquote(s.cmd!) } : null;
}
export const formatStartReply = (pid: number | null) => `cq-started ${pid ?? 0}\n`;
export function parseStartReply(stdout: string): number | null {
  const m = /^cq-started (\d+)$/m.exec(stdout);
  return m ? Number(m[1]) || null : null;
}

export type ProcessStatus =
  | { state: 'running'; pid: number | null }
  | { state: 'exited'; pid: number | null; exitCode: number }
  | { state: 'gone'; pid: number | null } // ended without an exit status: killed by a signal
  | { state: 'missing' }; // no run directory

// Report whether the process is still running (checked through the env marker), or how it ended.
export function buildStatus(spec: ProcessSpec): string {
  return fill(T.status, specSlots(spec));
}
export function parseStatus(script: string): ProcessSpec | null {
  const s = match(T.status, script);
  return s ? { runDir: s.dir!, name: s.name!, runId: s.run! } : null;
}
export function formatStatusReply(st: ProcessStatus): string {
  if (st.state === 'missing') return 'cq-status missing\n';
  if (st.state === 'exited') return `cq-status exited ${st.pid ?? ''} ${st.exitCode}\n`;
  return `cq-status ${st.state} ${st.pid ?? ''}\n`;
}
export function parseStatusReply(stdout: string): ProcessStatus | null {
  const m = /^cq-status (running|exited|gone|missing)(?: (\d*))?(?: (-?\d+))?$/m.exec(stdout);
  if (!m) return null;
  const pid = m[2] ? Number(m[2]) : null;
  if (m[1] === 'missing') return { state: 'missing' };
  if (m[1] === 'running') return { state: 'running', pid };
  if (m[1] === 'exited') return m[3] !== undefined ? { state: 'exited', pid, exitCode: Number(m[3]) } : null;
  return { state: 'gone', pid };
}

export type StopOutcome = 'terminated' | 'killed' | 'not-running' | 'missing';

// TERM to the whole process group, KILL after graceMs (checked every 100 ms).
export function buildStop(spec: ProcessSpec & { graceMs: number }): string {
  const grace = Math.max(0, Math.ceil(spec.graceMs / 100));
  return fill(T.stop, { ...specSlots(spec), grace: String(grace) });
}
export function parseStop(script: string): (ProcessSpec & { graceMs: number }) | null {
  const s = match(T.stop, script);
  return s ? { runDir: s.dir!, name: s.name!, runId: s.run!, graceMs: Number(s.grace) * 100 } : null;
}
export const formatStopReply = (outcome: StopOutcome, pid: number | null) =>
  outcome === 'missing' ? 'cq-stop missing\n' : `cq-stop ${outcome} ${pid ?? ''}\n`;
export function parseStopReply(stdout: string): StopOutcome | null {
  const m = /^cq-stop (terminated|killed|not-running|missing)\b/m.exec(stdout);
  return m ? (m[1] as StopOutcome) : null;
}

// Output so far: the .out file on stdout, the .err file on stderr.
export function buildReadOutput(spec: Omit<ProcessSpec, 'runId'>): string {
  return fill(T.read, { dir: validate.path(spec.runDir), name: validate.name(spec.name) });
}
export function parseReadOutput(script: string): Omit<ProcessSpec, 'runId'> | null {
  const s = match(T.read, script);
  return s ? { runDir: s.dir!, name: s.name! } : null;
}

export interface StaleProcess {
  runId: string;
  name: string;
  pid: number;
  runDir: string;
}

// List marked, still-running processes of any run under root (pid files in <root>/<runId>/<name>.pid).
export function buildFindStale(root = RUN_ROOT): string {
  return fill(T.stale, { root: validate.path(root) });
}
export function parseFindStale(script: string): { root: string } | null {
  const s = match(T.stale, script);
  return s ? { root: s.root! } : null;
}
export function parseFindStaleReply(stdout: string, root = RUN_ROOT): StaleProcess[] {
  const out: StaleProcess[] = [];
  for (const m of stdout.matchAll(/^cq-stale (\S+) (\S+) (\d+)$/gm)) {
    out.push({ runId: m[1]!, name: m[2]!, pid: Number(m[3]), runDir: `${root}/${m[1]}` });
  }
  return out;
}

async function runOrThrow(runner: CommandRunner, script: string, what: string): Promise<CommandResult> {
  const r = await runner.run(script, { timeoutMs: 30_000 });
  if (r.exitCode !== 0) {
    throw new TransportError(runner.node, `${what} failed (exit ${r.exitCode ?? r.signal}): ${r.stderr.trim().slice(0, 200)}`);
  }
  return r;
}

// Processes left behind by earlier runs (other than `exceptRunId`; only `onlyRunId`'s when given).
export async function findStale(runner: CommandRunner, opts: { root?: string; exceptRunId?: string; onlyRunId?: string } = {}): Promise<StaleProcess[]> {
  const root = opts.root ?? RUN_ROOT;
  const r = await runOrThrow(runner, buildFindStale(root), 'looking for stale processes');
  return parseFindStaleReply(r.stdout, root).filter((p) => p.runId !== opts.exceptRunId && (opts.onlyRunId === undefined || p.runId === opts.onlyRunId));
}

// Stop them (TERM, then KILL after graceMs); returns what was found and how each ended.
export async function cleanupStale(
  runner: CommandRunner,
  opts: { root?: string; exceptRunId?: string; onlyRunId?: string; graceMs?: number } = {},
): Promise<Array<StaleProcess & { outcome: StopOutcome | null }>> {
  const found = await findStale(runner, opts);
  const done: Array<StaleProcess & { outcome: StopOutcome | null }> = [];
  for (const p of found) {
    const r = await runOrThrow(runner, buildStop({ ...p, graceMs: opts.graceMs ?? 2000 }), `stopping ${p.name}`);
    done.push({ ...p, outcome: parseStopReply(r.stdout) });
  }
  return done;
}

export interface WrappedStartOptions {
  runDir: string;
  name: string;
  runId?: string; // defaults to the run directory's last component
  pollMs?: number;
  clock?: Clock;
}

// start() for any runner that runs shell commands: wrappers above, status polled until the process ends.
export async function startWrapped(runner: CommandRunner, command: string, opts: WrappedStartOptions): Promise<RemoteProcess> {
  const spec: ProcessSpec = { runDir: opts.runDir, name: opts.name, runId: opts.runId ?? runIdOf(opts.runDir) };
  const script = buildStart({ ...spec, command });
  const started = await runOrThrow(runner, script, `starting ${spec.name}`);
  const pid = parseStartReply(started.stdout);
  if (pid === null) throw new TransportError(runner.node, `starting ${spec.name}: no pid in reply ${JSON.stringify(started.stdout.slice(0, 80))}`);
  const clock = opts.clock ?? systemClock;
  const pollMs = opts.pollMs ?? 1000;
  const t0 = clock.now();
  let stoppedWith: StopOutcome | null = null;
  let wake: (() => void) | null = null;
  const output = async () => {
    const r = await runner.run(buildReadOutput(spec), { timeoutMs: 30_000 });
    return { stdout: r.stdout, stderr: r.stderr };
  };
  const done = (async (): Promise<CommandResult> => {
    for (;;) {
      const r = await runOrThrow(runner, buildStatus(spec), `status of ${spec.name}`);
      const st = parseStatusReply(r.stdout);
      if (!st) throw new TransportError(runner.node, `status of ${spec.name}: unreadable reply ${JSON.stringify(r.stdout.slice(0, 80))}`);
      if (st.state !== 'running') {
        const out = await output();
        const exitCode = st.state === 'exited' ? st.exitCode : null;
        const signal = exitCode !== null ? null : stoppedWith === 'killed' ? 'SIGKILL' : 'SIGTERM';
        return { command, ...out, exitCode, signal, durationMs: clock.now() - t0 };
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        void clock.sleep(pollMs).then(resolve);
      });
      wake = null;
    }
  })();
  done.catch(() => undefined); // observed by the caller through `done`
  return {
    name: spec.name,
    pid,
    done,
    output,
    async stop(graceMs = 2000) {
      const r = await runOrThrow(runner, buildStop({ ...spec, graceMs }), `stopping ${spec.name}`);
      const outcome = parseStopReply(r.stdout);
      if (outcome === 'terminated' || outcome === 'killed') stoppedWith = outcome;
      (wake as (() => void) | null)?.();
    },
  };
}
