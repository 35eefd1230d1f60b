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
  return { lab: createLab({ scenario, clock, ...opts }), clock };
}

// Servers on the second node, bidirectional --run_infinitely clients on the first, both rails (the protocol's link load).
export async function startLinkLoad(lab: SimLab, port = 18515): Promise<RemoteProcess[]> {
  const [a, b] = lab.nodes as [string, string];
  const procs: RemoteProcess[] = [];
  for (const [i, r] of RAILS.entries()) {
    const ip = lab.scenario.nodes[1].railIps[i]!;
    procs.push(await lab.runner(b).start(`ib_write_bw -d ${r.device} -p ${port + i} -F --report_gbits -s 65536 -b --run_infinitely`, { runDir: '/tmp/cq', name: `srv-${i}` }));
    procs.push(await lab.runner(a).start(`ib_write_bw -d ${r.device} -p ${port + i} -F --report_gbits -s 65536 -b --run_infinitely ${ip}`, { runDir: '/tmp/cq', name: `cli-${i}` }));
  }
  return procs;
}

export async function startGpuLoad(lab: SimLab, seconds = 3600): Promise<RemoteProcess[]> {
  return Promise.all(lab.nodes.map((n) => lab.runner(n).start(`gpu_burn ${seconds}`, { runDir: '/tmp/cq', name: 'gpu-burn' })));
}

export const NCCL_CMD =
  'mpirun -np 2 -H 192.168.100.10:1,192.168.100.11:1 --mca btl_tcp_if_include enp1s0f1np1 -x NCCL_DEBUG=INFO -x NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1 -x NCCL_SOCKET_IFNAME=enp1s0f1np1 all_reduce_perf -b 256M -e 1G -f 2 -g 1';
