import { median, min, max } from 'simple-statistics';
import type { IbWriteBwPhase, NcclPhase, ProtocolCommands } from '../../protocol/index.js';
import { renderCommand } from '../../protocol/index.js';
import { parseNccl } from '../../probes/nccl.js';
import { ParseError } from '../../domain/errors.js';
import type { NodeState, RunContext } from '../context.js';
import { FailDecided, SetupError, setupReason } from '../run-errors.js';
import { keepClientOutput, linkLoadRows, loadOutputWarning, startOneWayLoad, stopLinkLoad, type StreamRows } from './link-load.js';
import type { DirectionThroughput } from '../../domain/record.js';

// One direction's streams as the journal keeps them: the rows of each rail and the time they ran.
type TimedRows = StreamRows & { startS: number; endS: number };

// One direction of the cable alone on both rails for durationS: its rows, each stream's time span with them. A FAIL
// decided meanwhile cuts the sleep (FailDecided): the streams stop at once, what their clients printed kept raw.
async function oneDirection(ctx: RunContext, phase: IbWriteBwPhase, direction: 0 | 1): Promise<TimedRows[]> {
  const load = await startOneWayLoad(ctx, { msgSize: phase.msgSize, direction, tag: 'bw' });
  try {
    await ctx.sleep(phase.durationS * 1000);
    const rows = await linkLoadRows(load);
    for (const r of rows) for (const w of r.warnings ?? []) ctx.warn(loadOutputWarning(r, w));
    return rows.map((r) => ({ ...r, startS: load.startedS, endS: ctx.tS }));
  } catch (e) {
    if (e instanceof FailDecided) await keepClientOutput(ctx, load);
    throw e;
  } finally {
    await stopLinkLoad(ctx, load);
  }
}

// ib_write_bw across the cable one direction at a time, as NVIDIA measures a pair of Sparks (dgx-spark-playbooks,
// connect-two-sparks performance guide: both rails from one node to the other, "repeat in the reverse direction"):
// first node to second on both rails for durationS, then back. Min, median and max of the periodic rows of each
// stream. The limits (170/180 Gb/s, like NVIDIA's published 92.57 + 97.28 = 189.85 Gb/s) are one-way figures: each
// direction is held to them, and the weaker direction is the figure graded. Loading both directions at once is the
// soaks' work, not the benchmark's.
export async function ibWriteBw(ctx: RunContext, phase: IbWriteBwPhase): Promise<void> {
  const rows: TimedRows[] = [];
  for (const direction of phase.bidirectional ? ([0, 1] as const) : ([0] as const)) rows.push(...(await oneDirection(ctx, phase, direction)));
  const perDirection: DirectionThroughput[] = [];
  for (const r of rows) {
    if (r.gbps.length === 0) {
      throw new SetupError(
        setupReason('ib-write-bw-failed', `ib_write_bw ${r.from} -> ${r.to} on rail ${r.rail} (${r.device}) gave no result: ${r.error ?? 'no rows'}`, {
          rail: r.rail,
          node: r.from,
          advice: 'check the rail addresses, the RoCE GID index and that perftest runs on both nodes',
        }),
      );
    }
    let d = perDirection.find((x) => x.from === r.from && x.to === r.to);
    if (!d) perDirection.push((d = { from: r.from, to: r.to, perRail: [], sumMedianGbps: 0, startS: r.startS, endS: r.endS }));
    d.perRail.push({ rail: r.rail, device: r.device, minGbps: min(r.gbps), medianGbps: median(r.gbps), maxGbps: max(r.gbps), samples: r.gbps.length });
    d.sumMedianGbps += median(r.gbps);
  }
  const weaker = perDirection.reduce((w, d) => (d.sumMedianGbps < w.sumMedianGbps ? d : w));
  const bench = { perRail: weaker.perRail, sumMedianGbps: weaker.sumMedianGbps, perDirection, directions: 'one-at-a-time' as const };
  ctx.benchmarks.ibWriteBw = bench;
  ctx.lastThroughputGbps = weaker.sumMedianGbps;
  ctx.journal.append({ type: 'benchmark', tS: ctx.tS, phase: phase.name, kind: 'ib_write_bw', ...bench, rows });
}

// The names one node's rank of the NCCL test uses: its rail-0 address and netdev, both RDMA devices of its cage.
function rankNames(n: NodeState): { ip: string; netdev: string; hcaList: string } {
  return { ip: n.railIps[0]!, netdev: n.cage!.rails[0].netdev, hcaList: n.cage!.rails.map((r) => r.rdmaDevice).join(',') };
}

const RANKS_MARK = '__cq_ranks__';

