import { describe, expect, it } from 'vitest';
import { createLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { parseIbdev2netdev } from '../../src/probes/ibdev2netdev.js';
import { readModuleEeprom } from '../../src/probes/eeprom-hex.js';

// The simulated lab's cable swap (batch campaigns): unplug, then another scenario's cable in the same nodes.
describe('simulated cable swap', () => {
  async function cabledRails(lab: ReturnType<typeof createLab>, node: string): Promise<string[]> {
    const r = await lab.runner(node).run('ibdev2netdev');
    return parseIbdev2netdev(r.stdout)
      .links.filter((l) => l.state === 'Up')
      .map((l) => l.netdev)
      .sort();
  }

  it('unplug takes the link down and the EEPROM away; plug trains the new cable and shows its serial', async () => {
    const clock = new VirtualClock();
    const lab = createLab({ scenario: 'good-qsfp56', clock });
    await clock.sleep(5000);
    expect(await cabledRails(lab, 'spark-a')).toEqual(['enP2p1s0f1np1', 'enp1s0f1np1']);
    expect((await readModuleEeprom(lab.runner('spark-b'), 'enp1s0f1np1')).vendorSn).toBe('MT2412VS01157');

    lab.unplug();
    await clock.sleep(1000);
    // With no cable in, a Spark removes the CX-7 PCI functions (docs/formats.md §0): no RDMA device, no netdev.
    expect((await lab.runner('spark-a').run('ibdev2netdev')).stdout).toBe('');
    const m = await lab.runner('spark-a').run('sudo -n ethtool -m enp1s0f1np1 page 0 offset 0 length 128 hex on');
    expect(m.exitCode).toBe(1);
    expect(m.stderr).toContain('No such device');

    lab.plug('good-qsfp112', { serial: 'SIMBOX0001' });
    expect(lab.cable.cable.eeprom.vendorPn).toBe('LMTQF022-SD-R');
    await clock.sleep(1000);
    expect(await cabledRails(lab, 'spark-b')).toEqual([]); // still training (linkRecoverS)
    await clock.sleep(10_000);
    expect(await cabledRails(lab, 'spark-b')).toEqual(['enP2p1s0f1np1', 'enp1s0f1np1']);
    const id = await readModuleEeprom(lab.runner('spark-a'), 'enp1s0f1np1');
    expect(id.vendorSn).toBe('SIMBOX0001');
    expect(id.vendorPn).toBe('LMTQF022-SD-R');
    // The re-plugged port's PPCNT counters restart (the unplug's link-down belonged to the old cable).
    expect(lab.state('spark-a').port.linkDown).toBe(0);
    expect(lab.events.map((e) => e.kind)).toEqual(['link-down', 'link-down', 'cable-unplugged', 'cable-plugged', 'link-up']);
    // Node state carries over: same boot.
    expect(lab.state('spark-a').uptimeS).toBeGreaterThan(86400);
  });

  it('renames nodes for several simulated pairs in one process', () => {
    const lab = createLab({ scenario: 'good-qsfp56', clock: new VirtualClock(), nodeNames: ['spark-c', 'spark-d'] });
    expect(lab.nodes).toEqual(['spark-c', 'spark-d']);
    expect(() => lab.runner('spark-a')).toThrow(/no simulated node "spark-a"/);
  });
});
