import type { LoopbackPhase, ProtocolCommands } from '../../protocol/index.js';
import { limitOf, renderCommand } from '../../protocol/index.js';
import { parseIbWriteBw } from '../../probes/ib-write-bw.js';
import { ParseError } from '../../domain/errors.js';
import { quoteInput } from '../../domain/text.js';
import type { Rail } from '../../domain/node.js';
import type { CommandResult, RemoteProcess } from '../../transport/types.js';
import type { NodeState, RunContext } from '../context.js';
import { SetupError, setupReason } from '../run-errors.js';
import { lineBuffered, serverAdvice, untilListening } from './link-load.js';

// Rail r's loopback server listens on LOOPBACK_PORT + r.
const LOOPBACK_PORT = 18600;

// How a loopback measurement reaches one node: the run journals every command; the batch's readiness check logs its own.
export interface LoopbackIo {
  start(command: string, name: string): Promise<RemoteProcess>;
  run(command: string, what: string, timeoutMs: number): Promise<CommandResult>;
  stop(p: RemoteProcess): Promise<void>;
  sleep(ms: number): Promise<void>;
}

// One loopback figure: a rail (PCIe function) of one node, both ib_write_bw ends on that node.
export interface LoopbackResult {
  node: string;
  rail: number;
  device: string;
  pci?: string;
  gbps: number;
}

// ib_write_bw with both ends on one rail of one node does not touch the wire: ~106 Gb/s = that PCIe function is fine,
// ~13 = throttled (the hot-plug trap), ~50 = the function trained at Gen5 x2 (an old BIOS). A missing result row is an
// error whatever the exit status (a wrong GID index prints the header only and exits 0).
export async function measureLoopback(
  io: LoopbackIo,
  commands: Pick<ProtocolCommands, 'loopbackServer' | 'loopbackClient'>,
  phase: Pick<LoopbackPhase, 'msgSize' | 'durationS'>,
  rail: { index: number; rdmaDevice: string; ip: string },
): Promise<{ gbps: number; warnings?: string[] } | { error: string; rule?: string; advice?: string }> {
  const values = { rdmaDevice: rail.rdmaDevice, tcpPort: LOOPBACK_PORT + rail.index, msgSize: phase.msgSize, durationS: phase.durationS, serverIp: rail.ip };
  // Process names are [a-z0-9-] (device names such as mlx5_1 are not): the rail index names it.
  const server = await io.start(lineBuffered(renderCommand(commands.loopbackServer, values)), `loopback-server-rail-${rail.index}`);
  try {
    const why = await untilListening(server, (ms) => io.sleep(ms), rail.rdmaDevice);
    if (why) return { error: why, rule: 'ib-write-bw-server', advice: serverAdvice(why) };
    const client = await io.run(renderCommand(commands.loopbackClient, values), `loopback-client:${rail.rdmaDevice}`, (phase.durationS + 60) * 1000);
    try {
      const parsed = parseIbWriteBw(client.stdout);
      const rows = parsed.rows;
      // Lines this parser does not know (another perftest build's): the client's whole output is in the journal
      // (runLogged); the run says so, never a reason to refuse the figure.
      return { gbps: rows[rows.length - 1]!.bwAverageGbps, ...(parsed.warnings.length ? { warnings: parsed.warnings } : {}) };
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      return { error: `loopback ib_write_bw on ${rail.rdmaDevice} gave no result (exit ${client.exitCode}): ${e.reason}` };
    }
  } finally {
    await io.stop(server);
  }
}

