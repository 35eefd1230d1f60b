import { describe, expect, it } from 'vitest';
import { cagesFromLinks, parseIbdev2netdev } from '../../src/probes/ibdev2netdev.js';
import { ParseError } from '../../src/domain/errors.js';
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

// Two `ibdev2netdev -v` lines as quoted in public ConnectX-4 setup notes (not from samples-real/; no Spark -v
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
    expect(r.links.map((l) => `${l.rdmaDevice}=${l.state}`)).toEqual([
      'rocep1s0f0=Up',
      'rocep1s0f1=Down',
      'roceP2p1s0f0=Up',
      'roceP2p1s0f1=Down',
    ]);
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

describe('cagesFromLinks', () => {
  it('finds cage 1 Up on both rails, domain 0000 first, whatever the printed order', () => {
    for (const text of [port1(), switchPort1()]) {
      const cages = cagesFromLinks(parseIbdev2netdev(text).links);
      expect(cages).toEqual([
        {
          index: 0,
          rails: [
            { netdev: 'enp1s0f0np0', rdmaDevice: 'rocep1s0f0', state: 'Down' },
            { netdev: 'enP2p1s0f0np0', rdmaDevice: 'roceP2p1s0f0', state: 'Down' },
          ],
          up: false,
        },
        {
          index: 1,
          rails: [
            { netdev: 'enp1s0f1np1', rdmaDevice: 'rocep1s0f1', state: 'Up' },
            { netdev: 'enP2p1s0f1np1', rdmaDevice: 'roceP2p1s0f1', state: 'Up' },
          ],
          up: true,
        },
      ]);
    }
  });

  it('finds cage 0 Up on both perf-guide Sparks', () => {
    for (const text of [spark1(), spark2()]) {
      const up = cagesFromLinks(parseIbdev2netdev(text).links).filter((c) => c.up);
      expect(up.map((c) => [c.index, c.rails[0].rdmaDevice, c.rails[1].rdmaDevice])).toEqual([[0, 'rocep1s0f0', 'roceP2p1s0f0']]);
    }
  });

  it('marks a cage with one rail Down as not up', () => {
    const links = parseIbdev2netdev(spark1()).links.map((l) => (l.rdmaDevice === 'roceP2p1s0f0' ? { ...l, state: 'Down' as const } : l));
    expect(cagesFromLinks(links).map((c) => c.up)).toEqual([false, false]);
  });

  it('rejects a cage with a missing rail and leaves non-Spark netdevs out', () => {
    const three = parseIbdev2netdev(port1()).links.filter((l) => l.rdmaDevice !== 'rocep1s0f1');
    expect(parseError(() => cagesFromLinks(three)).reason).toMatch(/^cage 1 has 1 rail\(s\) \(enP2p1s0f1np1\)/);
    expect(cagesFromLinks(parseIbdev2netdev(VERBOSE).links)).toEqual([]);
  });
});

describe('parseIbdev2netdev robustness', () => {
  it('only ever throws ParseError on random and mutated input', () => {
    fuzzParser(parseIbdev2netdev, [port1(), spark1(), VERBOSE, ...samplesIn('ibdev2netdev').map((f) => sample(f))]);
    fuzzParser((t) => cagesFromLinks(parseIbdev2netdev(t).links), [port1(), switchPort1(), spark2()]);
  });
});
