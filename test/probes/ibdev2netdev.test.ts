import { describe, expect, it } from 'vitest';
import { cagesFromLinks, parseIbdev2netdev, pickCage } from '../../src/probes/ibdev2netdev.js';
import { parseNetIdentity } from '../../src/probes/net-identity.js';
import { sample, samplesIn } from '../helpers/samples.js';
import { fuzzParser } from '../helpers/fuzz.js';
import { parseErrorOf } from '../helpers/parse-error.js';

const parseError = parseErrorOf;

// Every Spark paste starts with the shell prompt and the command.
const output = (file: string): string => sample(`ibdev2netdev/${file}`).split('\n').slice(1).join('\n');
const port1 = () => output('dgx-spark-playbooks-connect-two-sparks-port1.txt');
const switchPort1 = () => output('dgx-spark-playbooks-multi-sparks-switch-port1.txt');
const spark1 = () => output('dgx-spark-playbooks-perfguide-spark1.txt');
const spark2 = () => output('dgx-spark-playbooks-perfguide-spark2.txt');

// Two `ibdev2netdev -v` lines as quoted in public ConnectX-4 setup notes (not from samples/; no Spark -v
// paste was available): padded port state "(DOWN  )", part id "NA" and an empty description.
const VERBOSE =
  '0000:02:00.0 mlx5_0 (MT4115 - MT1523X04353) CX456A - ConnectX-4 QSFP fw 12.23.1020 port 1 (ACTIVE) ==> enp2s0f0 (Up)\n' +
  '0000:02:00.5 mlx5_2 (MT4116 - NA)  fw 12.23.1020 port 1 (DOWN  ) ==> ib2 (Down)\n';

describe('parseIbdev2netdev on real Spark samples', () => {
  it('reads C-collation order (roceP2p1s0f0 first) with the cable in port 1', () => {
    const r = parseIbdev2netdev(port1());
    expect(r.links).toEqual([
      { rdmaDevice: 'roceP2p1s0f0', port: 1, netdev: 'enP2p1s0f0np0', state: 'Down' },
      { rdmaDevice: 'roceP2p1s0f1', port: 1, netdev: 'enP2p1s0f1np1', state: 'Up' },
      { rdmaDevice: 'rocep1s0f0', port: 1, netdev: 'enp1s0f0np0', state: 'Down' },
      { rdmaDevice: 'rocep1s0f1', port: 1, netdev: 'enp1s0f1np1', state: 'Up' },
    ]);
  });

  it('reads the other order (rocep1s0f0 first) with the cable in port 0', () => {
    const r = parseIbdev2netdev(spark1());
    expect(r.links.map((l) => `${l.rdmaDevice}=${l.state}`)).toEqual(['rocep1s0f0=Up', 'rocep1s0f1=Down', 'roceP2p1s0f0=Up', 'roceP2p1s0f1=Down']);
  });

  it('reads the -v form with PCI address, part id and firmware', () => {
    const r = parseIbdev2netdev(VERBOSE);
    expect(r.links[0]).toEqual({
      rdmaDevice: 'mlx5_0',
      port: 1,
      netdev: 'enp2s0f0',
      state: 'Up',
      pci: '0000:02:00.0',
      mtId: '4115',
      partId: 'MT1523X04353',
      description: 'CX456A - ConnectX-4 QSFP',
      fw: '12.23.1020',
      portState: 'ACTIVE',
    });
    expect(r.links[1]).toMatchObject({ rdmaDevice: 'mlx5_2', partId: 'NA', description: '', portState: 'DOWN', state: 'Down' });
  });

  it('returns no links for empty output (devices removed while no cable is in) and rejects other text', () => {
    expect(parseIbdev2netdev('').links).toEqual([]);
    const e = parseError(() => parseIbdev2netdev(port1().replace('(Up)', '(up)')));
    expect(e.line).toBe(2);
    expect(parseError(() => parseIbdev2netdev('nvidia@dxg-spark-1:~$ ibdev2netdev\n' + port1())).line).toBe(1);
  });
});

