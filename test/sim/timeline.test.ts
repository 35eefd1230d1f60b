// Each scenario's timeline under the default protocol's load pattern: 10 min full link load with idle GPUs, then GPUs loaded.
import { describe, expect, it } from 'vitest';
import { parseEthtoolStats } from '../../src/probes/ethtool-stats.js';
import { parseEthtoolLink } from '../../src/probes/ethtool-link.js';
import { parseEthtoolFec } from '../../src/probes/ethtool-fec.js';
import { parseIbWriteBw } from '../../src/probes/ib-write-bw.js';
import { parseNccl } from '../../src/probes/nccl.js';
import { parseEthtoolModule } from '../../src/probes/ethtool-module.js';
import { parseNvidiaSmi } from '../../src/probes/nvidia-smi.js';
import { cmd } from '../../src/transport/commands.js';
import { NCCL_CMD, newLab, RAILS, runnerClock, startGpuLoad, startLinkLoad, untilListening } from './drive.js';
import type { SimLab } from '../../src/sim/lab.js';

const IDLE_S = 600;
const stats = async (lab: SimLab, node: string, iface = 'enp1s0f1np1') => parseEthtoolStats((await lab.runner(node).run(cmd.ethtoolStats(iface))).stdout);

// The clone's bad conductor pair carries the spark-a -> spark-b direction: its lane 2 fails at spark-b's receiver only.
describe('failing-clone', () => {
  it('is clean with idle GPUs, then one lane climbs ~1000x above the others and the link drops on both nodes 3.1 min into the load', async () => {
    const { lab, clock } = newLab('failing-clone');
    const load = await startLinkLoad(lab);
    await clock.sleep(IDLE_S * 1000);
    const idle = lab.state('spark-b');
    expect(idle.linkUp).toBe(true);
    expect(idle.nicTempC).toBeCloseTo(60, 0);
    expect(idle.laneErrorRates[2]).toBeCloseTo(2900, -2);
    expect(idle.laneErrorRates[2]! / idle.laneErrorRates[0]!).toBeLessThan(100); // an idle-GPU test alone passes it
    expect(lab.state('spark-a').laneErrorRates[2]).toBeLessThan(100); // the other direction is clean
    for (const n of lab.nodes) {
      const before = await stats(lab, n);
      expect(before.linkDownEvents).toBe(0n);
      expect(before.crcErrors).toBe(0n);
      expect(before.pcsSymbolErrors).toBe(0n);
    }

    const gpus = await startGpuLoad(lab);
    const t0 = lab.timeS();
    await clock.sleep(120_000);
    const m2 = lab.state('spark-b');
    expect(m2.laneErrorRates[2]).toBeGreaterThan(2.5e6);
    expect(m2.laneErrorRates[2]).toBeLessThan(4.5e6);
    expect(m2.laneErrorRates[2]! / m2.laneErrorRates[1]!).toBeGreaterThan(500);
    // measured the way the harness does: a counter delta over 10 s on each receiver
    const b1 = await stats(lab, 'spark-b');
    const a1 = await stats(lab, 'spark-a');
    await clock.sleep(10_000);
    const b2 = await stats(lab, 'spark-b');
    const a2 = await stats(lab, 'spark-a');
    expect(Number(b2.lanes[2]! - b1.lanes[2]!) / 10).toBeGreaterThan(2.5e6);
    expect(Number(a2.lanes[2]! - a1.lanes[2]!) / 10).toBeLessThan(1e4);
    // Nothing uncorrectable yet: the aggregate looks harmless, the one lane is the only warning.
    expect(b2.crcErrors).toBe(0n);
    expect(b2.pcsSymbolErrors).toBe(0n);

    while (lab.state('spark-a').linkUp) await clock.sleep(1000);
    const dropS = lab.timeS() - t0;
    expect(dropS / 60).toBeGreaterThan(3.0);
    expect(dropS / 60).toBeLessThan(3.2);
    expect(lab.state('spark-b').nicTempC).toBeCloseTo(81, 0);
    const drops = lab.events.filter((e) => e.kind === 'link-down');
    expect(drops.map((e) => e.node)).toEqual(['spark-a', 'spark-b']);
    // The drop is the PCS giving up on uncorrectable codewords at spark-b's receiver, which went through CRC first.
    expect(drops[0]!.detail).toMatch(/hi_ber at spark-b: 2 uncorrectable RS\(544,514\) codewords within 500 us/);
    const after = await stats(lab, 'spark-b');
    const fec = parseEthtoolFec((await lab.runner('spark-b').run(cmd.ethtoolFec('enp1s0f1np1'))).stdout).stats!;
    expect(fec.uncorrectableBlocks! >= 2n).toBe(true);
    // Each uncorrectable codeword under load fails one or two frames; mlx5 counts them as CRC, symbol and PCS symbol
    // errors alike (the real degraded port of samples/ethtool-stats/mlx5-100g-annotated-...).
    expect(after.crcErrors! > 0n).toBe(true);
    expect(after.crcErrors! <= 2n * fec.uncorrectableBlocks!).toBe(true);
    expect(after.pcsSymbolErrors).toBe(after.crcErrors);
    expect((await stats(lab, 'spark-a')).crcErrors).toBe(0n);
    for (const n of lab.nodes) expect((await stats(lab, n)).linkDownEvents).toBe(1n);
    const client = await load[1]!.done;
    expect(client.exitCode).toBe(1);
    expect(client.stderr).toContain('Completion with error at client');
    expect(parseEthtoolLink((await lab.runner('spark-b').run(cmd.ethtoolLink('enp1s0f1np1'))).stdout).linkDetected).toBe(false);
    for (const p of [...load, ...gpus]) await p.stop();
    expect(lab.processes('spark-a')).toEqual([]);
    expect(lab.processes('spark-b')).toEqual([]);
  });

  it('lane rate just before the drop is ~11.7 million per second', async () => {
    const { lab, clock } = newLab('failing-clone');
    await startLinkLoad(lab);
    await clock.sleep(IDLE_S * 1000);
    await startGpuLoad(lab);
    await clock.sleep(180_000);
    expect(lab.state('spark-b').laneErrorRates[2]).toBeGreaterThan(1.05e7);
    expect(lab.state('spark-b').laneErrorRates[2]).toBeLessThan(1.275e7);
    const r = lab.state('spark-b').laneErrorRates;
    expect(r[2]! / r[0]!).toBeGreaterThan(900); // the only warning: one lane ~1000x the others
  });

  it('the drop time follows from codeword statistics: other seeds drop within seconds of 3.1 min, never without uncorrectable codewords', async () => {
    const times: number[] = [];
    for (const seed of [2, 3, 4, 5, 6]) {
      const { lab, clock } = newLab('failing-clone', { seed });
      await startLinkLoad(lab);
      await clock.sleep(IDLE_S * 1000);
      await startGpuLoad(lab);
      const t0 = lab.timeS();
      while (lab.state('spark-a').linkUp) await clock.sleep(1000);
      times.push((lab.timeS() - t0) / 60);
      const fec = parseEthtoolFec((await lab.runner('spark-b').run(cmd.ethtoolFec('enp1s0f1np1'))).stdout).stats!;
      expect(fec.uncorrectableBlocks! >= 2n).toBe(true); // two uncorrectable codewords at least
    }
    for (const m of times) {
      expect(m).toBeGreaterThan(2.9);
      expect(m).toBeLessThan(3.3);
    }
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    expect(mean).toBeGreaterThan(3.0);
    expect(mean).toBeLessThan(3.2);
  });
});

