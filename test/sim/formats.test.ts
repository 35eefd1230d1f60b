// Every simulated output goes through the real parsers, and its layout is compared with real recorded samples.
import { describe, expect, it } from 'vitest';
import { parseEthtoolStats } from '../../src/probes/ethtool-stats.js';
import { parseEthtoolLink } from '../../src/probes/ethtool-link.js';
import { parseEthtoolFec } from '../../src/probes/ethtool-fec.js';
import { parseEthtoolModule } from '../../src/probes/ethtool-module.js';
import { parseEepromHex } from '../../src/probes/eeprom-hex.js';
import { parseIbdev2netdev } from '../../src/probes/ibdev2netdev.js';
import { parseIbWriteBw } from '../../src/probes/ib-write-bw.js';
import { parseNccl } from '../../src/probes/nccl.js';
import { parseHwmon } from '../../src/probes/nic-temp.js';
import { parseNvidiaSmi } from '../../src/probes/nvidia-smi.js';
import { parseRdmaLink } from '../../src/probes/rdma-link.js';
import { parseIpAddr } from '../../src/run/ip-addr.js';
import { cmd, ipAddrCommand } from '../../src/transport/commands.js';
import { sample } from '../helpers/samples.js';
import { realLines, separators, template } from '../helpers/line-shape.js';
import { NCCL_CMD, newLab, startGpuLoad, startLinkLoad, untilListening } from './drive.js';

// Lines of a real paste without the shell prompt/command line and blank lines around the output.
const pasted = (rel: string) =>
  sample(rel)
    .split('\n')
    .filter((l) => l.trim() !== '' && !/^\S+@\S+:.*\$/.test(l));

