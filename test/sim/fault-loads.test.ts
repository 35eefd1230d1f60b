// The simulated tools under the load and counter faults (issue 21 items 1-3, the simulator's side): what a node prints
// and how its processes end when its link-load clients stop, its GPU load exits, or its counters are cleared. What a run
// concludes from them is the run's business (test/faults/); these outputs are generated, not recordings.
import { describe, expect, it } from 'vitest';
import { parseEthtoolFec } from '../../src/probes/ethtool-fec.js';
import { parseEthtoolLink } from '../../src/probes/ethtool-link.js';
import { parseEthtoolStats } from '../../src/probes/ethtool-stats.js';
import { parseIbWriteBw } from '../../src/probes/ib-write-bw.js';
import { parseNvidiaSmi } from '../../src/probes/nvidia-smi.js';
import { parseFault } from '../../src/sim/faults.js';
import type { SimLab } from '../../src/sim/lab.js';
import { cmd } from '../../src/transport/commands.js';
import type { RemoteProcess } from '../../src/transport/types.js';
import { newLab, startGpuLoad, startLinkLoad } from './drive.js';

const IFACE = 'enp1s0f1np1';
const stats = async (lab: SimLab, node: string, iface = IFACE) => parseEthtoolStats((await lab.runner(node).run(cmd.ethtoolStats(iface))).stdout);
const fec = async (lab: SimLab, node: string) => parseEthtoolFec((await lab.runner(node).run(cmd.ethtoolFec(IFACE))).stdout).stats!;
const gpuUtil = async (lab: SimLab, node: string) =>
  parseNvidiaSmi((await lab.runner(node).run(cmd.nvidiaSmi())).stdout, ['index', 'name', 'utilization.gpu', 'temperature.gpu', 'power.draw']).gpus[0]![
    'utilization.gpu'
  ] as number;
// How a process ended, or null while it runs. A process notices an end of its own when the node is next asked anything
// (a run asks every tick); listing the node's processes asks.
async function ended(p: RemoteProcess, lab: SimLab): Promise<Awaited<RemoteProcess['done']> | null> {
  lab.processes(lab.nodes[0]!);
  return Promise.race([p.done, Promise.resolve(null)]);
}

describe('fault specs', () => {
  it('the three load and counter faults parse like the others: kind, time, optional node; the second node by default', () => {
    expect(parseFault('link-load-stop@700s:spark-a')).toMatchObject({ kind: 'link-load-stop', atS: 700, node: 'spark-a' });
    expect(parseFault('gpu-load-stop@1000s')).toMatchObject({ kind: 'gpu-load-stop', atS: 1000, node: null });
    expect(parseFault('counter-reset@900.5s:spark-b')).toMatchObject({ kind: 'counter-reset', atS: 900.5, node: 'spark-b' });
    expect(parseFault('phy-recovery@600s:spark-b')).toMatchObject({ kind: 'phy-recovery', atS: 600, node: 'spark-b' });
    expect(() => parseFault('link-load-stop@soon')).toThrow(
      /link-load-stop@700s, gpu-load-stop@1000s, counter-reset@900s, uncorrectable@60s, link-drop@60s or phy-recovery@600s/,
    );
  });
});

describe('link-load-stop: the node’s ib_write_bw clients over the cable stop printing and exit', () => {
  it('at 700 s spark-a’s clients exit 1 with the rows they had printed (no more after), their servers end, traffic stops, the link stays up', async () => {
    const { lab, clock } = newLab('good-qsfp56', { faults: ['link-load-stop@700s:spark-a'] });
    const load = await startLinkLoad(lab); // [server 0, client 0, server 1, client 1]: servers on spark-b, clients on spark-a
    const clients = [load[1]!, load[3]!];
    const servers = [load[0]!, load[2]!];
    await clock.sleep(690_000);
    for (const p of load) expect(await ended(p, lab)).toBeNull();
    const rowsBefore = parseIbWriteBw((await clients[0]!.output()).stdout).rows.length;
    await clock.sleep(20_000);
    for (const c of clients) {
      const r = (await ended(c, lab))!;
      expect(r).toMatchObject({ exitCode: 1, signal: null, stderr: '' });
      // Exit flushed its stdout: every row up to 700 s (one each 5 s from the start), the last with its newline.
      const rows = parseIbWriteBw(r.stdout).rows;
      expect(rows.length).toBeGreaterThanOrEqual(rowsBefore);
      expect(rows.length).toBeLessThanOrEqual(Math.floor(700 / 5));
      expect(rows.every((x) => x.bwAverageGbps > 90)).toBe(true);
      expect(r.stdout.endsWith('\n')).toBe(true);
    }
    for (const s of servers) expect(await ended(s, lab)).toMatchObject({ exitCode: 0 });
    expect(lab.processes('spark-a')).toEqual([]);
    expect(lab.processes('spark-b')).toEqual([]);
    expect(lab.events.filter((e) => e.kind === 'ib_write_bw-exit').map((e) => [e.node, e.tS])).toEqual([
      ['spark-a', 700],
      ['spark-a', 700],
    ]);
    // No more traffic: the receivers' byte counters stand still; the link is up, never dropped.
    const b1 = await stats(lab, 'spark-b');
    await clock.sleep(60_000);
    const b2 = await stats(lab, 'spark-b');
    expect(b2.counters['rx_bytes_phy']! - b1.counters['rx_bytes_phy']!).toBeLessThan(1_000_000n); // kernel-stack frames only
    expect(b2.linkDownEvents).toBe(0n);
    expect(parseEthtoolLink((await lab.runner('spark-a').run(cmd.ethtoolLink(IFACE))).stdout).linkDetected).toBe(true);
    expect(lab.state('spark-a').linkUp).toBe(true);
  });

  it('a node without link-load clients (the default, the second node, here) stops nothing', async () => {
    const { lab, clock } = newLab('good-qsfp56', { faults: ['link-load-stop@700s'] });
    const load = await startLinkLoad(lab);
    await clock.sleep(800_000);
    for (const p of load) expect(await ended(p, lab)).toBeNull();
    expect(lab.events.some((e) => e.kind === 'ib_write_bw-exit')).toBe(false);
    for (const p of load) await p.stop();
  });
});

