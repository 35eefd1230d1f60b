// The simulated lab of 2-8 nodes: each cable between the cages its scenario names, with its own EEPROM, link, lane
// errors and counters; each node's NIC heated by the traffic of its own cables; the network answers a cabling map reads.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { parseEthtoolStats } from '../../src/probes/ethtool-stats.js';
import { createLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { cmd } from '../../src/transport/commands.js';
import { untilListening } from './drive.js';

const NETDEV = ['enp1s0f0np0', 'enp1s0f1np1'];
const DEVICE = ['rocep1s0f0', 'rocep1s0f1'];

async function counters(lab: ReturnType<typeof createLab>, node: string, cage: number) {
  const c = parseEthtoolStats((await lab.runner(node).run(cmd.ethtoolStats(NETDEV[cage]!))).stdout).counters;
  return { rx: Number(c['rx_bytes_phy']), lanes: [0, 1, 2, 3].map((l) => Number(c[`rx_err_lane_${l}_phy`])) };
}

describe('a lab of N nodes', () => {
  it('triangle: each of the three cables reaches the cages its scenario names, and only those (ping over each rail)', async () => {
    const lab = createLab({ scenario: 'triangle', clock: new VirtualClock() });
    expect(lab.nodes).toEqual(['spark-a', 'spark-b', 'spark-c']);
    const ping = async (node: string, netdev: string, ip: string) => (await lab.runner(node).run(`ping -I ${netdev} -c 2 -W 1 ${ip}`)).exitCode;
    // spark-a:0 -- spark-b:1 (cable 0: 192.168.10.x and 192.168.11.x), spark-b:0 -- spark-c:1, spark-c:0 -- spark-a:1.
    expect(await ping('spark-a', 'enp1s0f0np0', '192.168.10.2')).toBe(0);
    expect(await ping('spark-a', 'enP2p1s0f0np0', '192.168.11.2')).toBe(0);
    expect(await ping('spark-b', 'enp1s0f0np0', '192.168.20.3')).toBe(0);
    expect(await ping('spark-c', 'enp1s0f0np0', '192.168.30.1')).toBe(0);
    // Another cable's address, or the other rail's, does not answer through this interface.
    expect(await ping('spark-a', 'enp1s0f0np0', '192.168.20.3')).toBe(1);
    expect(await ping('spark-a', 'enp1s0f0np0', '192.168.11.2')).toBe(1);
    const out = (await lab.runner('spark-a').run('ping -I enp1s0f0np0 -c 2 -W 1 192.168.20.3')).stdout;
    expect(out).toMatch(/From 192\.168\.10\.1 icmp_seq=1 Destination Host Unreachable/);
    expect(out).toMatch(/2 packets transmitted, 0 received, \+2 errors, 100% packet loss/);
  });

  it('a load over one cable of the triangle counts on its two ends only and heats only their NICs', async () => {
    const clock = new VirtualClock();
    const lab = createLab({ scenario: 'triangle', clock });
    const before = lab.state('spark-c').nicTempC;
    const srv = await lab.runner('spark-b').start(`stdbuf -oL ib_write_bw -d ${DEVICE[1]} -p 18515 -F --report_gbits -s 65536 -b --run_infinitely`, {
      runDir: '/tmp/cq',
      name: 'srv',
    });
    await untilListening(srv, clock);
    const cli = await lab
      .runner('spark-a')
      .start(`stdbuf -oL ib_write_bw -d ${DEVICE[0]} -p 18515 -F --report_gbits -s 65536 -b --run_infinitely 192.168.10.2`, {
        runDir: '/tmp/cq',
        name: 'cli',
      });
    await clock.sleep(300_000);
    const a0 = await counters(lab, 'spark-a', 0);
    const b1 = await counters(lab, 'spark-b', 1);
    const a1 = await counters(lab, 'spark-a', 1);
    const c0 = await counters(lab, 'spark-c', 0);
    // ~92.5 Gb/s each way for 300 s: ~3.5e12 bytes received at both ends of cable 0.
    for (const end of [a0, b1]) expect(end.rx).toBeGreaterThan(3e12);
    // spark-a's other cable (to spark-c) and spark-c carry only the nodes' background frames.
    for (const idle of [a1, c0]) expect(idle.rx).toBeLessThan(1e10);
    expect(lab.state('spark-a').nicTempC).toBeGreaterThan(before + 1);
    expect(lab.state('spark-c').nicTempC).toBeCloseTo(before, 5);
    await cli.stop();
    await srv.stop();
  });

  it('triangle-one-bad: the clone errs at its own receiver (spark-c cage 1) and nowhere else', async () => {
    const clock = new VirtualClock();
    const lab = createLab({ scenario: 'triangle-one-bad', clock });
    await clock.sleep(200_000);
    const bad = await counters(lab, 'spark-c', 1);
    expect(bad.lanes[2]).toBeGreaterThan(1e5); // lane 2 ~2.9e3/s at idle GPUs (failing-clone.json)
    for (const [node, cage] of [
      ['spark-a', 0],
      ['spark-a', 1],
      ['spark-b', 1],
      ['spark-c', 0],
    ] as const)
      expect((await counters(lab, node, cage)).lanes[2]).toBeLessThan(bad.lanes[2]! / 100);
    expect((await lab.runner('spark-c').run('sudo -n ethtool -m enp1s0f1np1')).stdout).toMatch(/Vendor SN\s+: ONT2403150301/);
  });

  it('switch4: lldpd on each Spark names its switch port; ping reaches every Spark on the same rail through the switch', async () => {
    const lab = createLab({ scenario: 'switch4', clock: new VirtualClock() });
    const lldp = JSON.parse((await lab.runner('spark-c').run('lldpctl -f json0')).stdout) as {
      lldp: { interface: { name: string; chassis: { name: { value: string }[] }[]; port: { id: { value: string }[] }[] }[] }[];
    };
    const seen = lldp.lldp[0]!.interface.map((i) => [i.name, i.chassis[0]!.name[0]!.value, i.port[0]!.id[0]!.value]);
    expect(seen).toEqual([
      ['enp1s0f1np1', 'sim-switch', 'swp3'],
      ['enP2p1s0f1np1', 'sim-switch', 'swp3'],
    ]);
    expect((await lab.runner('spark-a').run('ping -I enp1s0f1np1 -c 1 192.168.100.14')).exitCode).toBe(0);
    expect((await lab.runner('spark-a').run('ping -I enp1s0f1np1 -c 1 192.168.101.14')).exitCode).toBe(1);
    // No lldpd on a direct-cabled node.
    const tri = createLab({ scenario: 'triangle', clock: new VirtualClock() });
    expect((await tri.runner('spark-a').run('lldpctl -f json0')).exitCode).toBe(127);
  });

  it('ip -j addr: each netdev with its MTU, state and its cable end address', async () => {
    const lab = createLab({ scenario: 'switch4', clock: new VirtualClock() });
    const all = JSON.parse((await lab.runner('spark-b').run('ip -j addr show')).stdout) as {
      ifname: string;
      mtu: number;
      operstate: string;
      addr_info: { local: string; prefixlen: number }[];
    }[];
    const rows = all.map((i) => [i.ifname, i.mtu, i.operstate, i.addr_info.map((a) => `${a.local}/${a.prefixlen}`).join(',')]);
    expect(rows).toEqual([
      ['lo', 65536, 'UNKNOWN', '127.0.0.1/8'],
      ['enP2p1s0f0np0', 1500, 'DOWN', ''],
      ['enP2p1s0f1np1', 1500, 'UP', '192.168.101.12/24'],
      ['enp1s0f0np0', 1500, 'DOWN', ''],
      ['enp1s0f1np1', 1500, 'UP', '192.168.100.12/24'],
    ]);
  });

  it('a cluster scenario naming an unknown node, a cage twice or an address twice is one line naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-cluster-'));
    const base = {
      name: 'bad-cluster',
      generated: 'simulator scenario, not a recording',
      description: 'test',
      expected: { outcome: 'PASS', why: 'test' },
      extends: 'good-qsfp56',
      nodes: [{ name: 'x' }, { name: 'y' }, { name: 'z' }],
    };
    const end = (node: string, cage: number, ip: number) => ({ node, cage, railIps: [`10.0.0.${ip}`, `10.0.1.${ip}`] });
    const write = (cables: unknown[]) => {
      const f = join(dir, `c${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(f, JSON.stringify({ ...base, cables }));
      return f;
    };
    const load = (cables: unknown[]) => () => createLab({ scenario: write(cables), clock: new VirtualClock() });
    expect(load([{ scenario: 'good-qsfp56', ends: [end('x', 0, 1), end('w', 1, 2)] }])).toThrow(/cables\[0\]: no node "w" \(nodes: x, y, z\)/);
    expect(
      load([
        { scenario: 'good-qsfp56', ends: [end('x', 0, 1), end('y', 1, 2)] },
        { scenario: 'good-qsfp56', ends: [end('y', 1, 3), end('z', 0, 4)] },
      ]),
    ).toThrow(/cables\[1\]: y cage 1 already holds a cable/);
    expect(
      load([
        { scenario: 'good-qsfp56', ends: [end('x', 0, 1), end('y', 1, 2)] },
        { scenario: 'good-qsfp56', ends: [end('y', 0, 2), end('z', 1, 4)] },
      ]),
    ).toThrow(/address 10\.0\.0\.2 is given twice/);
    expect(load([{ scenario: 'good-qsfp56', ends: [end('x', 0, 1), end('y', 1, 2)] }])).toThrow(/nodes\[z\]: no cable reaches it/);
    expect(load([{ scenario: 'good-qsfp56', ends: [end('x', 0, 1), end('y', 1, 2)] }])).toThrow(UsageError);
  });
});