// What a Spark's sysfs says about its four CX-7 functions (docs/formats.md §0: cage N is PCI function N, rail 0 domain 0000,
// rail 1 domain 0002; one NIC, one sys_image_guid), written out for given names: constructed for these tests in the
// layout of `cmd.netIdentity()`'s output, not recorded on a node.
function sparkSysfs(fns: { netdev: string; rdma: string; cage: number; rail: number }[], guid = 'b8ce:f603:00e5:f118'): string {
  return fns
    .flatMap((f) => {
      const pci = `${f.rail === 0 ? '0000' : '0002'}:01:00.${f.cage}`;
      return [
        `/sys/class/net/${f.netdev}/phys_port_name:p${f.cage}`,
        `/sys/class/net/${f.netdev}/device/uevent:DRIVER=mlx5_core`,
        `/sys/class/net/${f.netdev}/device/uevent:PCI_SLOT_NAME=${pci}`,
        `/sys/class/infiniband/${f.rdma}/sys_image_guid:${guid}`,
      ];
    })
    .join('\n');
}
const SPARK_NAMES = [
  { netdev: 'enp1s0f0np0', rdma: 'rocep1s0f0', cage: 0, rail: 0 },
  { netdev: 'enP2p1s0f0np0', rdma: 'roceP2p1s0f0', cage: 0, rail: 1 },
  { netdev: 'enp1s0f1np1', rdma: 'rocep1s0f1', cage: 1, rail: 0 },
  { netdev: 'enP2p1s0f1np1', rdma: 'roceP2p1s0f1', cage: 1, rail: 1 },
];
const SPARK = parseNetIdentity(sparkSysfs(SPARK_NAMES));

describe('cagesFromLinks (the real ibdev2netdev samples, placed by what sysfs says)', () => {
  it('finds cage 1 Up on both rails, domain 0000 first, whatever the printed order', () => {
    for (const text of [port1(), switchPort1()]) {
      const cages = cagesFromLinks(parseIbdev2netdev(text).links, SPARK);
      expect(cages).toEqual([
        {
          index: 0,
          rails: [
            { netdev: 'enp1s0f0np0', rdmaDevice: 'rocep1s0f0', state: 'Down', pci: '0000:01:00.0' },
            { netdev: 'enP2p1s0f0np0', rdmaDevice: 'roceP2p1s0f0', state: 'Down', pci: '0002:01:00.0' },
          ],
          up: false,
        },
        {
          index: 1,
          rails: [
            { netdev: 'enp1s0f1np1', rdmaDevice: 'rocep1s0f1', state: 'Up', pci: '0000:01:00.1' },
            { netdev: 'enP2p1s0f1np1', rdmaDevice: 'roceP2p1s0f1', state: 'Up', pci: '0002:01:00.1' },
          ],
          up: true,
        },
      ]);
    }
  });

  it('finds cage 0 Up on both perf-guide Sparks', () => {
    for (const text of [spark1(), spark2()]) {
      const up = cagesFromLinks(parseIbdev2netdev(text).links, SPARK).filter((c) => c.up);
      expect(up.map((c) => [c.index, c.rails[0].rdmaDevice, c.rails[1].rdmaDevice])).toEqual([[0, 'rocep1s0f0', 'roceP2p1s0f0']]);
    }
  });

  it('marks a cage with one rail Down as not up', () => {
    const links = parseIbdev2netdev(spark1()).links.map((l) => (l.rdmaDevice === 'roceP2p1s0f0' ? { ...l, state: 'Down' as const } : l));
    expect(cagesFromLinks(links, SPARK).map((c) => c.up)).toEqual([false, false]);
  });

  it('never goes by the names: renamed netdevs and mlx5_N devices are placed by port and PCI function, and a name that says f1 on port 0 is port 0', () => {
    const renamed = [
      { netdev: 'cx7a', rdma: 'mlx5_0', cage: 0, rail: 0 },
      { netdev: 'cx7b', rdma: 'mlx5_2', cage: 0, rail: 1 },
      { netdev: 'enp1s0f1np1', rdma: 'mlx5_1', cage: 0, rail: 0 },
      { netdev: 'enP2p1s0f1np1', rdma: 'mlx5_3', cage: 0, rail: 1 },
    ];
    // Two ports on the sysfs side: the first two functions are port 1 here, the last two port 0.
    const sys = sparkSysfs([{ ...renamed[0]!, cage: 1 }, { ...renamed[1]!, cage: 1 }, renamed[2]!, renamed[3]!]);
    const text = 'mlx5_0 port 1 ==> cx7a (Up)\nmlx5_1 port 1 ==> enp1s0f1np1 (Down)\nmlx5_2 port 1 ==> cx7b (Up)\nmlx5_3 port 1 ==> enP2p1s0f1np1 (Down)\n';
    const cages = cagesFromLinks(parseIbdev2netdev(text).links, parseNetIdentity(sys));
    expect(cages.map((c) => [c.index, c.rails.map((r) => r.netdev), c.up])).toEqual([
      [0, ['enp1s0f1np1', 'enP2p1s0f1np1'], false],
      [1, ['cx7a', 'cx7b'], true],
    ]);
  });

  it('without phys_port_name the PCI function places a function (ibdev2netdev -v gives the PCI address too)', () => {
    const sys = sparkSysfs(SPARK_NAMES)
      .split('\n')
      .filter((l) => !l.includes('phys_port_name'))
      .join('\n');
    expect(cagesFromLinks(parseIbdev2netdev(port1()).links, parseNetIdentity(sys)).find((c) => c.up)?.index).toBe(1);
    const v =
      '0000:01:00.1 mlx5_0 (MT4129 - NA)  fw 28.45.4028 port 1 (ACTIVE) ==> cx7a (Up)\n0002:01:00.1 mlx5_1 (MT4129 - NA)  fw 28.45.4028 port 1 (ACTIVE) ==> cx7b (Up)\n';
    expect(cagesFromLinks(parseIbdev2netdev(v).links, parseNetIdentity('')).map((c) => [c.index, c.up])).toEqual([[1, true]]);
  });

  it('rejects a cage with a missing rail, leaves out what the node says nothing about and a lone function of another NIC', () => {
    const three = parseIbdev2netdev(port1()).links.filter((l) => l.rdmaDevice !== 'rocep1s0f1');
    expect(parseError(() => cagesFromLinks(three, SPARK)).reason).toMatch(/^cage 1 has 1 rail\(s\) \(enP2p1s0f1np1\)/);
    expect(cagesFromLinks(parseIbdev2netdev(port1()).links, parseNetIdentity(''))).toEqual([]);
    // A ConnectX-4 port beside the Spark's NIC: its own GUID, one function: not a Spark cage.
    const extra = parseIbdev2netdev(`${port1()}\n${VERBOSE.split('\n')[0]}\n`).links;
    const sys = parseNetIdentity(`${sparkSysfs(SPARK_NAMES)}\n/sys/class/infiniband/mlx5_0/sys_image_guid:7cfe:9003:0012:3456\n`);
    expect(cagesFromLinks(extra, sys).map((c) => c.index)).toEqual([0, 1]);
  });

  it('pickCage: the named cage, or with auto the only cage Up; two cables in must be named', () => {
    const cages = cagesFromLinks(parseIbdev2netdev(port1()).links, SPARK);
    expect(pickCage(cages, 'auto')).toEqual({ cage: cages[1] });
    expect(pickCage(cages, 0)).toEqual({ cage: cages[0] });
    expect(pickCage(cages, 2)).toEqual({
      problem: 'cage 2 not found (cage 0: enp1s0f0np0 Down, enP2p1s0f0np0 Down; cage 1: enp1s0f1np1 Up, enP2p1s0f1np1 Up)',
    });
    const both = cages.map((c) => ({ ...c, up: true }));
    expect(pickCage(both, 'auto')).toMatchObject({ problem: expect.stringMatching(/^cages 0 and 1 all have both rails Up: name the cage/) });
    expect(pickCage([], 'auto')).toEqual({ problem: 'no cage has both rails Up (no cage found)' });
  });
});

