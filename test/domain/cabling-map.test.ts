// The cabling map and its rules over generated clusters (pure): every wiring of a triangle, rings of 4 to 8, pairs,
// switches, and the address, MTU and NCCL rules; each miswire named with a fix that, applied, leaves no problem.
import { describe, expect, it } from 'vitest';
import { buildCablingMap } from '../../src/domain/cabling-rules.js';
import { plannedPings } from '../../src/domain/cabling-map.js';
import type { NodeView, PingView, PortView } from '../../src/domain/cabling-view.js';

type Wire = [[string, number], [string, number] | ['switch', string]];
interface Opts {
  mtu?: Record<string, number>; // per node:cage
  speed?: number;
  nccl?: Record<string, string[]>;
  serialAt?: Record<string, string>; // per node:cage, a serial other than the cable's
  sameSubnet?: boolean; // every cable's rails in one subnet per rail (a switch cluster's plan)
}

const DEV = (cage: number, rail: number) => (rail === 0 ? `rocep1s0f${cage}` : `roceP2p1s0f${cage}`);
const NET = (cage: number, rail: number) => (rail === 0 ? `enp1s0f${cage}np${cage}` : `enP2p1s0f${cage}np${cage}`);

// What each node would show for these cables: cable k's serial SN<k>, its rails in 10.<k>.<rail>.0/24 (or one subnet
// per rail across the cluster), host part the node's index + 1.
function viewsOf(nodes: string[], wires: Wire[], o: Opts = {}): NodeView[] {
  return nodes.map((node, ni) => {
    const ports: PortView[] = [0, 1].map((cage) => {
      const k = wires.findIndex((w) => w.some((e) => e[0] === node && e[1] === cage));
      const w = wires[k];
      const here = `${node}:${cage}`;
      const sw = w && w[1][0] === 'switch' ? (w[1][1] as string) : null;
      return {
        cage,
        rails: [0, 1].map((rail) => ({
          netdev: NET(cage, rail),
          rdmaDevice: DEV(cage, rail),
          up: Boolean(w),
          addresses: w ? [`10.${o.sameSubnet ? 0 : k}.${rail}.${ni + 1}/24`] : [],
          mtu: o.mtu?.[here] ?? 1500,
        })),
        module: w ? { serial: o.serialAt?.[here] ?? `SN${k}`, partNumber: 'MCP1650-V00AE30', vendor: 'Mellanox' } : null,
        linkUp: Boolean(w),
        speedMbps: w ? (o.speed ?? 200000) : null,
        lanes: w ? 4 : null,
        fec: w ? 'RS' : null,
        lldp: sw ? { system: 'sw1', chassisId: '0c:42:a1:00:00:01', port: sw } : null,
      };
    });
    return { node, ports, nccl: o.nccl?.[node] ? { source: '/etc/nccl.conf', devices: o.nccl[node]! } : { source: 'default', devices: null } };
  });
}

// The planned pings, each answered when its target is the far end of the same cable, same rail (or on the switch).
function pingsOf(views: NodeView[], wires: Wire[], o: Opts = {}): PingView[] {
  const owner = new Map<string, string>();
  for (const v of views) for (const p of v.ports) for (const r of p.rails) for (const a of r.addresses) owner.set(a.split('/')[0]!, `${v.node}:${p.cage}`);
  const portOf = (v: NodeView, netdev: string) => v.ports.find((p) => p.rails.some((r) => r.netdev === netdev))!;
  return plannedPings(views).map((p) => {
    const from = `${p.node}:${
      portOf(
        views.find((v) => v.node === p.node)!,
        p.netdev,
      ).cage
    }`;
    const to = owner.get(p.target)!;
    const wire = wires.find((w) => w.some((e) => `${e[0]}:${e[1]}` === from));
    const replied = o.sameSubnet ? true : Boolean(wire && wire.some((e) => `${e[0]}:${e[1]}` === to));
    return { ...p, replied };
  });
}

const mapOf = (nodes: string[], wires: Wire[], o: Opts = {}) => {
  const views = viewsOf(nodes, wires, o);
  return buildCablingMap(views, pingsOf(views, wires, o));
};
const kinds = (m: ReturnType<typeof mapOf>) => m.problems.map((p) => p.kind);

// A ring's wiring from which neighbour each node reaches on cage 0 (true: the next one).
function ringWires(nodes: string[], forward: boolean[]): Wire[] {
  const k = nodes.length;
  return nodes.map((n, i) => {
    const m = nodes[(i + 1) % k]!;
    return [
      [n, forward[i] ? 0 : 1],
      [m, forward[(i + 1) % k] ? 1 : 0],
    ];
  });
}

