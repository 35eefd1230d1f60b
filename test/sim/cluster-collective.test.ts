// The simulated lab's all_gather_perf across a cluster (src/sim/programs-collective.ts): the command the cluster check
// builds from the cabling map (src/domain/cluster-check.ts) runs on every direct topology and fails as CLUSTERS.md
// says real clusters do when the environment or the device lists are wrong.
import { describe, expect, it } from 'vitest';
import { buildCablingMap } from '../../src/domain/cabling-rules.js';
import { plannedPings } from '../../src/domain/cabling-map.js';
import { clusterCommand, clusterEnv, clusterRanks, type ClusterRank } from '../../src/domain/cluster-check.js';
import { parseNccl } from '../../src/probes/nccl.js';
import { readNodeView, runPings } from '../../src/probes/cabling-read.js';
import { createLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';

async function mapped(scenario: string) {
  const lab = createLab({ scenario, clock: new VirtualClock() });
  const runners = new Map(lab.nodes.map((n) => [n, lab.runner(n)] as const));
  const views = [];
  for (const n of lab.nodes) views.push(await readNodeView(runners.get(n)!, n));
  const map = buildCablingMap(views, await runPings(runners, plannedPings(views)));
  return { lab, map, ranks: clusterRanks(map, (n) => n) };
}

async function gather(lab: ReturnType<typeof createLab>, ranks: ClusterRank[], env: Record<string, string>) {
  const r = await lab.runner(ranks[0]!.node).run(clusterCommand(ranks, env));
  return { ...r, text: `${r.stdout}\n${r.stderr}` };
}

describe('all_gather_perf across a simulated cluster', () => {
  it('triangle: three ranks over all four devices each, IB, about half a pair bandwidth (above NVIDIA 10 GB/s)', async () => {
    const { lab, map, ranks } = await mapped('triangle');
    expect(map.topology).toBe('triangle');
    expect(ranks.map((r) => r.devices.length)).toEqual([4, 4, 4]);
    const r = await gather(lab, ranks, clusterEnv('triangle'));
    expect(r.exitCode, r.text).toBe(0);
    const n = parseNccl(r.text);
    expect(n.collective).toBe('all_gather_perf');
    expect(n.ranks).toHaveLength(3);
    expect(n.ranks.every((x) => x.network === 'IB' && x.devices.length === 4)).toBe(true);
    // nccl-tests rounds 16 GiB down to a whole count per rank: 1431655765 floats each, 17179869180 bytes in all.
    expect(n.rows.map((x) => [x.size, x.count, x.redop])).toEqual([[17179869180, 1431655765, 'none']]);
    // Half the pair's 22.96 GB/s (21.2 x 1.13 x 0.96), split over two neighbours: 11.5 GB/s, with 1 % noise.
    expect(n.avgBusBandwidthGBs!).toBeGreaterThan(11.2);
    expect(n.avgBusBandwidthGBs!).toBeLessThan(11.8);
    const row = n.rows[0]!.outOfPlace;
    expect(row.busbwGBs / row.algbwGBs).toBeCloseTo(2 / 3, 2); // all_gather: busbw = algbw (n-1)/n
  });

  it('triangle without NCCL_CROSS_NIC=1: ibv_modify_qp times out, naming no cable', async () => {
    const { lab, ranks } = await mapped('triangle');
    const { NCCL_CROSS_NIC: _drop, ...env } = clusterEnv('triangle');
    const r = await gather(lab, ranks, env);
    expect(r.exitCode).toBe(1);
    expect(r.text).toMatch(/ibv_modify_qp failed with 110 \(Connection timed out\)/);
    expect(() => parseNccl(r.text)).toThrow(/nccl-tests reported a failure/);
  });

  it("a rank listing a device of an empty cage times out; a pair gets the cable's full figure", async () => {
    const { lab, ranks } = await mapped('good-qsfp56');
    expect(ranks.map((r) => r.devices.length)).toEqual([2, 2]);
    const ok = parseNccl((await gather(lab, ranks, clusterEnv('pair'))).text);
    // The recorded GB10 pair's 22.96 GB/s, 1 % noise: clear of NVIDIA's 21.875 GB/s for a direct cluster.
    expect(ok.avgBusBandwidthGBs!).toBeGreaterThan(22.6);
    expect(ok.avgBusBandwidthGBs!).toBeLessThan(23.3);
    const extra = ranks.map((r, i) => (i === 1 ? { ...r, devices: [...r.devices, 'rocep1s0f0'] } : r));
    const bad = await gather(lab, extra, clusterEnv('pair'));
    expect([bad.exitCode, /ibv_modify_qp failed with 110/.test(bad.text)]).toEqual([1, true]);
  });

  it('ring of four: needs NCCL_ALGO=Ring (non-neighbours time out without it), and neighbours in rank order', async () => {
    const { lab, map, ranks } = await mapped('ring4');
    expect(map.topology).toBe('ring');
    const ok = await gather(lab, ranks, clusterEnv('ring'));
    expect(ok.exitCode, ok.text).toBe(0);
    expect(parseNccl(ok.text).ranks).toHaveLength(4);
    const { NCCL_ALGO: _a, ...noRing } = clusterEnv('ring');
    expect((await gather(lab, ranks, noRing)).text).toMatch(/ibv_modify_qp failed with 110/);
    // spark-a, spark-c next to each other in the ring of ranks: no cable joins them.
    const crossed = [ranks[0]!, ranks[2]!, ranks[1]!, ranks[3]!];
    expect((await gather(lab, crossed, clusterEnv('ring'))).exitCode).toBe(1);
  });

  it('an unknown host is an ORTE start failure', async () => {
    const { lab, ranks } = await mapped('triangle');
    const r = await gather(lab, [{ ...ranks[0]!, host: 'spark-zz' }, ...ranks.slice(1)], clusterEnv('triangle'));
    expect([r.exitCode, r.text]).toEqual([1, expect.stringMatching(/Could not resolve hostname spark-zz/)]);
  });
});