describe('good cables', () => {
  it('good-qsfp56: zero errors through 10 + 60 min, NIC up to ~82 C, ~185 Gb/s over both rails, NCCL ~21 GB/s', async () => {
    const { lab, clock } = newLab('good-qsfp56');
    const nccl = parseNccl((await lab.runner('spark-a').run(NCCL_CMD)).stdout);
    expect(nccl.avgBusBandwidthGBs).toBeCloseTo(21.2, 0);
    const a = lab.runner('spark-a');
    const b = lab.runner('spark-b');
    const srv = await Promise.all(
      RAILS.map(async (r, i) =>
        untilListening(
          await b.start(`stdbuf -oL ib_write_bw -d ${r.device} -p ${18600 + i} -F --report_gbits -s 65536 -D 30`, { runDir: '/tmp/cq', name: `bs${i}` }),
          clock,
        ),
      ),
    );
    const cli = await Promise.all(
      RAILS.map((r, i) =>
        a.start(`ib_write_bw -d ${r.device} -p ${18600 + i} -F --report_gbits -s 65536 -D 30 ${lab.scenario.nodes[1].railIps[i]}`, {
          runDir: '/tmp/cq',
          name: `bc${i}`,
        }),
      ),
    );
    const rows = await Promise.all(cli.map(async (p) => parseIbWriteBw((await p.done).stdout).rows[0]!.bwAverageGbps));
    expect(rows[0]! + rows[1]!).toBeCloseTo(185.1, 0);
    await Promise.all(srv.map((p) => p.done));
    const load = await startLinkLoad(lab);
    await clock.sleep(IDLE_S * 1000);
    await startGpuLoad(lab);
    let maxTemp = 0;
    for (let i = 0; i < 60; i++) {
      await clock.sleep(60_000);
      maxTemp = Math.max(maxTemp, lab.state('spark-b').nicTempC);
    }
    expect(maxTemp).toBeGreaterThan(81);
    expect(maxTemp).toBeLessThan(83.5);
    for (const n of lab.nodes) {
      const s = await stats(lab, n);
      expect(s.lanes).toEqual([0n, 0n, 0n, 0n]);
      expect(s.correctedBits).toBe(0n);
      expect(s.linkDownEvents).toBe(0n);
      expect(s.crcErrors).toBe(0n);
    }
    for (const p of load) expect((await p.output()).stderr).toBe('');
  });

  it('good-qsfp112 and marginal-qsfp112: pre-FEC BER in their bands once hot', async () => {
    for (const [name, lo, hi] of [
      ['good-qsfp112', 1e-8, 1e-7],
      ['marginal-qsfp112', 3e-6, 2e-5],
    ] as const) {
      const { lab, clock } = newLab(name);
      await startLinkLoad(lab);
      await clock.sleep(IDLE_S * 1000);
      const idle = lab.state('spark-a').laneBer;
      await startGpuLoad(lab);
      await clock.sleep(1800_000);
      const hot = lab.state('spark-a').laneBer;
      for (const ber of [...idle, ...hot]) {
        expect(ber).toBeGreaterThanOrEqual(lo);
        expect(ber).toBeLessThanOrEqual(hi);
      }
      expect(parseEthtoolLink((await lab.runner('spark-a').run(cmd.ethtoolLink('enp1s0f1np1'))).stdout).lanes).toBe(2);
      const s = await stats(lab, 'spark-b');
      expect(s.lanes[2]).toBe(0n);
      expect(s.crcErrors).toBe(0n);
    }
  });
});