// The wiring after swapping the two cables at each named node.
function swapped(wires: Wire[], nodes: string[]): Wire[] {
  return wires.map((w) => w.map((e) => (nodes.includes(e[0]) && e[0] !== 'switch' ? [e[0], 1 - (e[1] as number)] : e)) as Wire);
}

const swapsIn = (fix: string) => [...fix.matchAll(/swap the two cables at (\S+)/g)].map((m) => m[1]!);

describe('cabling map: topologies and miswires', () => {
  it('every one of the 8 wirings of a triangle: right ones map clean, each miswire is named with a fix that works', () => {
    const nodes = ['a', 'b', 'c'];
    let right = 0;
    for (let bits = 0; bits < 8; bits++) {
      const forward = [0, 1, 2].map((i) => Boolean(bits & (1 << i)));
      const wires = ringWires(nodes, forward);
      const m = mapOf(nodes, wires);
      expect(m.topology).toBe('triangle');
      expect(m.links.map((l) => l.serial).sort()).toEqual(['SN0', 'SN1', 'SN2']);
      const miswired = m.problems.filter((p) => p.kind === 'miswired');
      if (forward.every(Boolean) || forward.every((f) => !f)) {
        right++;
        expect(m.problems).toEqual([]);
        continue;
      }
      expect(miswired.length).toBeGreaterThan(0);
      expect(kinds(m).every((k) => k === 'miswired')).toBe(true);
      const swaps = swapsIn(miswired[0]!.fix);
      expect(swaps.length).toBe(1); // a triangle is one swap from right
      expect(mapOf(nodes, swapped(wires, swaps)).problems).toEqual([]);
    }
    expect(right).toBe(2);
  });

  it('rings of 4 to 8 nodes, every wiring: ring topology; a miswire fixed by at most half the nodes swapping', () => {
    for (let k = 4; k <= 8; k++) {
      const nodes = Array.from({ length: k }, (_x, i) => `n${i}`);
      // Every wiring up to 6 nodes; every 7th of 7 and 8 (the fast tier stays fast).
      for (let bits = 0; bits < 2 ** k; bits += k <= 6 ? 1 : 7) {
        const wires = ringWires(
          nodes,
          nodes.map((_n, i) => Boolean(bits & (1 << i))),
        );
        const m = mapOf(nodes, wires);
        expect(m.topology).toBe('ring');
        expect(m.links).toHaveLength(k);
        if (m.problems.length === 0) continue;
        const swaps = swapsIn(m.problems[0]!.fix);
        expect(swaps.length).toBeGreaterThan(0);
        expect(swaps.length).toBeLessThanOrEqual(k / 2);
        expect(mapOf(nodes, swapped(wires, swaps)).problems).toEqual([]);
      }
    }
  });

  it('a pair: the same port at both ends; a cable to the other port is moved, two crossed cables are swapped', () => {
    expect(
      mapOf(
        ['a', 'b'],
        [
          [
            ['a', 1],
            ['b', 1],
          ],
        ],
      ).problems,
    ).toEqual([]);
    const one = mapOf(
      ['a', 'b'],
      [
        [
          ['a', 0],
          ['b', 1],
        ],
      ],
    );
    expect(one.topology).toBe('pair');
    expect(one.problems.map((p) => [p.kind, p.fix])).toEqual([['miswired', 'move the cable at b cage 1 to b cage 0']]);
    const crossed = mapOf(
      ['a', 'b'],
      [
        [
          ['a', 0],
          ['b', 1],
        ],
        [
          ['a', 1],
          ['b', 0],
        ],
      ],
    );
    expect(crossed.problems.map((p) => p.fix)).toEqual(['swap the two cables at b (cage 0 <-> cage 1)', 'swap the two cables at b (cage 0 <-> cage 1)']);
  });

  it('a triangle missing a cable is no triangle: the map says which nodes lack one and how to cable it', () => {
    const m = mapOf(['a', 'b', 'c'], ringWires(['a', 'b', 'c'], [true, true, true]).slice(0, 2));
    expect(m.topology).toBe('unknown');
    expect(m.problems.map((p) => p.kind)).toEqual(['topology']);
    expect(m.problems[0]!.message).toMatch(/a has 1 cable, c has 1 cable/);
    expect(m.problems[0]!.fix).toMatch(/port 0 of each node to port 1 of the next/);
  });

  it('a switch: every Spark on one port number, each at 200G', () => {
    const sw = (n: string, cage: number, port: string): Wire => [
      [n, cage],
      ['switch', port],
    ];
    const ok = mapOf(['a', 'b', 'c'], [sw('a', 1, 'swp1'), sw('b', 1, 'swp2'), sw('c', 1, 'swp3')], { sameSubnet: true });
    expect([ok.topology, ok.problems, ok.links.map((l) => `${l.id} ${l.matchedBy} ${l.serial}`)]).toEqual([
      'switch',
      [],
      ['a:1--sw1:swp1 lldp SN0', 'b:1--sw1:swp2 lldp SN1', 'c:1--sw1:swp3 lldp SN2'],
    ]);
    const mixed = mapOf(['a', 'b', 'c'], [sw('a', 1, 'swp1'), sw('b', 0, 'swp2'), sw('c', 1, 'swp3')], { sameSubnet: true });
    expect(mixed.problems.map((p) => [p.kind, p.fix])).toEqual([['mixed-ports', 'move the cable at b cage 0 to b cage 1']]);
    const slow = mapOf(['a', 'b'], [sw('a', 1, 'swp1'), sw('b', 1, 'swp2')], { sameSubnet: true, speed: 100000 });
    expect(slow.problems.map((p) => p.kind)).toEqual(['speed', 'speed']);
    expect(slow.problems[0]!.fix).toMatch(/force switch port swp1 to 200G-baseCR4 with autoneg off/);
  });
});

