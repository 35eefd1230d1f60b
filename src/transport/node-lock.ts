// One burn-in run per node at a time: two runs on the same cable would each see the other's traffic as errors.
// The lock is a directory (`mkdir` is atomic) holding an owner file; its mtime is the heartbeat.
import { hostname } from 'node:os';
import { UsageError } from '../domain/errors.js';
import { shellQuote, validate } from './commands.js';
import { RUN_ROOT, validateRunId } from './remote-process.js';
import type { CommandRunner } from './types.js';
import { TransportError } from './types.js';

export interface LockOwner {
  run: string;
  label: string;
  host: string;
  pid: number;
  started: string; // ISO time
}

export type LockReply = { state: 'acquired' } | { state: 'held'; owner: Partial<LockOwner>; ageS: number | null; liveProcesses: number };

const LABEL = /^[A-Za-z0-9 _.:@/+-]{0,80}$/;

function checkOwner(o: LockOwner): LockOwner {
  validateRunId(o.run);
  if (!LABEL.test(o.label)) throw new UsageError(`refusing lock label ${JSON.stringify(o.label)}: it must match ${LABEL.source}`);
  if (!/^[A-Za-z0-9.-]{1,253}$/.test(o.host)) throw new UsageError(`refusing controller host ${JSON.stringify(o.host)}`);
  if (!Number.isInteger(o.pid) || o.pid < 0) throw new UsageError(`refusing pid ${o.pid}`);
  if (!/^[0-9TZ:.+-]{10,40}$/.test(o.started)) throw new UsageError(`refusing start time ${JSON.stringify(o.started)}`);
  return o;
}

// The owner file, its age in seconds and how many processes carry its run marker (the "held" part of a reply).
function heldReport(r: string): string {
  return [
    `cat ${r}/lock/owner 2>/dev/null`,
    `echo "cq-lock-age $(( $(date +%s) - $(stat -c %Y ${r}/lock/owner 2>/dev/null || stat -c %Y ${r}/lock) ))"`,
    `o=$(sed -n 's/^run=//p' ${r}/lock/owner 2>/dev/null); n=0; if [ -n "$o" ]; then n=$(grep -lzx "CABLEQUAL_RUN=$o" /proc/[0-9]*/environ 2>/dev/null | wc -l); fi; echo "cq-lock-live $n"`,
  ].join('; ');
}

// Try to take the lock; when held, print the owner file, its age in seconds and how many processes carry its run marker.
export function buildAcquire(root: string, owner: LockOwner): string {
  const r = validate.path(root);
  const o = checkOwner(owner);
  const lines = [`run=${o.run}`, `label=${o.label}`, `host=${o.host}`, `pid=${o.pid}`, `started=${o.started}`].map(shellQuote).join(' ');
  return [
    `mkdir -p ${r} || exit 1`,
    `if mkdir ${r}/lock 2>/dev/null; then printf '%s\\n' ${lines} > ${r}/lock/owner && echo 'cq-lock acquired'; else echo 'cq-lock held'`,
    `${heldReport(r)}; fi`,
  ].join('; ');
}

// Look at the lock without taking it (`cablequal cleanup`): `cq-lock free`, or the same report as a held acquire.
export function buildLockInfo(root: string): string {
  const r = validate.path(root);
  return `if [ -d ${r}/lock ]; then echo 'cq-lock held'; ${heldReport(r)}; else echo 'cq-lock free'; fi`;
}

// Pure reading of buildLockInfo's output.
export function parseLockInfoReply(stdout: string): LockReply | { state: 'free' } | null {
  if (/^cq-lock free$/m.test(stdout)) return { state: 'free' };
  const r = parseAcquireReply(stdout);
  return r?.state === 'held' ? r : null;
}

// Recognise the lock scripts (the SSH server of the simulated lab keeps its lock in memory instead of a directory).
export function parseLockScript(
  script: string,
):
  | { op: 'acquire'; root: string; owner: Partial<LockOwner> }
  | { op: 'release' | 'heartbeat'; root: string; run: string }
  | { op: 'info'; root: string }
  | null {
  const info = /^if \[ -d (\S+)\/lock \]; then echo 'cq-lock held'; cat \1\/lock\/owner 2>\/dev\/null;/.exec(script);
  if (info) return { op: 'info', root: info[1]! };
  const acq = /^mkdir -p (\S+) \|\| exit 1; if mkdir \1\/lock 2>\/dev\/null; then printf '%s\\n' (.*?) > \1\/lock\/owner && echo 'cq-lock acquired';/.exec(
    script,
  );
  if (acq) {
    const owner: Partial<LockOwner> = {};
    // The printf arguments are shellQuote()d words: plain, or '...' with '\'' for a quote.
    for (const w of acq[2]!.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)) {
      const word = w[1] !== undefined ? w[1].replaceAll(`'\\''`, "'") : w[2]!;
      const eq = word.indexOf('=');
      const k = word.slice(0, eq);
      const v = word.slice(eq + 1);
      if (k === 'pid') owner.pid = Number(v);
      else if (k === 'run' || k === 'label' || k === 'host' || k === 'started') owner[k] = v;
    }
    return { op: 'acquire', root: acq[1]!, owner };
  }
  const m = /^if grep -qx '?run=([A-Za-z0-9_.:-]+)'? (\S+)\/lock\/owner 2>\/dev\/null; then (rm -rf|touch) /.exec(script);
  if (!m) return null;
  return { op: m[3] === 'rm -rf' ? 'release' : 'heartbeat', root: m[2]!, run: m[1]! };
}

