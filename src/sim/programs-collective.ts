// mpirun ... all_gather_perf across the nodes of a simulated cluster (2-8 ranks, one per node), as the cluster check
// of `run --cluster` and NVIDIA's cluster setup run it. Each rank is judged with its own environment against its own
// node's cabled cages, by the facts of ../shared/CLUSTERS.md:
// - a device in NCCL_IB_HCA that is down or on no cable is tried against the peer and times out in ibv_modify_qp;
// - neighbours in the ring of ranks need a cable between them (or both on the switch) whose devices both ranks list;
// - on a direct ring of 4 or more, NCCL's own algorithm connects non-neighbours and times out unless NCCL_ALGO=Ring;
// - a 3-node mesh needs NCCL_CROSS_NIC=1 (each cable meets a different cage at its two ends);
// - a link that drops while it runs ends it with a network error.
// The bus bandwidth is generated: the cables' all_reduce figure times 1.13 for two nodes or a switch (so that a good
// cable's 16 GiB all_gather lands on the recorded GB10 pair's 22.96 GB/s after the formatter's 0.96 size shape: 21.2 x
// 1.13 x 0.96), half that on a direct ring (each node's traffic split over its two neighbours), TCP sockets' ~2.9 GB/s
// for a rank with no device.
import type { LabCore } from './lab-core.js';
import type { LinkSim } from './model.js';
import { isSwitchPort } from './scenario.js';
import { normal, streamId, uniform } from './prng.js';
import type { ProcBehaviour, ProcStatus } from './sim-process.js';
import { formatAllReduce, rankInitLines, type NcclRankRun } from './format-nccl.js';
import { exitedAtOnce } from './programs-load.js';

export interface CollectiveContext {
  np: number;
  hosts: string[];
  env: Map<string, string>;
  program: string;
  args: string[];
}

const DASHES = '-'.repeat(74);
const GIB = 1024 ** 3;

// The node a -H host names: a node's name or hostname, or an address of one of its rails.
export function nodeOfHost(core: LabCore, host: string): string | null {
  const n = core.spec.nodes.find((x) => x.name === host || x.hostname === host);
  return n ? n.name : (core.ownerOf(host)?.node ?? null);
}

// The cables of a node's cages and what each reaches.
function cablesOf(core: LabCore, node: string): { cage: number; link: LinkSim; far: string | null; devices: string[] }[] {
  const out = [];
  for (const cage of [0, 1]) {
    const link = core.cableAt(node, cage);
    if (!link) continue;
    const far = core.farEnd(node, cage);
    out.push({
      cage,
      link,
      far: far === null ? null : isSwitchPort(far) ? `switch:${far.switch}` : far.node,
      devices: core
        .functions(node)
        .filter((f) => f.cage === cage)
        .map((f) => f.rdmaDevice),
    });
  }
  return out;
}

function failed(stdout: string, stderr: string): ProcBehaviour {
  return exitedAtOnce(stdout, stderr, 1);
}

