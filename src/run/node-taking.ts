// Taking the nodes for a run: each node's lock (two runs must never share a pair; src/transport/node-lock.ts), kept
// fresh by a heartbeat while the run goes on, and the load processes a dead earlier run left behind stopped (found by
// their pid files and run marker, never by process name). A run takes its nodes itself; a two-cable run
// (src/run/both-cages.ts) takes them once for both of its runs.
import type { Logger } from 'pino';
import { acquireLock, LOCK_HEARTBEAT_MS, type NodeLock } from '../transport/node-lock.js';
import { cleanupStale } from '../transport/remote-process.js';
import type { CommandRunner } from '../transport/types.js';

// A load process of an earlier run found running on a node, and how stopping it went.
export interface StaleFound {
  node: string;
  run: string;
  name: string;
  pid: number;
  outcome: unknown;
}

// Lock each real node (the simulated lab needs none) and stop what dead runs left there; `locks` receives each lock as
// it is taken, so a failure part way still releases the ones taken.
export async function takeNodes(
  nodes: readonly { name: string; runner: CommandRunner }[],
  o: { runId: string; label: string; breakLock?: boolean },
  locks: NodeLock[],
): Promise<StaleFound[]> {
  const found: StaleFound[] = [];
  for (const n of nodes) {
    if (n.runner.simulated) continue;
    locks.push(await acquireLock(n.runner, { runId: o.runId, label: o.label, ...(o.breakLock ? { breakLock: true } : {}) }));
    for (const p of await cleanupStale(n.runner, { exceptRunId: o.runId }))
      found.push({ node: n.name, run: p.runId, name: p.name, pid: p.pid, outcome: p.outcome });
  }
  return found;
}

// Refresh the locks' heartbeat every `everyMs` (`cablequal cleanup` judges a lock by it) until the returned stop().
export function keepLocksFresh(locks: readonly NodeLock[], log: Logger, everyMs = LOCK_HEARTBEAT_MS): () => void {
  const timer = setInterval(() => {
    for (const l of locks) l.heartbeat().catch((e: unknown) => log.warn({ err: e, node: l.node }, 'refreshing the node lock failed'));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

// Release every lock (a failure is logged: the lock's heartbeat stops, so it goes stale).
export async function releaseLocks(locks: readonly NodeLock[], log: Logger): Promise<void> {
  await Promise.all(locks.map((l) => l.release().catch((e: unknown) => log.warn({ err: e, node: l.node }, 'releasing the node lock failed'))));
}
