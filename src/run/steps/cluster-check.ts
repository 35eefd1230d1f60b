// The cluster check of `run --cluster` (src/domain/cluster-check.ts): all_gather_perf across every node of the
// cluster with the topology's environment, run once from one run's first node while every cable waits at the first
// soak; each cable's journal keeps the same `cluster-check` line, and its record reads the figures from the raw text.
import type { Topology } from '../../domain/cabling.js';
import { clusterCommand, clusterEnv, rankProblem, type ClusterCheckLine, type ClusterRank } from '../../domain/cluster-check.js';
import { ParseError } from '../../domain/errors.js';
import { parseNccl } from '../../probes/nccl.js';
import type { ClusterCheckRecord } from '../../domain/cluster-check.js';
import { printable } from '../../domain/text.js';
import type { RunContext } from '../context.js';
import { FailDecided } from '../run-errors.js';

// The ranks, in the order of the cabling (cablequal's cluster map), and the topology.
export interface ClusterPlan {
  topology: Topology;
  ranks: ClusterRank[];
}

// How long the collective may take: 16 GiB gathered 21 times, at TCP's ~3 GB/s at worst, is about 2 minutes.
const CHECK_TIMEOUT_MS = 600_000;

// Run the collective from this run's first node (the ranks turned to start there: the ring keeps its order). The line
// to journal, and what stopped this run meanwhile (a FAIL it decided, Ctrl-C) for the caller to handle once the line
// is written; another run's line says it was stopped.
export async function runClusterCheck(ctx: RunContext, plan: ClusterPlan): Promise<{ line: ClusterCheckLine; error?: unknown }> {
  const launcher = ctx.nodes[0]!;
  const at = Math.max(
    0,
    plan.ranks.findIndex((r) => r.node === launcher.spec.name),
  );
  const ranks = [...plan.ranks.slice(at), ...plan.ranks.slice(0, at)];
  const env = clusterEnv(plan.topology);
  const base = { topology: plan.topology, collective: 'all_gather_perf' as const, ranks, env, launcher: launcher.spec.name };
  const refused = ranks.map(rankProblem).find((p) => p !== null);
  if (refused) return { line: { ...base, command: '', exitCode: null, stdout: '', stderr: '', stopped: `not run: ${refused}` } };
  const command = clusterCommand(ranks, env);
  try {
    const r = await ctx.runLoad(launcher, command, 'nccl', 'cluster-all-gather', CHECK_TIMEOUT_MS);
    return {
      line: { ...base, command, exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr, ...(r.timedOut ? { stopped: 'timeout' } : {}) },
    };
  } catch (error) {
    const stopped = error instanceof FailDecided ? `stopped: ${launcher.spec.name}'s cable was decided FAIL while it ran` : 'stopped: the run was interrupted';
    return { line: { ...base, command, exitCode: null, stdout: '', stderr: '', stopped }, error };
  }
}

// The record's reading of a journal's cluster-check line: the figures from nccl-tests' own text (never from the line),
// and why there is none. Every rank must have used IB over every device its list names.
export function clusterCheckRecordOf(line: Record<string, unknown>): ClusterCheckRecord | null {
  const ranks = Array.isArray(line['ranks']) ? (line['ranks'] as ClusterRank[]) : null;
  if (!ranks || typeof line['topology'] !== 'string') return null;
  const base = {
    topology: line['topology'] as Topology,
    collective: 'all_gather_perf' as const,
    nodes: ranks.map((r) => String(r.node)),
    env: (line['env'] ?? {}) as Record<string, string>,
    command: String(line['command'] ?? ''),
  };
  const none = (problem: string): ClusterCheckRecord => ({ ...base, busbwGBs: null, ranks: [], problem: printable(problem) });
  if (typeof line['stopped'] === 'string') return none(line['stopped']);
  const text = `${String(line['stdout'] ?? '')}\n${String(line['stderr'] ?? '')}`;
  const warn = /NCCL WARN (.*)$/m.exec(text)?.[1];
  const exit = String(line['exitCode']);
  let parsed;
  try {
    parsed = parseNccl(text);
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    return none(`all_gather_perf gave no result (exit ${exit}): ${warn ?? e.reason}`);
  }
  if (parsed.avgBusBandwidthGBs === null) return none(`all_gather_perf gave no result (exit ${exit}): ${warn ?? 'no "# Avg bus bandwidth" line'}`);
  // Each rank found by its bootstrap address (the host the command gave it), else by position.
  const seen = ranks.map((r, i) => {
    const rank = parsed.ranks.find((x) => x.ip === r.host) ?? parsed.ranks[i];
    return { node: String(r.node), network: rank?.network ?? null, devices: rank?.devices ?? [], want: r.devices };
  });
  const out = { ...base, busbwGBs: parsed.avgBusBandwidthGBs, ranks: seen.map(({ node, network, devices }) => ({ node, network, devices })) };
  const off = seen.find((x) => x.network !== 'IB');
  if (off) return { ...out, problem: printable(`${off.node}'s rank used network ${off.network ?? 'unknown'} instead of IB`) };
  const short = seen.find((x) => x.want.some((d) => !x.devices.includes(d)));
  if (short) return { ...out, problem: printable(`${short.node}'s rank used ${short.devices.join(', ') || 'no device'} of ${short.want.join(', ')}`) };
  if (line['exitCode'] !== 0) return { ...out, problem: printable(`all_gather_perf exited ${exit}${warn ? `: ${warn}` : ''}`) };
  return { ...out, problem: null };
}
