// `cablequal run --port both`: the cables in cage 0 and cage 1 between the same two nodes qualified at once, one run per
// cable (its own journal, record and certificate), sharing what src/run/together.ts says: the nodes are taken once for
// both, the benchmarks run one cable at a time, each soak starts on both cables together under one GPU load per node,
// and an early FAIL of one cable stops only its own load.
import pino, { type Logger } from 'pino';
import { UsageError } from '../domain/errors.js';
import type { NodeLock } from '../transport/node-lock.js';
import { keepLocksFresh, releaseLocks, takeNodes } from './node-taking.js';
import { runQualification, type RunDeps, type RunResult } from './qualify.js';
import type { ClusterPlan } from './steps/cluster-check.js';
import { TogetherRuns } from './together.js';
import { Mutex } from './turns.js';

// The second cable's link-load streams listen this far above the first's TCP ports (a run uses 4 of them).
const PORT_STEP = 10;

export interface CablesDeps {
  // A cluster's cables: its topology, each run's link id (in the order of runs), and its check across every node.
  cluster?: { topology: string; links: readonly string[]; check?: ClusterPlan };
  // The run of each cable: the same clock, runners, protocol and signal; each with its two nodes at the cages of its
  // cable, its own run id, label, logger and tick source.
  runs: readonly RunDeps[];
  // Both cages of two nodes (--port both): the cluster check of the pair, its ranks from the runs' cages.
  pairCheck?: boolean;
  // Take over a stale node lock (`--break-lock`).
  breakLock?: boolean;
  // Where lock troubles are logged (each run logs to its own run.log).
  log?: Logger;
}

// Run both cables' qualifications at once; each run's result, or why it could not even start (cage 0's first).
export async function runBothCages(d: CablesDeps & { runs: readonly [RunDeps, RunDeps] }): Promise<PromiseSettledResult<RunResult>[]> {
  checkPairing(d.runs[0], d.runs[1]);
  return runCables({ ...d, pairCheck: true }, 'cablequal run --port both');
}

// Run several cables' qualifications at once (both cages of two nodes, or every cable of a cluster): the nodes taken
// once for all, one benchmark phase at a time, the soaks together; each run's result, or why it could not start.
export async function runCables(d: CablesDeps, label: string): Promise<PromiseSettledResult<RunResult>[]> {
  const a = d.runs[0]!;
  const log = d.log ?? pino({ enabled: false });
  const together = new TogetherRuns(
    d.runs.map((r, i) => ({
      cage: r.nodes[0]!.cage as number,
      runId: r.runId,
      nodes: r.nodes.map((n) => n.name),
      ...(d.cluster ? { link: d.cluster.links[i]! } : {}),
    })),
    d.cluster?.topology,
    d.cluster ? d.cluster.check : d.pairCheck ? { topology: 'pair', ranks: 'from-runs' } : undefined,
  );
  const locks: NodeLock[] = [];
  const stopBeating = keepLocksFresh(locks, log, a.lockHeartbeatMs);
  try {
    const names = [...new Set(d.runs.flatMap((r) => r.nodes.map((n) => n.name)))];
    const nodes = names.map((name) => ({ name, runner: a.runners.get(name)! }));
    const stale = await takeNodes(nodes, { runId: a.runId, label, ...(d.breakLock ? { breakLock: true } : {}) }, locks);
    // One benchmark phase at a time over both runs (first come, first served): each cable is benchmarked alone.
    const turns = new Mutex();
    return await Promise.allSettled(
      d.runs.map((r, i) => {
        const member = together.member(i, { stale });
        // A run that could not start still lets the other go on alone.
        const portOffset = (r.portOffset ?? 0) + i * PORT_STEP;
        return runQualification({ ...r, together: member, portOffset, benchmarkGate: () => turns.lock() }).finally(() => member.ended());
      }),
    );
  } finally {
    await together.close();
    stopBeating();
    await releaseLocks(locks, log);
  }
}

// The two runs join the same two nodes, each node's cages told apart: one cable per cage.
function checkPairing(a: RunDeps, b: RunDeps): void {
  const names = (r: RunDeps) => r.nodes.map((n) => n.name).join(',');
  if (names(a) !== names(b)) throw new UsageError(`--port both: both cables join the same two nodes (got ${names(a)} and ${names(b)})`);
  for (const [i, n] of a.nodes.entries()) {
    const other = b.nodes[i]!.cage;
    if (typeof n.cage !== 'number' || typeof other !== 'number' || n.cage === other)
      throw new UsageError(`--port both: ${n.name} needs one cable in each cage (got cages ${String(n.cage)} and ${String(other)})`);
  }
}