describe('faulty cables and setups', () => {
  it('crc-errors: no CRC errors with idle GPUs, CRC and post-FEC errors once the NIC is hot', async () => {
    const { lab, clock } = newLab('crc-errors');
    await startLinkLoad(lab);
    await clock.sleep(IDLE_S * 1000);
    expect((await stats(lab, 'spark-a')).crcErrors).toBe(0n);
    await startGpuLoad(lab);
    await clock.sleep(1200_000);
    const s = await stats(lab, 'spark-a');
    expect(s.crcErrors! > 100n).toBe(true);
    // rx_pcs_symbol_err_phy and rx_symbol_err_phy read as rx_crc_errors_phy, as on the real degraded port.
    const fec = parseEthtoolFec((await lab.runner('spark-a').run(cmd.ethtoolFec('enp1s0f1np1'))).stdout);
    expect(fec.stats!.uncorrectableBlocks! > 50n).toBe(true);
    expect(s.pcsSymbolErrors).toBe(s.crcErrors);
    expect(s.symbolErrors).toBe(s.crcErrors);
    // Each uncorrectable codeword under full load hits one or two frames.
    expect(s.crcErrors! >= fec.stats!.uncorrectableBlocks!).toBe(true);
    expect(s.crcErrors! <= 2n * fec.stats!.uncorrectableBlocks!).toBe(true);
    expect(s.linkDownEvents).toBe(0n);
  });

  it('link-flap: one drop 4 min into the idle soak on both nodes, then the link retrains', async () => {
    const { lab, clock } = newLab('link-flap');
    await startLinkLoad(lab);
    await clock.sleep(IDLE_S * 1000);
    const drops = lab.events.filter((e) => e.kind === 'link-down');
    expect(drops.map((e) => [e.node, Math.round(e.tS)])).toEqual([
      ['spark-a', 240],
      ['spark-b', 240],
    ]);
    expect(lab.events.find((e) => e.kind === 'link-up')?.tS).toBe(244);
    for (const n of lab.nodes) {
      const link = parseEthtoolLink((await lab.runner(n).run(cmd.ethtoolLink('enP2p1s0f1np1'))).stdout);
      expect(link).toMatchObject({ linkDetected: true, linkDownEvents: 1 });
    }
  });

  it('throttled-nic: loopback ~13 Gb/s on spark-b, ~106 on spark-a', async () => {
    const { lab } = newLab('throttled-nic');
    const result: Record<string, number> = {};
    for (const [i, n] of lab.nodes.entries()) {
      const r = lab.runner(n);
      await untilListening(
        await r.start('stdbuf -oL ib_write_bw -d rocep1s0f1 -p 18700 -F --report_gbits -s 65536 -D 10', { runDir: '/tmp/cq', name: 'lbs' }),
        runnerClock(r),
      );
      const out = await r.run(`ib_write_bw -d rocep1s0f1 -p 18700 -F --report_gbits -s 65536 -D 10 ${lab.scenario.nodes[i]!.railIps[0]}`);
      result[n] = parseIbWriteBw(out.stdout).rows[0]!.bwAverageGbps;
    }
    expect(result['spark-a']).toBeCloseTo(106.2, 0);
    expect(result['spark-b']).toBeCloseTo(13.2, 0);
  });

  it('single-rail: NCCL names one device and reaches ~13.9 GB/s', async () => {
    const { lab } = newLab('single-rail');
    const n = parseNccl((await lab.runner('spark-a').run(NCCL_CMD)).stdout);
    expect(n.netDevices).toEqual(['rocep1s0f1']);
    expect(n.avgBusBandwidthGBs).toBeCloseTo(13.9, 0);
  });

  it('gpu-not-loaded: gpu_burn runs but utilisation stays low and the NIC stays cool', async () => {
    const { lab, clock } = newLab('gpu-not-loaded');
    const g = await startGpuLoad(lab, 600);
    await clock.sleep(300_000);
    expect(lab.processes('spark-a').map((p) => p.name)).toEqual(['gpu-burn']);
    const smi = parseNvidiaSmi((await lab.runner('spark-a').run(cmd.nvidiaSmi())).stdout, [
      'index',
      'name',
      'utilization.gpu',
      'temperature.gpu',
      'power.draw',
    ]);
    expect(smi.gpus[0]!['utilization.gpu']).toBeLessThan(10);
    expect(lab.state('spark-a').nicTempC).toBeLessThan(52);
    const r = await g[0]!.done;
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('Tested 1 GPUs:');
  });

  it('eeprom-mismatch: the two ends report different serials', async () => {
    const { lab } = newLab('eeprom-mismatch');
    const sn = await Promise.all(lab.nodes.map(async (n) => parseEthtoolModule((await lab.runner(n).run(cmd.ethtoolModule('enp1s0f1np1'))).stdout).vendorSn));
    expect(sn).toEqual(['MT2412VS01515', 'MT2412VS01599']);
  });
});