export function startCollective(core: LabCore, node: string, contexts: readonly CollectiveContext[]): ProcBehaviour {
  const t = core.now();
  const ranks: { host: string; ctx: CollectiveContext }[] = [];
  for (const c of contexts) for (let i = 0; i < c.np; i++) ranks.push({ host: c.hosts[Math.min(i, c.hosts.length - 1)] ?? node, ctx: c });
  const names = ranks.map((r) => nodeOfHost(core, r.host));
  const unknown = names.findIndex((n) => n === null);
  if (unknown >= 0 || ranks.length < 2)
    return failed(
      '',
      `ssh: Could not resolve hostname ${ranks[unknown]?.host ?? '(none)'}: Name or service not known\n${DASHES}\nORTE was unable to reliably start one or more daemons.\n${DASHES}\n`,
    );
  const nodes = names as string[];
  const down = nodes.find((n) => n !== node && core.model.rebooting(n, t));
  if (down)
    return failed('', `ssh: connect to host ${down} port 22: No route to host\n${DASHES}\nORTE was unable to reliably start one or more daemons.\n${DASHES}\n`);
  const runs: (NcclRankRun & { node: string; listed: string[]; env: Map<string, string> })[] = ranks.map((r, i) => {
    const n = nodes[i]!;
    const spec = core.nodeSpec(n);
    const active = cablesOf(core, n)
      .filter((c) => core.model.isLinkUp(t, c.link))
      .flatMap((c) => c.devices);
    const hca = r.ctx.env.get('NCCL_IB_HCA');
    const listed = hca ? hca.split(',').map((h) => h.replace(/^[=^]/, '').split(':')[0]!) : active;
    const pid = 20000 + Math.floor(uniform(core.seed, streamId(n), 62, Math.floor(t)) * 30000);
    return {
      node: n,
      name: spec.hostname ?? n,
      pid,
      ip: r.host,
      netdev: r.ctx.env.get('NCCL_SOCKET_IFNAME') ?? 'enP7s7',
      devices: listed.filter((d) => active.includes(d)),
      listed,
      env: r.ctx.env,
      ...(spec.ncclVersion ? { ncclVersion: spec.ncclVersion } : {}),
    };
  });
  const args = contexts[0]!.args;
  const arg = (f: string) => (args.indexOf(f) >= 0 ? args[args.indexOf(f) + 1] : undefined);
  const size = /^(\d+)G$/i.exec(arg('-b') ?? '')?.[1] ? Number(/^(\d+)G$/i.exec(arg('-b')!)![1]) * GIB : 16 * GIB;
  const head = () => runs.flatMap((h) => rankInitLines(h)).join('\n');
  // ibv_modify_qp timing out (NCCL's words when a QP's peer never answers), naming no cable.
  const timeout = (h: (typeof runs)[number], dev: string) =>
    failed(
      `${head()}\n`,
      `${h.name}:${h.pid}:${h.pid} [0] misc/ibvwrap.cc:216 NCCL WARN Call to ibv_modify_qp failed with 110 (Connection timed out), device ${dev}\n${h.name}: Test NCCL failure common.cu:1279 'remote process exited or there was a network error / '\n`,
    );
  for (const h of runs) {
    const dead = h.listed.find((d) => !h.devices.includes(d));
    if (dead !== undefined) return timeout(h, dead);
  }
  // The ring of ranks: each rank and the next need a cable between them (or both on the switch), listed at both ends.
  const links: LinkSim[] = [];
  const direct = !runs.some((h) => cablesOf(core, h.node).some((c) => c.far?.startsWith('switch:')));
  for (const [i, h] of runs.entries()) {
    const next = runs[(i + 1) % runs.length]!;
    const mine = cablesOf(core, h.node).filter((c) => c.devices.some((d) => h.devices.includes(d)));
    const theirs = cablesOf(core, next.node).filter((c) => c.devices.some((d) => next.devices.includes(d)));
    const shared = mine.find((c) => (c.far === next.node && theirs.some((x) => x.link === c.link)) || (c.far?.startsWith('switch:') && theirs.length));
    if (!shared) return timeout(h, h.devices[0] ?? '(none)');
    links.push(shared.link);
  }
  const complete = runs.every((h) => runs.every((o) => o === h || cablesOf(core, h.node).some((c) => c.far === o.node)));
  if (direct && !complete && runs.some((h) => h.env.get('NCCL_ALGO') !== 'Ring')) return timeout(runs[0]!, runs[0]!.devices[0] ?? '(none)');
  if (direct && runs.length === 3 && runs.some((h) => h.env.get('NCCL_CROSS_NIC') !== '1')) return timeout(runs[0]!, runs[0]!.devices[0] ?? '(none)');
  const wire = Math.min(...links.map((l) => l.spec.nccl.busbwGBs)) * 1.13;
  const socket = runs.some((h) => h.devices.length === 0);
  const busbw = socket ? 2.9 : direct && runs.length >= 3 ? wire / 2 : wire;
  const r = formatAllReduce({
    hosts: runs,
    minBytes: size,
    maxBytes: size,
    factor: 2,
    busbwGBs: busbw,
    collective: 'all_gather_perf',
    jitter: (i) => Math.max(-1, Math.min(1, normal(core.seed, 63, Math.floor(t), i) / 2)),
  });
  const end = t + r.seconds;
  return {
    plannedEndS: () => end,
    onStop: () => undefined,
    status: (tS): ProcStatus => {
      const broken = links.find((l) => !core.model.isLinkUp(Math.min(tS, end), l));
      if (broken) {
        const h = runs[0]!;
        return {
          stdout: `${r.text.split('\n#\n#   ')[0]!}\n`,
          stderr: `${h.name}: Test NCCL failure common.cu:1279 'remote process exited or there was a network error / '\n .. ${h.name} pid ${h.pid}: Test failure common.cu:1132\n`,
          ended: true,
          exitCode: 1,
        };
      }
      return tS >= end ? { stdout: r.text, stderr: '', ended: true, exitCode: 0 } : { stdout: '', stderr: '', ended: false, exitCode: null };
    },
  };
}
