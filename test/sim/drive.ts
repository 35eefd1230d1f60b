// Drives a simulated lab the way the default protocol does (full link load, 10 min idle GPUs, then GPUs loaded).
import { createLab, type SimLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import type { RemoteProcess } from '../../src/transport/types.js';

export const RAILS = [
  { device: 'rocep1s0f1', netdev: 'enp1s0f1np1' },
  { device: 'roceP2p1s0f1', netdev: 'enP2p1s0f1np1' },
] as const;

export function newLab(scenario: string, opts: { seed?: number; faults?: string[] } = {}): { lab: SimLab; clock: VirtualClock } {
  const clock = new VirtualClock();
  const lab = createLab({ scenario, clock, ...opts });
  clocks.set(lab, clock);
  return { lab, clock };
}

// Wait until a started ib_write_bw server prints its banner (it listens from then on), as the harness does.
export async function untilListening(p: RemoteProcess, clock: { sleep(ms: number): Promise<void> }): Promise<RemoteProcess> {
  for (let i = 0; i < 200; i++) {
    if (/Waiting for client to connect/.test((await p.output()).stdout)) return p;
    await clock.sleep(100);
  }
  throw new Error(`${p.name} never listened`);
}

// Servers on the second node, bidirectional --run_infinitely clients on the first, both rails (-b: both directions
// loaded by one pair per rail).
export async function startLinkLoad(lab: SimLab, port = 18515, clock?: VirtualClock): Promise<RemoteProcess[]> {
  const [a, b] = lab.nodes as [string, string];
  const servers = await Promise.all(
    RAILS.map((r, i) =>
      lab
        .runner(b)
        .start(`stdbuf -oL ib_write_bw -d ${r.device} -p ${port + i} -F --report_gbits -s 65536 -b --run_infinitely`, { runDir: '/tmp/cq', name: `srv-${i}` }),
    ),
  );
  for (const s of servers) await untilListening(s, clock ?? labClock(lab) ?? runnerClock(lab.runner(b)));
  const procs: RemoteProcess[] = [];
  for (const [i, r] of RAILS.entries()) {
    const ip = lab.scenario.nodes[1].railIps[i]!;
    procs.push(
      servers[i]!,
      await lab
        .runner(a)
        .start(`ib_write_bw -d ${r.device} -p ${port + i} -F --report_gbits -s 65536 -b --run_infinitely ${ip}`, { runDir: '/tmp/cq', name: `cli-${i}` }),
    );
  }
  return procs;
}

// Sleep in a lab's virtual time through one of its runners (the sim's `sleep`), when the clock is not at hand.
export function runnerClock(r: { run(c: string): Promise<unknown> }): { sleep(ms: number): Promise<void> } {
  return { sleep: async (ms) => void (await r.run(`sleep ${ms / 1000}`)) };
}

// The clock a lab was built with (newLab keeps it beside the lab); other labs sleep through a runner.
const clocks = new WeakMap<SimLab, VirtualClock>();
function labClock(lab: SimLab): VirtualClock | undefined {
  return clocks.get(lab);
}

// gpu_burn the way the default protocol starts it: 16 GiB, its compare kernel named with -c, the run length last.
export const GPU_BURN = (seconds: number) => `gpu_burn -m 16384 -c /usr/local/share/gpu-burn/compare.ptx ${seconds}`;

export async function startGpuLoad(lab: SimLab, seconds = 3600): Promise<RemoteProcess[]> {
  return Promise.all(lab.nodes.map((n) => lab.runner(n).start(GPU_BURN(seconds), { runDir: '/tmp/cq', name: 'gpu-burn' })));
}

export const NCCL_CMD =
  'mpirun -np 2 -H 192.168.100.10:1,192.168.100.11:1 --mca btl_tcp_if_include enp1s0f1np1 -x NCCL_DEBUG=INFO -x NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1 -x NCCL_SOCKET_IFNAME=enp1s0f1np1 all_reduce_perf -b 256M -e 1G -f 2 -g 1';