// The reason a set of loopback figures below the floor gives, with the advice for the host (never a cable verdict):
// every rail of a node slow is the throttled state a reboot clears; one rail slow while the other is fine is that
// PCIe function's link (an older BIOS trains the second function at Gen5 x2).
export function loopbackFloorReason(results: LoopbackResult[], floorGbps: number): ReturnType<typeof setupReason> | null {
  const slow = results.filter((r) => r.gbps < floorGbps);
  if (slow.length === 0) return null;
  const oneRail = slow.filter((s) => results.some((r) => r.node === s.node && r.rail !== s.rail && r.gbps >= floorGbps));
  const figures = slow.map((s) => `${s.node} rail ${s.rail} (${s.device}) ${s.gbps.toFixed(1)} Gb/s`).join(', ');
  const pcie = oneRail.length
    ? `check the PCIe link of ${oneRail.map((s) => `${s.node} ${s.pci ?? s.device}`).join(', ')} (sudo lspci -vv -s <address>: LnkSta should read Speed 32GT/s, Width x4; an older BIOS trains the second function at x2: update the BIOS); `
    : '';
  const advice = `${pcie}reboot both nodes with the cable attached (sudo systemctl reboot --no-block); if it persists, power off for 60 s. The cable is not judged`;
  const what = oneRail.length
    ? 'a PCIe function is slow: check its link, then reboot both nodes'
    : 'NIC throttled: reboot both nodes with the cable attached; if it persists, power off 60 s';
  return setupReason('loopback-floor', `${what} (loopback ib_write_bw ${figures} < ${floorGbps} Gb/s floor; the cable is not judged)`, {
    node: slow[0]!.node,
    rail: slow[0]!.rail,
    value: slow[0]!.gbps,
    unit: 'Gb/s',
    limit: `loopback >= ${floorGbps} Gb/s`,
    advice,
  });
}

// A process name ([a-z0-9-]) for a journal label such as `loopback-client:roceP2p1s0f1`.
const processName = (what: string) => what.toLowerCase().replace(/[^a-z0-9-]+/g, '-');

// The run's journaled way of reaching a node for loopback.
function runIo(ctx: RunContext, node: NodeState): LoopbackIo {
  return {
    start: (command, name) => ctx.startProcess(node, command, name),
    // The client is a load: a FAIL decided while it runs stops it at once (ctx.runLoad).
    run: (command, what, timeoutMs) => ctx.runLoad(node, command, what, processName(what), timeoutMs),
    stop: (p) => ctx.stopProcesses([p]),
    sleep: (ms) => ctx.sleep(ms),
  };
}

// Both rails of one node, one after the other (each figure is that PCIe function's alone).
async function loopbackNode(ctx: RunContext, node: NodeState, phase: LoopbackPhase): Promise<LoopbackResult[]> {
  const out: LoopbackResult[] = [];
  for (const [index, rail] of node.cage!.rails.entries() as IterableIterator<[number, Rail]>) {
    const r = await measureLoopback(runIo(ctx, node), ctx.protocol.commands, phase, { index, rdmaDevice: rail.rdmaDevice, ip: node.railIps[index]! });
    if ('error' in r)
      throw new SetupError(
        setupReason(r.rule ?? 'loopback-failed', `${node.spec.name}: ${r.error}`, {
          node: node.spec.name,
          rail: index,
          advice: r.advice ?? 'check perftest on the node and the RoCE GID index',
        }),
      );
    for (const w of r.warnings ?? [])
      ctx.warn(
        `loopback ib_write_bw on ${node.spec.name} ${rail.rdmaDevice} printed a line cablequal does not know (kept in the journal): ${quoteInput(w, 120)}`,
      );
    out.push({ node: node.spec.name, rail: index, device: rail.rdmaDevice, ...(rail.pci ? { pci: rail.pci } : {}), gbps: r.gbps });
  }
  return out;
}

// Loopback guard on both rails of every node: any rail below the protocol's floor is ERROR with the advice for the
// host, never a cable FAIL (a low ib_write_bw sum is graded only when every rail was fine here).
export async function loopback(ctx: RunContext, phase: LoopbackPhase): Promise<void> {
  const results = (await Promise.all(ctx.nodes.map((n) => loopbackNode(ctx, n, phase)))).flat();
  for (const r of results) ctx.benchmarks.loopback.push({ node: r.node, rail: r.rail, gbps: r.gbps });
  ctx.journal.append({
    type: 'benchmark',
    tS: ctx.tS,
    phase: phase.name,
    kind: 'loopback',
    results: results.map((r) => ({ node: r.node, rail: r.rail, device: r.device, gbps: r.gbps })),
  });
  const reason = loopbackFloorReason(results, limitOf(ctx.protocol, 'loopback-floor').fail);
  if (reason) throw new SetupError(reason);
}
