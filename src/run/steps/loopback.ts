import type { LoopbackPhase } from '../../protocol/index.js';
import { renderCommand } from '../../protocol/index.js';
import { parseIbWriteBw } from '../../probes/ib-write-bw.js';
import { ParseError } from '../../domain/errors.js';
import type { NodeState, RunContext } from '../context.js';
import { SetupError, setupReason } from '../run-errors.js';
import { lineBuffered, waitUntilListening } from './link-load.js';

const LOOPBACK_PORT = 18600;

// ib_write_bw with both ends on one node does not touch the wire: ~106 Gb/s = card fine, ~13 = throttled.
async function loopbackOne(ctx: RunContext, node: NodeState, phase: LoopbackPhase): Promise<number> {
  const rail = node.cage!.rails[0];
  const values = { rdmaDevice: rail.rdmaDevice, tcpPort: LOOPBACK_PORT, msgSize: phase.msgSize, durationS: phase.durationS, serverIp: node.railIps[0]! };
  const server = await ctx.startProcess(node, lineBuffered(renderCommand(ctx.protocol.commands.loopbackServer, values)), `loopback-server-${rail.rdmaDevice.toLowerCase()}`);
  try {
    await waitUntilListening(ctx, node, server, rail.rdmaDevice);
    const client = await ctx.runLogged(node, renderCommand(ctx.protocol.commands.loopbackClient, values), `loopback-client:${rail.rdmaDevice}`, (phase.durationS + 60) * 1000);
    try {
      const parsed = parseIbWriteBw(client.stdout);
      const last = parsed.rows[parsed.rows.length - 1]!;
      return last.bwAverageGbps;
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      throw new SetupError(setupReason('loopback-failed', `${node.spec.name}: loopback ib_write_bw gave no result (exit ${client.exitCode}): ${e.reason}`, { node: node.spec.name, advice: 'check perftest on the node and the RoCE GID index' }));
    }
  } finally {
    await ctx.stopProcesses([server]);
  }
}

// Loopback guard on every node: below the protocol's floor is ERROR "NIC throttled", never a cable FAIL.
export async function loopback(ctx: RunContext, phase: LoopbackPhase): Promise<void> {
  const results = await Promise.all(ctx.nodes.map(async (n) => ({ node: n, gbps: await loopbackOne(ctx, n, phase) })));
  for (const r of results) ctx.benchmarks.loopback.push({ node: r.node.spec.name, rail: 0, gbps: r.gbps });
  ctx.journal.append({ type: 'benchmark', tS: ctx.tS, phase: phase.name, kind: 'loopback', results: results.map((r) => ({ node: r.node.spec.name, gbps: r.gbps })) });
  const slow = results.filter((r) => r.gbps < phase.floorGbps);
  if (slow.length) {
    throw new SetupError(
      setupReason('loopback-floor', `NIC throttled: reboot both nodes; if it persists, power off 60 s (loopback ib_write_bw ${slow.map((s) => `${s.node.spec.name} ${s.gbps.toFixed(1)} Gb/s`).join(', ')} < ${phase.floorGbps} Gb/s floor; the cable is not judged)`, {
        node: slow[0]!.node.spec.name,
        value: slow[0]!.gbps,
        unit: 'Gb/s',
        limit: `loopback >= ${phase.floorGbps} Gb/s`,
        advice: 'reboot both nodes; if it persists, power off 60 s (the cable is not judged)',
      }),
    );
  }
}