describe('parseNetIdentity', () => {
  it('reads port names, PCI functions and NIC GUIDs; values of the wrong shape are left out; other lines are refused', () => {
    const id = parseNetIdentity(
      `${sparkSysfs(SPARK_NAMES.slice(2, 3))}\n/sys/class/net/lo/phys_port_name:$(reboot)\n/sys/class/net/eth9/device/uevent:PCI_SLOT_NAME=../../etc\n`,
    );
    expect(id.netdevs.get('enp1s0f1np1')).toEqual({ pci: '0000:01:00.1', driver: 'mlx5_core', physPortName: 'p1' });
    expect(id.netdevs.get('lo')).toEqual({ pci: null, driver: null, physPortName: null });
    expect(id.netdevs.get('eth9')?.pci).toBeNull();
    expect(id.sysImageGuid.get('rocep1s0f1')).toBe('b8ce:f603:00e5:f118');
    expect(parseError(() => parseNetIdentity('/etc/passwd:root:x:0:0\n')).line).toBe(1);
  });

  it('only ever throws ParseError on random and mutated input', () => {
    fuzzParser(parseNetIdentity, [sparkSysfs(SPARK_NAMES)]);
    fuzzParser((t) => cagesFromLinks(parseIbdev2netdev(port1()).links, parseNetIdentity(t)), [sparkSysfs(SPARK_NAMES)]);
  });
});

describe('parseIbdev2netdev robustness', () => {
  it('only ever throws ParseError on random and mutated input', () => {
    fuzzParser(parseIbdev2netdev, [port1(), spark1(), VERBOSE, ...samplesIn('ibdev2netdev').map((f) => sample(f))]);
    fuzzParser((t) => cagesFromLinks(parseIbdev2netdev(t).links, SPARK), [port1(), switchPort1(), spark2()]);
  });
});