describe('simulated outputs, read by the real parsers', () => {
  it('ethtool -S: a ~1,500-line mlx5 dump whose *_phy counters are the same on both netdevs of the cage', async () => {
    const { lab, clock } = newLab('good-qsfp112');
    const load = await startLinkLoad(lab);
    await clock.sleep(60_000);
    const r = lab.runner('spark-a');
    const a = await r.run(cmd.ethtoolStats('enp1s0f1np1'));
    const b = await r.run(cmd.ethtoolStats('enP2p1s0f1np1'));
    const sa = parseEthtoolStats(a.stdout);
    const sb = parseEthtoolStats(b.stdout);
    expect(a.stdout.split('\n').length).toBeGreaterThan(1000);
    expect(a.stdout.startsWith('NIC statistics:\n     rx_packets: ')).toBe(true);
    expect(sa.lanes).toHaveLength(4);
    expect(sa.lanes[2]).toBe(0n); // QSFP112 trains 2 lanes; mlx5 still prints four
    expect(sa.lanes[0]! > 0n).toBe(true);
    expect(sa.correctedBits).toBe(sa.lanes.reduce((x, y) => x + y, 0n));
    for (const k of Object.keys(sa.counters).filter((k) => k.endsWith('_phy'))) expect(sb.counters[k]).toBe(sa.counters[k]);
    // each rail carries its own RDMA traffic: 60 s x 92.55 Gb/s x 2 directions at most
    expect(Number(sa.counters['rx_vport_rdma_unicast_bytes'])).toBeGreaterThan((0.9 * 59 * 92.55e9) / 8);
    for (const p of load) await p.stop();
  });

  it('ethtool -S phy section keeps the mlx5 counter order of a real dump', async () => {
    const { lab } = newLab('good-qsfp56');
    const sim = (await lab.runner('spark-a').run(cmd.ethtoolStats('enp1s0f1np1'))).stdout.split('\n').map((l) => l.split(':')[0]!.trim());
    const real = sample('ethtool-stats/mlx5-100g-annotated-phy-section-lane3-errors.txt')
      .split('\n')
      .map((l) => l.split(':')[0]!.trim())
      .filter((n) => n.endsWith('_phy'));
    const simPhy = sim.filter((n) => real.includes(n));
    expect(simPhy).toEqual(real);
  });

  it('ethtool <if>: 200G, lanes of the family, carrier, link-down count; uncabled cage reads down', async () => {
    const { lab } = newLab('good-qsfp56');
    const r = lab.runner('spark-b');
    const up = parseEthtoolLink((await r.run(cmd.ethtoolLink('enP2p1s0f1np1'))).stdout);
    expect(up).toMatchObject({
      iface: 'enP2p1s0f1np1',
      speedMbps: 200000,
      lanes: 4,
      duplex: 'Full',
      port: 'Direct Attach Copper',
      linkDetected: true,
      linkDownEvents: 0,
    });
    const down = parseEthtoolLink((await r.run(cmd.ethtoolLink('enp1s0f0np0'))).stdout);
    expect(down.linkDetected).toBe(false);
    expect(down.speedMbps).toBeNull();
    const merged = await r.run(cmd.ethtoolLink('enp1s0f1np1'));
    expect(parseEthtoolLink(merged.stdout + merged.stderr)).toMatchObject({ linkDetected: true, notices: ['netlink error: Operation not permitted'] });
    const speed = (await r.run(cmd.ethtoolLink('enp1s0f1np1'))).stdout.split('\n').find((l) => l.includes('Speed'));
    expect(speed).toBe(pasted('ethtool-link/dgx-spark-playbooks-switch-speed-200g-both-functions.txt')[0]);
  });

  it('ethtool -I --show-fec: RS with totals only (mlx5), corrected_bits equal to rx_corrected_bits_phy', async () => {
    const { lab, clock } = newLab('good-qsfp112');
    await clock.sleep(30_000);
    const r = lab.runner('spark-a');
    const fec = parseEthtoolFec((await r.run(cmd.ethtoolFec('enp1s0f1np1'))).stdout);
    const stats = parseEthtoolFec((await r.run(cmd.ethtoolFec('enp1s0f1np1'))).stdout);
    const s = parseEthtoolStats((await r.run(cmd.ethtoolStats('enp1s0f1np1'))).stdout);
    expect(fec.active).toBe('RS');
    expect(fec.configured).toEqual(['Auto']); // as a Spark prints it (samples/ethtool-fec/spark-fb97-*)
    expect(parseEthtoolFec((await r.run('ethtool --show-fec enp1s0f1np1')).stdout)).toMatchObject({ active: 'RS', stats: null }); // statistics only with -I
    expect(stats.stats?.correctedBits).toBe(s.correctedBits);
    expect(stats.stats?.uncorrectableBlocks).toBe(0n);
    expect(parseEthtoolFec((await r.run(cmd.ethtoolFec('enp1s0f0np0'))).stdout)).toMatchObject({ active: 'None', stats: null });
  });

  it('ethtool -m: decoded text and both hex pages describe the same cable (SFF-8636 and CMIS)', async () => {
    for (const [scenario, pn, sn] of [
      ['failing-clone', 'ONT-DAC-QS56-0.5', 'ONT2403150117'],
      ['good-qsfp112', 'LMTQF022-SD-R', 'LX24301188'], // QSFP112 read as SFF-8636, as the recorded Spark DAC
      ['marginal-qsfp112', 'LMTQF022-SD-R', 'LX24301577'], // QSFP112 as CMIS
    ] as const) {
      const { lab } = newLab(scenario);
      const r = lab.runner('spark-a');
      const text = parseEthtoolModule((await r.run(cmd.ethtoolModule('enp1s0f1np1'))).stdout);
      expect(text).toMatchObject({ vendorPn: pn, vendorSn: sn });
      const lower = (await r.run(cmd.eepromLower('enp1s0f1np1'))).stdout;
      const upper = (await r.run(cmd.eepromUpper('enp1s0f1np1'))).stdout;
      expect(upper.split('\n')[2]!.startsWith('0x0080:\t\t')).toBe(true);
      const hex = parseEepromHex(lower + upper.split('\n').slice(2).join('\n'));
      expect(hex.vendorPn).toBe(pn);
      expect(hex.vendorSn).toBe(sn);
      expect(Object.values(hex.checksums).every((c) => c.ok)).toBe(true);
    }
  });

  it('failing-clone EEPROM claims 0 dB attenuation at 7 and 12.9 GHz', async () => {
    const { lab } = newLab('failing-clone');
    const t = parseEthtoolModule((await lab.runner('spark-b').run(cmd.ethtoolModule('enP2p1s0f1np1'))).stdout);
    expect(t.attenuationDb).toEqual({ '2.5GHz': 3, '5.0GHz': 4 });
    expect(t.anomalies.some((a) => a.startsWith('attenuation-placeholder: 0 dB at 7.0GHz, 12.9GHz'))).toBe(true);
  });

  it('ibdev2netdev: C collation and line shape of the playbook sample, cage 1 Up', async () => {
    const { lab } = newLab('good-qsfp56');
    const out = (await lab.runner('spark-a').run(cmd.ibdev2netdev())).stdout;
    expect(out.trimEnd().split('\n')).toEqual(pasted('ibdev2netdev/dgx-spark-playbooks-connect-two-sparks-port1.txt'));
    const links = parseIbdev2netdev(out).links;
    expect(links.filter((l) => l.state === 'Up').map((l) => l.netdev)).toEqual(['enP2p1s0f1np1', 'enp1s0f1np1']);
  });

  it('ip addr, nvidia-smi, hwmon, rdma link and date parse to the model values', async () => {
    const { lab, clock } = newLab('good-qsfp56');
    const r = lab.runner('spark-b');
    expect(parseIpAddr((await r.run(ipAddrCommand('enP2p1s0f1np1'))).stdout)).toBe('192.168.101.11');
    expect(parseIpAddr((await r.run(ipAddrCommand('enp1s0f0np0'))).stdout)).toBeNull();
    const g = await startGpuLoad(lab, 600);
    await clock.sleep(300_000);
    const smi = parseNvidiaSmi((await r.run(cmd.nvidiaSmi())).stdout, ['index', 'name', 'utilization.gpu', 'temperature.gpu', 'power.draw']);
    expect(smi.gpus[0]!['name']).toBe('NVIDIA GB10');
    expect(smi.gpus[0]!['utilization.gpu']).toBeGreaterThanOrEqual(94);
    expect(smi.gpus[0]!['temperature.gpu']).toBe(78);
    const hw = parseHwmon((await r.run(cmd.hwmon())).stdout);
    expect(hw.devices.filter((d) => d.name === 'mlx5')).toHaveLength(4);
    expect(hw.nicMaxC).toBeCloseTo(lab.state('spark-b').nicTempC, 0);
    expect(parseRdmaLink((await r.run('rdma link show')).stdout).links.filter((l) => l.state === 'ACTIVE')).toHaveLength(2);
    expect((await r.run(cmd.nodeTime())).stdout).toBe(`${clock.now() / 1000}.000000\n`); // as bash's $EPOCHREALTIME
    expect((await r.run('date +%s%N')).stdout).toBe(`${BigInt(clock.now()) * 1_000_000n}\n`);
    for (const p of g) await p.stop();
  });

  it('ib_write_bw client: header lines and row columns of the Spark playbook client, ~92.5 Gb/s per rail and direction', async () => {
    const { lab, clock } = newLab('good-qsfp56');
    const procs = await startLinkLoad(lab);
    await clock.sleep(30_000);
    const out = (await procs[1]!.output()).stdout;
    const real = pasted('ib_write_bw/dgx-spark-playbooks-client1-rocep1s0f0-run-infinitely.txt');
    const sim = out.trimEnd().split('\n');
    const realHeader = real.slice(1, 16).filter((l) => !l.includes('BW Test') && !l.includes('Device '));
    for (const l of realHeader) expect(sim.map((x) => template(x))).toContain(template(l));
    expect(sim).toContain('                    RDMA_Write Bidirectional BW Test');
    // The TABs perftest prints, as the samples that keep them show: two before MsgRate, two between header pairs.
    const tabRow = realLines('ib_write_bw/spark-hotplug-degraded-single-rail-1MiB-5000-iters.txt').find((l) => /^ \d+ /.test(l))!;
    expect(separators(sim.find((l) => /^ 65536 /.test(l))!)).toEqual(separators(tabRow));
    const tabPair = realLines('ib_write_bw/ngc-multinode-perf-issue108-bidir-D30-q2-cmdlines-and-header-partial.txt').find((l) => l.startsWith(' Dual-port'))!;
    expect(separators(sim.find((l) => l.startsWith(' Dual-port'))!)).toEqual(separators(tabPair));
    const parsed = parseIbWriteBw(out);
    expect(parsed).toMatchObject({ bidirectional: true, device: 'rocep1s0f1', unit: 'Gb/s', peakMeasured: false });
    expect(parsed.rows).toHaveLength(6); // one row per 5 s
    expect(parsed.rows[0]!.bwAverageGbps).toBeCloseTo(185.1, 0);
    for (const p of procs) await p.stop();
  });

  it('ib_write_bw loopback -D 10 on one node: one final row at ~106 Gb/s, 10 s of virtual time', async () => {
    const { lab, clock } = newLab('good-qsfp56');
    const r = lab.runner('spark-a');
    const srv = await untilListening(
      await r.start('stdbuf -oL ib_write_bw -d rocep1s0f1 -p 18600 -F --report_gbits -s 65536 -D 10', { runDir: '/tmp/cq', name: 'lb' }),
      clock,
    );
    const res = await r.run('ib_write_bw -d rocep1s0f1 -p 18600 -F --report_gbits -s 65536 -D 10 192.168.100.10');
    expect(res.exitCode).toBe(0);
    expect(res.durationMs).toBeGreaterThanOrEqual(10_000);
    const rows = parseIbWriteBw(res.stdout).rows;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.bwAverageGbps).toBeCloseTo(106.2, 0);
    expect(rows[0]!.bwPeakGbps).toBeNull();
    expect((await srv.done).exitCode).toBe(0);
  });

  it('mpirun all_reduce_perf: NCCL_DEBUG shows both devices, IB network, ~21 GB/s average', async () => {
    const { lab } = newLab('good-qsfp56');
    const res = await lab.runner('spark-a').run(NCCL_CMD);
    expect(res.exitCode).toBe(0);
    const n = parseNccl(res.stdout);
    expect(n.network).toBe('IB');
    expect(n.netDevices).toEqual(['rocep1s0f1', 'roceP2p1s0f1']);
    expect(n.rows.map((r) => r.size)).toEqual([268435456, 536870912, 1073741824]);
    expect(n.avgBusBandwidthGBs).toBeGreaterThan(20.3);
    expect(n.avgBusBandwidthGBs).toBeLessThan(22);
    const real = pasted('nccl/spark-fb97-all-gather-perf-1G-4G-rdma-ok.txt');
    for (const l of real.filter((x) => x.startsWith('#   ') || x.startsWith('#       size'))) expect(res.stdout.split('\n')).toContain(l);
    const realRow = real.find((l) => l.startsWith('  1073741824'))!;
    const simRow = res.stdout.split('\n').find((l) => l.startsWith('  1073741824'))!;
    expect(simRow.length).toBe(realRow.length);
  });
});