describe('cabling map: ends, addresses, MTU, NCCL', () => {
  const pair: Wire[] = [
    [
      ['a', 1],
      ['b', 1],
    ],
  ];

  it('two ends reporting different serials are joined by ping and named; an end with nothing at the far side is named', () => {
    const m = mapOf(['a', 'b'], pair, { serialAt: { 'b:1': 'OTHER1' } });
    expect(m.links.map((l) => [l.id, l.matchedBy, l.serial])).toEqual([['a:1--b:1', 'ping', null]]);
    expect(kinds(m)).toEqual(['serial-mismatch']);
    // A module in spark a's other cage, link down, its far end on no node read.
    const views = viewsOf(['a', 'b'], pair);
    views[0]!.ports[0]!.module = { serial: 'LONELY', partNumber: 'MCP1650-V00AE30', vendor: 'Mellanox' };
    const lone = buildCablingMap(views, []);
    expect(lone.problems.map((p) => [p.kind, p.message])).toEqual([
      ['unmatched-end', 'a:0 holds a cable (serial LONELY, link down) whose other end is on none of the nodes read'],
    ]);
  });

  it('an MTU differing between the two ends: the lower end is told the other end MTU', () => {
    const m = mapOf(['a', 'b'], pair, { mtu: { 'a:1': 9000 } });
    expect(kinds(m)).toEqual(['mtu-mismatch']);
    expect(m.problems[0]!.fix).toMatch(/at b: sudo ip link set dev enp1s0f1np1 mtu 9000; sudo ip link set dev enP2p1s0f1np1 mtu 9000/);
  });

  it('two rails in one subnet (ARP flux) and one address on two nodes are named', () => {
    const views = viewsOf(['a', 'b'], pair);
    views[0]!.ports[1]!.rails[1]!.addresses = ['10.0.0.1/24'];
    views[1]!.ports[1]!.rails[1]!.addresses = ['10.0.0.1/24'];
    const m = buildCablingMap(views, []);
    expect(kinds(m)).toEqual(expect.arrayContaining(['shared-subnet', 'duplicate-address']));
  });

  it('NCCL_IB_HCA: a missing device, an uncabled one, and an order that pairs rail 0 with rail 1', () => {
    expect(kinds(mapOf(['a', 'b'], pair, { nccl: { a: ['rocep1s0f1'] } }))).toEqual(['nccl-missing-device']);
    expect(kinds(mapOf(['a', 'b'], pair, { nccl: { a: ['rocep1s0f1', 'roceP2p1s0f1', 'rocep1s0f0'] } }))).toEqual(['nccl-extra-device']);
    const swappedList = mapOf(['a', 'b'], pair, { nccl: { b: ['roceP2p1s0f1', 'rocep1s0f1'] } });
    expect(swappedList.problems.map((p) => [p.kind, p.fix])).toEqual([['nccl-order', "order b's NCCL_IB_HCA as a's, rail 0 first: rocep1s0f1,roceP2p1s0f1"]]);
    // Every device of a triangle's four cabled ports, in any order: a mesh runs with NCCL_CROSS_NIC=1, no order rule.
    const all = ['roceP2p1s0f1', 'rocep1s0f0', 'rocep1s0f1', 'roceP2p1s0f0'];
    expect(mapOf(['a', 'b', 'c'], ringWires(['a', 'b', 'c'], [true, true, true]), { nccl: { a: all } }).problems).toEqual([]);
  });
});