// Pure reading of buildAcquire's output.
export function parseAcquireReply(stdout: string): LockReply | null {
  if (/^cq-lock acquired$/m.test(stdout)) return { state: 'acquired' };
  if (!/^cq-lock held$/m.test(stdout)) return null;
  const field = (k: string) => new RegExp(`^${k}=(.*)$`, 'm').exec(stdout)?.[1];
  const owner: Partial<LockOwner> = {};
  for (const k of ['run', 'label', 'host', 'started'] as const) {
    const v = field(k);
    if (v !== undefined) owner[k] = v;
  }
  const pid = field('pid');
  if (pid !== undefined && /^\d+$/.test(pid)) owner.pid = Number(pid);
  const age = /^cq-lock-age (-?\d+)$/m.exec(stdout);
  const live = /^cq-lock-live (\d+)$/m.exec(stdout);
  return { state: 'held', owner, ageS: age ? Number(age[1]) : null, liveProcesses: live ? Number(live[1]) : 0 };
}

// Remove the lock only if `run` still owns it (never someone else's).
export function buildRelease(root: string, run: string): string {
  const r = validate.path(root);
  return `if grep -qx ${shellQuote(`run=${validateRunId(run)}`)} ${r}/lock/owner 2>/dev/null; then rm -rf ${r}/lock && echo 'cq-unlock released'; else echo 'cq-unlock not-owner'; fi`;
}

// Refresh the heartbeat (owner file mtime) if we still own the lock.
export function buildHeartbeat(root: string, run: string): string {
  const r = validate.path(root);
  return `if grep -qx ${shellQuote(`run=${validateRunId(run)}`)} ${r}/lock/owner 2>/dev/null; then touch ${r}/lock/owner && echo 'cq-lock-beat ok'; else echo 'cq-lock-beat lost'; fi`;
}

export interface NodeLock {
  readonly node: string;
  readonly owner: LockOwner;
  heartbeat(): Promise<void>;
  release(): Promise<void>;
}

export interface AcquireOptions {
  runId: string;
  label: string;
  root?: string;
  // A lock with no heartbeat for this long and no live process of its run is stale (default 15 min).
  staleAfterMs?: number;
  // Remove a stale lock and take it (`--break-lock`); a live lock is never broken.
  breakLock?: boolean;
  controllerHost?: string;
  pid?: number;
  now?: () => number;
}

// The controller's name as a lock records it (and as `cablequal cleanup` compares it).
export function controllerHost(name = hostname()): string {
  return name.replace(/[^A-Za-z0-9.-]/g, '-').slice(0, 253) || 'unknown';
}

// A live run refreshes its locks' heartbeat every minute; three missed beats and the run is judged gone.
export const LOCK_HEARTBEAT_MS = 60_000;
export const LOCK_DEAD_AFTER_S = 180;

export function describeOwner(o: Partial<LockOwner>): string {
  return `run ${o.run ?? '(unknown)'}${o.label ? ` "${o.label}"` : ''} from ${o.host ?? '?'} pid ${o.pid ?? '?'}, started ${o.started ?? '?'}`;
}

// Take the node's lock or explain who holds it (TransportError: a harness ERROR, never a cable verdict).
export async function acquireLock(runner: CommandRunner, opts: AcquireOptions): Promise<NodeLock> {
  const root = opts.root ?? RUN_ROOT;
  const owner = checkOwner({
    run: opts.runId,
    label: opts.label,
    host: controllerHost(opts.controllerHost),
    pid: opts.pid ?? process.pid,
    started: new Date((opts.now ?? Date.now)()).toISOString(),
  });
  const staleS = (opts.staleAfterMs ?? 15 * 60_000) / 1000;
  for (let attempt = 0; attempt < 2; attempt++) {
    const res = await runner.run(buildAcquire(root, owner), { timeoutMs: 30_000 });
    const reply = parseAcquireReply(res.stdout);
    if (!reply)
      throw new TransportError(runner.node, `lock ${root}/lock: unexpected reply (exit ${res.exitCode}): ${(res.stderr || res.stdout).trim().slice(0, 200)}`);
    if (reply.state === 'acquired') {
      return {
        node: runner.node,
        owner,
        heartbeat: async () => {
          const r = await runner.run(buildHeartbeat(root, owner.run), { timeoutMs: 30_000 });
          if (!/cq-lock-beat ok/.test(r.stdout))
            throw new TransportError(runner.node, `lost the lock ${root}/lock (run ${owner.run}): someone removed or took it`);
        },
        release: async () => {
          await runner.run(buildRelease(root, owner.run), { timeoutMs: 30_000 });
        },
      };
    }
    const who = describeOwner(reply.owner);
    const stale = reply.ageS !== null && reply.ageS > staleS && reply.liveProcesses === 0;
    if (!stale) {
      // An orphan of a dead controller (a load left with --run_infinitely) keeps the lock live for ever: cleanup ends it.
      throw new TransportError(
        runner.node,
        `node is locked by ${who}; last heartbeat ${reply.ageS ?? '?'} s ago, ${reply.liveProcesses} process(es) of that run alive`,
        `wait for that run to finish or stop it first; if its controller died, \`cablequal cleanup --nodes ${runner.node}\` stops that run's processes and releases the lock (it refuses while the run is alive)`,
      );
    }
    if (!opts.breakLock || attempt > 0 || !reply.owner.run) {
      throw new TransportError(
        runner.node,
        `stale lock ${root}/lock left by ${who}: no heartbeat for ${reply.ageS} s and no process of that run alive`,
        `if that run is really over, rerun with --break-lock or remove it on the node: rm -r ${root}/lock`,
      );
    }
    await runner.run(buildRelease(root, reply.owner.run), { timeoutMs: 30_000 });
  }
  throw new TransportError(runner.node, `could not take ${root}/lock`);
}
