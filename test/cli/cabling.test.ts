// `cablequal cabling` on the simulated clusters: the map, the problems with their fixes, the exit codes.
import { describe, expect, it } from 'vitest';
import type { CablingMap } from '../../src/domain/cabling.js';
import { runCli } from '../helpers/cli.js';

describe('cablequal cabling --sim', () => {
  it('triangle: 3 links over 3 nodes, each with its cable serial, exit 0', async () => {
    const r = await runCli(['cabling', '--sim', 'triangle', '--json']);
    expect(r.code).toBe(0);
    const map = JSON.parse(r.out) as CablingMap;
    expect(map.topology).toBe('triangle');
    expect(map.nodes).toEqual(['spark-a', 'spark-b', 'spark-c']);
    expect(map.links.map((l) => [l.id, l.serial, l.partNumber, l.a.speedMbps, l.a.lanes, l.a.state, l.b.state])).toEqual([
      ['spark-a:0--spark-b:1', 'MT2412VS02101', 'MCP1650-V00AE30', 200000, 4, 'up', 'up'],
      ['spark-a:1--spark-c:0', 'MT2412VS02103', 'MCP1650-V00AE30', 200000, 4, 'up', 'up'],
      ['spark-b:0--spark-c:1', 'MT2412VS02102', 'MCP1650-V00AE30', 200000, 4, 'up', 'up'],
    ]);
    expect(map.links[0]!.a.rails.map((x) => x.address)).toEqual(['192.168.10.1/24', '192.168.11.1/24']);
    expect(map.problems).toEqual([]);
  });

  it('triangle-miswired: names the p0-p0 and p1-p1 links and the fix (swap at spark-b), exit 1', async () => {
    const r = await runCli(['cabling', '--sim', 'triangle-miswired']);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^cabling of 3 nodes \(spark-a, spark-b, spark-c\), simulated lab: triangle, 3 links$/m);
    expect(r.out).toMatch(/^problem \(miswired\): spark-a:0--spark-b:0 joins port 0 to port 0/m);
    expect(r.out).toMatch(/^problem \(miswired\): spark-b:1--spark-c:1 joins port 1 to port 1/m);
    expect(r.out).toMatch(/^ {2}fix: swap the two cables at spark-b \(cage 0 <-> cage 1\)$/m);
  });

  it('ring4: 4 links; switch4: each Spark to its switch port by LLDP; both exit 0', async () => {
    const ring = JSON.parse((await runCli(['cabling', '--sim', 'ring4', '--json'])).out) as CablingMap;
    expect([ring.topology, ring.links.length, ring.problems.length]).toEqual(['ring', 4, 0]);
    const sw = await runCli(['cabling', '--sim', 'switch4', '--json']);
    expect(sw.code).toBe(0);
    const map = JSON.parse(sw.out) as CablingMap;
    expect(map.links.map((l) => `${l.id} ${l.matchedBy} ${l.serial}`)).toEqual([
      'spark-a:1--sim-switch:swp1 lldp MT2412VS02301',
      'spark-b:1--sim-switch:swp2 lldp MT2412VS02302',
      'spark-c:1--sim-switch:swp3 lldp MT2412VS02303',
      'spark-d:1--sim-switch:swp4 lldp MT2412VS02304',
    ]);
  });

  it("pair-nccl-swapped: spark-b's device list, in the other order, named with the order to use, exit 1", async () => {
    const r = await runCli(['cabling', '--sim', 'pair-nccl-swapped', '--json']);
    expect(r.code).toBe(1);
    const map = JSON.parse(r.out) as CablingMap;
    expect(map.topology).toBe('pair');
    expect(map.problems.map((p) => [p.kind, p.nodes, p.fix])).toEqual([
      ['nccl-order', ['spark-b'], "order spark-b's NCCL_IB_HCA as spark-a's, rail 0 first: rocep1s0f1,roceP2p1s0f1"],
    ]);
  });

  it('a node that cannot be reached: one line naming it, exit 3', async () => {
    const r = await runCli(['cabling', '--sim', 'triangle', '--sim-fault', 'ssh-drop@0s+60s:spark-b']);
    expect([r.code, r.out]).toEqual([3, '']);
    expect(r.err.trim().split('\n')).toEqual([expect.stringMatching(/^cablequal cabling: spark-b could not be read: .*simulated ssh drop/)]);
  });

  it('bad usage is one line and exit 2: no nodes, one node, a node the simulated lab lacks', async () => {
    const none = await runCli(['cabling']);
    expect([none.code, none.err.trim().split('\n').length]).toEqual([2, 1]);
    expect(none.err).toMatch(/give --nodes a,b\[,\.\.\.\] \(2 to 8 nodes\) or --sim <scenario>/);
    expect((await runCli(['cabling', '--nodes', 'a'])).err).toMatch(/a cluster has 2 to 8 nodes, got 1/);
    const stray = await runCli(['cabling', '--sim', 'triangle', '--nodes', 'spark-a,spark-z']);
    expect([stray.code, stray.err]).toEqual([2, expect.stringMatching(/no simulated node "spark-z" in triangle/)]);
  });
});

describe('what the map runs on a node', () => {
  it('only read-only commands, sudo only for ethtool -m (the EEPROM pages), over every cluster scenario', async () => {
    const { createLab } = await import('../../src/sim/lab.js');
    const { VirtualClock } = await import('../../src/sim/virtual-clock.js');
    const { readNodeView, runPings } = await import('../../src/probes/cabling-read.js');
    const { plannedPings } = await import('../../src/domain/cabling-map.js');
    const seen = new Set<string>();
    for (const scenario of ['triangle', 'switch4', 'pair-nccl-swapped']) {
      const lab = createLab({ scenario, clock: new VirtualClock() });
      const runners = new Map(
        lab.nodes.map((n) => {
          const inner = lab.runner(n);
          const wrapped = Object.assign(Object.create(inner) as typeof inner, {
            run: (c: string, o?: Parameters<typeof inner.run>[1]) => {
              seen.add(c.replace(/\b(en\w+|192\.168\.\d+\.\d+)/g, '<x>'));
              return inner.run(c, o);
            },
          });
          return [n, wrapped] as const;
        }),
      );
      const views = [];
      for (const n of lab.nodes) views.push(await readNodeView(runners.get(n)!, n));
      await runPings(runners, plannedPings(views));
      expect(lab.nodes.flatMap((n) => lab.processes(n))).toEqual([]);
    }
    expect([...seen].sort()).toEqual([
      'ethtool -I --show-fec <x>',
      'ethtool <x>',
      'grep -H . /etc/nccl.conf ~/.nccl.conf 2>/dev/null',
      'grep -H . /sys/class/net/*/phys_port_name /sys/class/net/*/device/uevent /sys/class/infiniband/*/sys_image_guid 2>/dev/null',
      'ibdev2netdev',
      'ip -j addr show',
      'lldpctl -f json0',
      'ping -I <x> -c 2 -W 1 <x>',
      'printenv NCCL_IB_HCA',
      'sudo -n ethtool -m <x> page 0 offset 0 length 128 hex on',
      'sudo -n ethtool -m <x> page 0 offset 128 length 128 hex on',
    ]);
  });
});