// The mpirun line: one OpenMPI application context per node, each with that node's own NCCL_IB_HCA,
// NCCL_SOCKET_IFNAME and btl_tcp_if_include, joined by " : "; the out-of-band channel pinned to the rail-0 subnet
// (interface names differ between the nodes of a triangle, the subnet does not). Protocols before the per-node form
// name node A's devices for both ranks: refused when the two nodes' names differ, as they do in a triangle.
export function ncclCommand(commands: ProtocolCommands, nodes: readonly [NodeState, NodeState]): string {
  const [a, b] = nodes;
  if (commands.ncclRank === undefined) {
    const na = rankNames(a);
    const nb = rankNames(b);
    if (na.netdev !== nb.netdev || na.hcaList !== nb.hcaList) {
      throw new SetupError(
        setupReason(
          'nccl-names',
          `the protocol's nccl command names ${a.spec.name}'s devices (${na.hcaList}, ${na.netdev}) for both ranks, but ${b.spec.name} has the cable on ${nb.hcaList} (${nb.netdev})`,
          {
            node: b.spec.name,
            advice: 'use a protocol with commands.ncclRank (one app context per node, as protocols/spark-burnin.json has)',
          },
        ),
      );
    }
    return renderCommand(commands.nccl, { ipA: na.ip, ipB: nb.ip, netdevA: na.netdev, hcaList: na.hcaList });
  }
  const ranks = nodes.map((n) => renderCommand(commands.ncclRank!, rankNames(n))).join(' : ');
  return renderCommand(commands.nccl, { oobInclude: a.railSubnets[0]!, ranks: RANKS_MARK }).replace(RANKS_MARK, ranks);
}

// NCCL all_reduce over both RDMA devices of each node's cage; one device or TCP means a setup fault, not a cable fault.
export async function nccl(ctx: RunContext, phase: NcclPhase): Promise<void> {
  const nodes = ctx.nodes as [NodeState, NodeState];
  const [a] = nodes;
  const command = ncclCommand(ctx.protocol.commands, nodes);
  // A load in the foreground: a FAIL decided while it runs stops it at once (its output so far journaled).
  const r = await ctx.runLoad(a, command, 'nccl', `${phase.name}-mpirun`, (phase.durationS ?? 900) * 1000);
  let parsed;
  try {
    parsed = parseNccl(`${r.stdout}\n${r.stderr}`);
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    throw new SetupError(
      setupReason('nccl-failed', `all_reduce_perf gave no result (exit ${r.exitCode}): ${e.reason}`, {
        advice: 'run the same mpirun line by hand on the first node; check passwordless SSH between the nodes and nccl-tests',
      }),
    );
  }
  // Each node's rank, found by its bootstrap address (the rail-0 address the command gave it).
  const ranks = nodes.map((n) => {
    const rank = parsed.ranks.find((x) => x.ip === n.railIps[0]);
    return {
      node: n.spec.name,
      want: n.cage!.rails.map((x) => x.rdmaDevice),
      network: rank?.network ?? parsed.network,
      devices: rank?.devices ?? parsed.netDevices,
      ncclVersion: rank?.ncclVersion,
    };
  });
  const busbw = parsed.rows.map((x) => x.outOfPlace.busbwGBs);
  ctx.benchmarks.nccl = {
    busbwGBs: parsed.avgBusBandwidthGBs,
    maxBusbwGBs: busbw.length ? max(busbw) : null,
    network: parsed.network,
    devices: parsed.netDevices,
    ranks: ranks.map(({ node, network, devices }) => ({ node, network, devices })),
  };
  // Each rank prints the NCCL it loaded (NCCL_DEBUG=INFO): kept with its node's facts; a bare `NCCL version` line
  // and nccl-tests' own version come from rank 0, the first node.
  nodes.forEach((n, i) => {
    const version = ranks[i]!.ncclVersion ?? (n === a ? parsed.ncclVersion : undefined);
    const tests = n === a ? parsed.version : undefined;
    if (version) n.record.ncclVersion = version;
    if (tests) n.record.ncclTestsVersion = tests;
    if (version || tests) ctx.journal.append({ type: 'node-info', tS: ctx.tS, node: n.spec.name, record: n.record });
  });
  ctx.journal.append({ type: 'benchmark', tS: ctx.tS, phase: phase.name, kind: 'nccl', ...ctx.benchmarks.nccl });
  const off = ranks.find((x) => x.network !== 'IB');
  if (parsed.network !== 'IB' || off) {
    const where = off ? `${off.node}'s rank used network ${off.network ?? 'unknown'}` : `NCCL used network ${parsed.network ?? 'unknown'}`;
    throw new SetupError(
      setupReason('nccl-network', `${where} instead of IB`, {
        ...(off ? { node: off.node } : {}),
        advice: "check NCCL_IB_HCA names the RDMA devices of each node's cabled cage and that they are Up; TCP fallback says nothing about the cable",
      }),
    );
  }
  for (const x of ranks) {
    const missing = x.want.filter((h) => !x.devices.includes(h));
    if (missing.length) {
      throw new SetupError(
        setupReason(
          'nccl-rails',
          `${x.node}: NCCL used ${x.devices.join(', ') || 'no device'} (busbw ${parsed.avgBusBandwidthGBs ?? '?'} GB/s; ${missing.join(', ')} unused): its rank needs NCCL_IB_HCA=${x.want.join(',')}`,
          {
            node: x.node,
            advice: `set NCCL_IB_HCA=${x.want.join(',')} for ${x.node}'s rank (both devices of its cabled port) and check both names appear in its NCCL_DEBUG=INFO lines`,
          },
        ),
      );
    }
  }
}
