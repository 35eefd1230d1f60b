import { bidirectionalFlag, renderCommand } from '../../protocol/index.js';
import { parseIbWriteBw } from '../../probes/ib-write-bw.js';
import { ParseError } from '../../domain/errors.js';
import type { RemoteProcess } from '../../transport/types.js';
import type { RunContext } from '../context.js';

const BASE_PORT = 18515;

// The ib_write_bw pairs that load both rails of the cable: servers on the second node, clients on the first.
export interface LinkLoad {
  rails: { rail: number; device: string; server: RemoteProcess; client: RemoteProcess }[];
  startedS: number;
}

// Start full link load on both rails at once (one rail alone carries only ~100 Gb/s on a Spark).
export async function startLinkLoad(ctx: RunContext, opts: { msgSize: number; bidirectional: boolean; tag: string }): Promise<LinkLoad> {
  const [a, b] = ctx.nodes as [(typeof ctx.nodes)[0], (typeof ctx.nodes)[0]];
  const rails: LinkLoad['rails'] = [];
  for (const rail of [0, 1]) {
    const devB = b.cage!.rails[rail as 0 | 1].rdmaDevice;
    const devA = a.cage!.rails[rail as 0 | 1].rdmaDevice;
    const common = { tcpPort: BASE_PORT + rail, msgSize: opts.msgSize, bidirectional: bidirectionalFlag(opts.bidirectional) };
    const server = await ctx.startProcess(b, renderCommand(ctx.protocol.commands.ibWriteBwServer, { ...common, rdmaDevice: devB }), `${opts.tag}-server-${rail}`);
    rails.push({ rail, device: devA, server, client: null as unknown as RemoteProcess });
  }
  await ctx.sleep(1000);
  for (const r of rails) {
    const devA = a.cage!.rails[r.rail as 0 | 1].rdmaDevice;
    const values = { tcpPort: BASE_PORT + r.rail, msgSize: opts.msgSize, bidirectional: bidirectionalFlag(opts.bidirectional), rdmaDevice: devA, serverIp: b.railIps[r.rail]! };
    r.client = await ctx.startProcess(a, renderCommand(ctx.protocol.commands.ibWriteBwClient, values), `${opts.tag}-client-${r.rail}`);
  }
  return { rails, startedS: ctx.tS };
}

// Per-rail throughput rows printed so far by the clients (Gb/s, one per interval of --run_infinitely).
export async function linkLoadRows(load: LinkLoad): Promise<{ rail: number; device: string; gbps: number[]; error?: string }[]> {
  return Promise.all(
    load.rails.map(async (r) => {
      const out = await r.client.output();
      try {
        return { rail: r.rail, device: r.device, gbps: parseIbWriteBw(out.stdout).rows.map((x) => x.bwAverageGbps) };
      } catch (e) {
        if (!(e instanceof ParseError)) throw e;
        return { rail: r.rail, device: r.device, gbps: [], error: `${e.reason}${out.stderr ? `; stderr: ${out.stderr.trim().split('\n').slice(-1)[0]}` : ''}` };
      }
    }),
  );
}

// Whether any load process has ended by itself (link dropped, peer died).
export async function deadLoadProcesses(load: LinkLoad): Promise<string[]> {
  const dead: string[] = [];
  for (const r of load.rails) {
    for (const p of [r.server, r.client]) {
      const settled = await Promise.race([p.done.then(() => true, () => true), Promise.resolve(false)]);
      if (settled) dead.push(p.name);
    }
  }
  return dead;
}

export async function stopLinkLoad(ctx: RunContext, load: LinkLoad): Promise<void> {
  await ctx.stopProcesses(load.rails.flatMap((r) => [r.client, r.server]));
}