describe('gpu-load-stop: the node’s GPU load exits and its GPU falls idle', () => {
  it('at 1000 s spark-b’s gpu_burn says its GPU test died and exits ENOMEDIUM; spark-b’s utilisation drops to idle, spark-a’s load runs on', async () => {
    const { lab, clock } = newLab('good-qsfp56', { faults: ['gpu-load-stop@1000s:spark-b'] });
    await clock.sleep(600_000);
    const [ga, gb] = (await startGpuLoad(lab, 3600)) as [RemoteProcess, RemoteProcess];
    await clock.sleep(300_000);
    expect(await gpuUtil(lab, 'spark-b')).toBeGreaterThan(90);
    await clock.sleep(110_000);
    const r = (await ended(gb, lab))!;
    expect(r.exitCode).toBe(123);
    expect(r.stderr).toBe('read[0] error 0\n\nNo clients are alive!  Aborting\n');
    // Its last progress line: 400 s of 3600 elapsed, the test's pipe at EOF.
    expect(r.stdout.split('\r').at(-1)).toMatch(/^11\.1% {2}proc'd: -1 \(\d+ Gflop\/s\) {3}errors: 0 {2}\(DIED!\)/);
    expect(await ended(ga, lab)).toBeNull();
    expect(await gpuUtil(lab, 'spark-b')).toBeLessThan(10);
    expect(await gpuUtil(lab, 'spark-a')).toBeGreaterThan(90);
    expect(lab.events.filter((e) => e.kind === 'gpu-load-exit').map((e) => [e.node, e.tS])).toEqual([['spark-b', 1000]]);
    await clock.sleep(600_000);
    expect(lab.state('spark-b').gpuTempC).toBeLessThan(lab.state('spark-a').gpuTempC - 10);
    await ga.stop();
  });
});

describe('counter-reset: every *_phy and FEC counter of the node back to 0, the link up', () => {
  it('at 900 s spark-b’s port counters restart from 0 and count on; its vport counters, its link and spark-a’s counters are untouched', async () => {
    const { lab, clock } = newLab('good-qsfp112', { faults: ['counter-reset@900s:spark-b'] });
    const load = await startLinkLoad(lab);
    await clock.sleep(895_000);
    const before = { b: await stats(lab, 'spark-b'), bFec: await fec(lab, 'spark-b'), a: await stats(lab, 'spark-a') };
    expect(before.b.correctedBits! > 100_000n).toBe(true);
    expect(before.bFec.correctedBlocks! > 100_000n).toBe(true);
    await clock.sleep(10_000);
    const b = await stats(lab, 'spark-b');
    const bFec = await fec(lab, 'spark-b');
    // Five seconds of counting since the reset: a few thousand corrected bits, not the 900 s before.
    expect(b.correctedBits! < before.b.correctedBits! / 50n).toBe(true);
    expect(b.correctedBits).toBe(b.lanes.reduce((x, y) => x + y, 0n));
    expect(bFec.correctedBlocks! < before.bFec.correctedBlocks! / 50n).toBe(true);
    expect(b.counters['rx_bytes_phy']! < before.b.counters['rx_bytes_phy']!).toBe(true);
    expect(b.linkDownEvents).toBe(0n);
    // Per-function (vport) counters are not *_phy: they count on.
    expect(b.counters['rx_vport_rdma_unicast_bytes']! > before.b.counters['rx_vport_rdma_unicast_bytes']!).toBe(true);
    expect(parseEthtoolLink((await lab.runner('spark-b').run(cmd.ethtoolLink(IFACE))).stdout).linkDetected).toBe(true);
    const a = await stats(lab, 'spark-a');
    expect(a.correctedBits! > before.a.correctedBits!).toBe(true);
    expect(a.counters['rx_bytes_phy']! > before.a.counters['rx_bytes_phy']!).toBe(true);
    expect(lab.events.filter((e) => e.kind === 'counter-reset').map((e) => [e.node, e.tS])).toEqual([['spark-b', 900]]);
    expect(lab.events.some((e) => e.kind === 'link-down')).toBe(false);
    for (const p of load) expect(await ended(p, lab)).toBeNull();
    for (const p of load) await p.stop();
  });
});
