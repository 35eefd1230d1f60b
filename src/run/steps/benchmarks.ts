import { median, min, max } from 'simple-statistics';
import type { IbWriteBwPhase, NcclPhase } from '../../protocol/index.js';
import { renderCommand } from '../../protocol/index.js';
import { parseNccl } from '../../probes/nccl.js';
import { ParseError } from '../../domain/errors.js';
import type { RunContext } from '../context.js';
import { SetupError, setupReason } from '../run-errors.js';
import { linkLoadRows, startLinkLoad, stopLinkLoad } from './link-load.js';

// ib_write_bw on both rails at once, both directions; min, median and max of the periodic rows per rail.
export async function ibWriteBw(ctx: RunContext, phase: IbWriteBwPhase): Promise<void> {
  const load = await startLinkLoad(ctx, { msgSize: phase.msgSize, bidirectional: phase.bidirectional, tag: 'bw' });
  let rows;
  try {
    await ctx.sleep(phase.durationS * 1000);
    rows = await linkLoadRows(load);
  } finally {
    await stopLinkLoad(ctx, load);
  }
  // With -b perftest prints both directions added up; every figure kept is per direction, like the limits
  // (170/180 Gb/s) and NVIDIA's published 92.57 + 97.28 = 189.85 Gb/s.
  const perDirection = phase.bidirectional ? 2 : 1;
  const perRail = rows.map((r) => {
    if (r.gbps.length === 0) {
      throw new SetupError(setupReason('ib-write-bw-failed', `ib_write_bw on rail ${r.rail} (${r.device}) gave no result: ${r.error ?? 'no rows'}`, { rail: r.rail, advice: 'check the rail addresses, the RoCE GID index and that perftest runs on both nodes' }));
    }
    const g = r.gbps.map((x) => x / perDirection);
    return { rail: r.rail, device: r.device, minGbps: min(g), medianGbps: median(g), maxGbps: max(g), samples: g.length };
  });
  const sumMedianGbps = perRail.reduce((s, r) => s + r.medianGbps, 0);
  ctx.benchmarks.ibWriteBw = { perRail, sumMedianGbps };
  ctx.lastThroughputGbps = sumMedianGbps;
  ctx.journal.append({ type: 'benchmark', tS: ctx.tS, phase: phase.name, kind: 'ib_write_bw', perRail, sumMedianGbps, bidirectional: phase.bidirectional, rows });
}

// NCCL all_reduce over both RDMA devices of the cage; one device or TCP means a setup fault, not a cable fault.
export async function nccl(ctx: RunContext, phase: NcclPhase): Promise<void> {
  const [a, b] = ctx.nodes as [(typeof ctx.nodes)[0], (typeof ctx.nodes)[0]];
  const hcas = a.cage!.rails.map((r) => r.rdmaDevice);
  const command = renderCommand(ctx.protocol.commands.nccl, { ipA: a.railIps[0]!, ipB: b.railIps[0]!, netdevA: a.cage!.rails[0].netdev, hcaList: hcas.join(',') });
  const r = await ctx.runLogged(a, command, 'nccl', (phase.durationS ?? 900) * 1000);
  let parsed;
  try {
    parsed = parseNccl(`${r.stdout}\n${r.stderr}`);
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    throw new SetupError(setupReason('nccl-failed', `all_reduce_perf gave no result (exit ${r.exitCode}): ${e.reason}`, { advice: 'run the same mpirun line by hand on the first node; check passwordless SSH between the nodes and nccl-tests' }));
  }
  const busbw = parsed.rows.map((x) => x.outOfPlace.busbwGBs);
  ctx.benchmarks.nccl = {
    busbwGBs: parsed.avgBusBandwidthGBs,
    maxBusbwGBs: busbw.length ? max(busbw) : null,
    network: parsed.network,
    devices: parsed.netDevices,
  };
  // NCCL and nccl-tests print their versions from rank 0 (the first node): kept with that node's facts.
  if (parsed.ncclVersion) a.record.ncclVersion = parsed.ncclVersion;
  if (parsed.version) a.record.ncclTestsVersion = parsed.version;
  if (parsed.ncclVersion || parsed.version) ctx.journal.append({ type: 'node-info', tS: ctx.tS, node: a.spec.name, record: a.record });
  ctx.journal.append({ type: 'benchmark', tS: ctx.tS, phase: phase.name, kind: 'nccl', ...ctx.benchmarks.nccl });
  if (parsed.network !== 'IB') {
    throw new SetupError(setupReason('nccl-network', `NCCL used network ${parsed.network ?? 'unknown'} instead of IB`, { advice: 'check NCCL_IB_HCA and that the RDMA devices are Up; TCP fallback says nothing about the cable' }));
  }
  const missing = hcas.filter((h) => !parsed.netDevices.includes(h));
  if (missing.length) {
    throw new SetupError(
      setupReason('nccl-rails', `NCCL used one rail only (${parsed.netDevices.join(', ') || 'no device'}, busbw ${parsed.avgBusBandwidthGBs ?? '?'} GB/s; ${missing.join(', ')} unused): set NCCL_IB_HCA=${hcas.join(',')}`, {
        advice: `set NCCL_IB_HCA=${hcas.join(',')} (both devices of the cabled port) and check both names appear in NCCL_DEBUG=INFO output`,
      }),
    );
  }
}
