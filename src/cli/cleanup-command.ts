import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { printable } from '../domain/text.js';
import {
  buildLockInfo,
  buildRelease,
  controllerHost,
  describeOwner,
  LOCK_DEAD_AFTER_S,
  LOCK_HEARTBEAT_MS,
  parseLockInfoReply,
  type LockOwner,
} from '../transport/node-lock.js';
import { cleanupStale, RUN_ROOT } from '../transport/remote-process.js';
import { TransportError, type CommandRunner } from '../transport/types.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';
import { parseNodeList } from './run-command.js';
import { pidAlive } from './status-command.js';
import { makeRunners } from './transports.js';

export interface CleanupArgs {
  nodes: string;
  sshConfig?: string;
  acceptNewHostKeys?: boolean;
}

// Is the run holding a lock alive on its controller? On this controller: its pid is there and is a cablequal
// process (a pid reused by something else is not the run). On another controller its processes cannot be seen
// from here: the lock's heartbeat, refreshed every minute by a live run, decides (older than three minutes: gone).
export function judgeOwner(
  owner: Partial<LockOwner>,
  ageS: number | null,
  here = controllerHost(),
  probe: { alive: (pid: number) => boolean; cmdline: (pid: number) => string | null } = { alive: pidAlive, cmdline: readCmdline },
): { alive: boolean; why: string } {
  if (owner.host === here && owner.pid !== undefined) {
    if (!probe.alive(owner.pid)) return { alive: false, why: `its controller process (pid ${owner.pid} on this host, ${here}) is gone` };
    const cmd = probe.cmdline(owner.pid);
    if (cmd !== null && !/cablequal/.test(cmd))
      return { alive: false, why: `pid ${owner.pid} on this host is now another program (${printable(cmd.slice(0, 60))}): the run's controller is gone` };
    return {
      alive: true,
      why: `its controller is running on this host as pid ${owner.pid}: stop it there (Ctrl-C, or kill -INT ${owner.pid}), which stops its loads and releases the lock`,
    };
  }
  if (ageS !== null && ageS <= LOCK_DEAD_AFTER_S) {
    return {
      alive: true,
      why: `its controller ${owner.host ?? '?'} refreshed the lock ${ageS} s ago (a live run does every ${LOCK_HEARTBEAT_MS / 1000} s): stop the run there`,
    };
  }
  return {
    alive: false,
    why: `the lock has not been refreshed for ${ageS ?? '?'} s (a live run refreshes it every ${LOCK_HEARTBEAT_MS / 1000} s; its controller ${owner.host ?? '?'} cannot be checked from here)`,
  };
}

function readCmdline(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return null; // no /proc (macOS controller): the pid alone decides
  }
}

// Clean one node: say what was found, what was stopped, whether the lock was released; false when refused or failed.
async function cleanNode(runner: CommandRunner, say: (line: string) => void): Promise<boolean> {
  const node = runner.node;
  const info = await runner.run(buildLockInfo(RUN_ROOT), { timeoutMs: 30_000 });
  const reply = parseLockInfoReply(info.stdout);
  if (!reply)
    throw new TransportError(
      node,
      `reading the lock ${RUN_ROOT}/lock: unexpected reply (exit ${info.exitCode}): ${(info.stderr || info.stdout).trim().slice(0, 200)}`,
    );
  let runId: string | undefined;
  if (reply.state === 'held') {
    const who = describeOwner(reply.owner);
    if (!reply.owner.run) {
      say(`${node}: the lock ${RUN_ROOT}/lock has no readable owner; not touched (check it, then remove it on the node: rm -r ${RUN_ROOT}/lock)`);
      return false;
    }
    const judged = judgeOwner(reply.owner, reply.ageS);
    if (judged.alive) {
      say(`${node}: refused: locked by ${who}, which is alive: ${judged.why}`);
      return false;
    }
    say(`${node}: locked by ${who}: judged dead: ${judged.why}`);
    runId = reply.owner.run;
  } else {
    say(`${node}: no lock held`);
  }
  // With the lock held by a dead run, only that run's processes; with no lock, no run is live here (every run
  // holds its nodes' locks while it runs), so any marked process is an orphan.
  const stopped = await cleanupStale(runner, runId ? { onlyRunId: runId } : {});
  for (const p of stopped) say(`${node}: stopped ${p.name} of run ${p.runId} (pid ${p.pid}): ${p.outcome ?? 'unknown reply'}`);
  if (stopped.length === 0)
    say(`${node}: no process of ${runId ? `run ${runId}` : 'any cablequal run'} running (found by the CABLEQUAL_RUN marker and pid files under ${RUN_ROOT})`);
  if (runId) {
    const r = await runner.run(buildRelease(RUN_ROOT, runId), { timeoutMs: 30_000 });
    if (!/cq-unlock released/.test(r.stdout)) {
      say(`${node}: the lock was not released: it is no longer held by run ${runId} (taken over meanwhile?)`);
      return false;
    }
    say(`${node}: lock of run ${runId} released`);
  }
  return true;
}

// `cablequal cleanup --nodes a,b`: after a controller died, stop its run's processes on each node and release its
// node locks; refuses while that run is alive. Exit 0 when every node is clean, 3 when one was refused or unreachable.
export async function cleanupCommand(args: CleanupArgs, io: CliIo): Promise<number> {
  const nodes = parseNodeList(args.nodes, undefined);
  if (nodes.length === 0) throw new UsageError('--nodes: name at least one node');
  const runners = await makeRunners(nodes, {
    acceptNewHostKeys: Boolean(args.acceptNewHostKeys),
    env: io.env,
    warn: (l) => io.stderr(`${l}\n`),
    ...(args.sshConfig ? { sshConfig: resolve(io.cwd, args.sshConfig) } : {}),
  });
  let ok = true;
  try {
    for (const n of nodes) {
      const runner = runners.get(n.name)!;
      try {
        if (!(await cleanNode(runner, (l) => io.stdout(`${printable(l)}\n`)))) ok = false;
      } catch (e) {
        if (!(e instanceof TransportError)) throw e;
        io.stderr(`cablequal: ${printable(e.message)}\n`);
        ok = false;
      }
    }
  } finally {
    await Promise.all([...runners.values()].map((r) => r.close().catch(() => undefined)));
  }
  return ok ? EXIT.ok : EXIT.error;
}
