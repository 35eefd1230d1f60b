// A lab of two cables between the same two Sparks (samples/scenarios/dual-cage.json): each cable its own link, EEPROM,
// lanes and port counters; the nodes' NIC heat, GPU and PCIe rails shared, so the streams of both cables through one
// rail get half its rate each and the NIC carries (and heats with) the same total traffic as with one cable.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readModuleEeprom } from '../../src/probes/eeprom-hex.js';
import { parseEthtoolStats } from '../../src/probes/ethtool-stats.js';
import { parseIbdev2netdev } from '../../src/probes/ibdev2netdev.js';
import { parseIbWriteBw } from '../../src/probes/ib-write-bw.js';
import { createLab, type SimLab } from '../../src/sim/lab.js';
import { loadScenario, SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { cmd } from '../../src/transport/commands.js';
import type { RemoteProcess } from '../../src/transport/types.js';
import { untilListening } from './drive.js';

// The default DGX OS names of each cage's two functions.
const CAGES = [
  { devices: ['rocep1s0f0', 'roceP2p1s0f0'], netdev: 'enp1s0f0np0' },
  { devices: ['rocep1s0f1', 'roceP2p1s0f1'], netdev: 'enp1s0f1np1' },
] as const;

// One stream per rail from spark-a to spark-b over the cable in `cage`, as a soak starts them (ports apart per cage).
async function loadCage(lab: SimLab, clock: VirtualClock, cage: 0 | 1): Promise<RemoteProcess[]> {
  const ips = cage === 1 ? lab.scenario.nodes[1].railIps : lab.scenario.secondCable!.railIps[1];
  const out: RemoteProcess[] = [];
  for (const rail of [0, 1] as const) {
    const port = 18515 + 10 * cage + rail;
    const dev = CAGES[cage].devices[rail];
    const server = await lab.runner('spark-b').start(`stdbuf -oL ib_write_bw -d ${dev} -p ${port} -F --report_gbits -s 65536 --run_infinitely`, {
      runDir: '/tmp/cq',
      name: `srv-${cage}-${rail}`,
    });
    await untilListening(server, clock);
    const client = await lab
      .runner('spark-a')
      .start(`ib_write_bw -d ${dev} -p ${port} -F --report_gbits -s 65536 --run_infinitely ${ips[rail]}`, { runDir: '/tmp/cq', name: `cli-${cage}-${rail}` });
    out.push(client, server);
  }
  return out;
}

const lastRow = async (client: RemoteProcess) => parseIbWriteBw((await client.output()).stdout).rows.at(-1)!.bwAverageGbps;
const lanesOf = async (lab: SimLab, cage: 0 | 1) => {
  const c = parseEthtoolStats((await lab.runner('spark-b').run(cmd.ethtoolStats(CAGES[cage].netdev))).stdout).counters;
  return [0, 1, 2, 3].map((l) => Number(c[`rx_err_lane_${l}_phy`]));
};

describe('dual-cage lab', () => {
  it('has a cable in each cage, each with its own EEPROM, both links up', async () => {
    const clock = new VirtualClock();
    const lab = createLab({ scenario: 'dual-cage', clock });
    const links = parseIbdev2netdev((await lab.runner('spark-a').run(cmd.ibdev2netdev())).stdout).links;
    expect(links.map((l) => [l.netdev, l.state]).sort()).toEqual([
      ['enP2p1s0f0np0', 'Up'],
      ['enP2p1s0f1np1', 'Up'],
      ['enp1s0f0np0', 'Up'],
      ['enp1s0f1np1', 'Up'],
    ]);
    const spec = loadScenario('dual-cage');
    for (const node of lab.nodes) {
      expect((await readModuleEeprom(lab.runner(node), 'enp1s0f1np1')).vendorSn).toBe(spec.cable.eeprom.vendorSn);
      expect((await readModuleEeprom(lab.runner(node), 'enp1s0f0np0')).vendorSn).toBe(spec.secondCable!.spec.cable.eeprom.vendorSn);
    }
    expect(lab.cableIn(0)!.name).toBe('good-qsfp56');
    // The first cable is the scenario's own (the clone's cable, extended with its own serial).
    expect(lab.cableIn(1)!.cable.eeprom.vendorPn).toBe(loadScenario('failing-clone').cable.eeprom.vendorPn);
  });

  it('shares each PCIe rail between the cables, heats the NIC as one cable at full load does, and counts each cable’s lanes on its own', async () => {
    const clock = new VirtualClock();
    const lab = createLab({ scenario: 'dual-cage', clock });
    const both = [...(await loadCage(lab, clock, 0)), ...(await loadCage(lab, clock, 1))];
    await clock.sleep(600_000);
    const clients = both.filter((p) => p.name.startsWith('cli'));
    const shared = await Promise.all(clients.map(lastRow));
    // Each rail's ~92.5 Gb/s (the cables' railGbps) split over two streams.
    for (const g of shared) expect(g).toBeCloseTo(92.55 / 2, 0);
    const hot = lab.state('spark-b').nicTempC;

    // The same total traffic over one cable of the same bench: the same NIC temperature.
    const oneClock = new VirtualClock();
    const one = createLab({ scenario: 'failing-clone', clock: oneClock });
    const alone = await loadCage(one, oneClock, 1);
    await oneClock.sleep(600_000);
    expect(await lastRow(alone[0]!)).toBeCloseTo(92.55, 0);
    expect(hot).toBeCloseTo(one.state('spark-b').nicTempC, 1);

    // Lane errors are the cable's own: none on the good cable, the clone's lane 2 far above its others.
    const [good, clone] = [await lanesOf(lab, 0), await lanesOf(lab, 1)];
    expect(good).toEqual([0, 0, 0, 0]);
    expect(clone[2]).toBeGreaterThan(50 * Math.max(clone[0]!, clone[1]!, clone[3]!));
    expect(lab.state('spark-b', 0).laneErrorRates).toEqual([0, 0, 0, 0]);

    // One cable's load stops (its FAIL): the other's streams get the whole rails from the next row on.
    for (const p of both.slice(0, 4)) await p.stop();
    await clock.sleep(30_000);
    for (const c of clients.slice(2)) expect(await lastRow(c)).toBeCloseTo(92.55, 0);
    for (const p of both) await p.stop();
    expect(lab.processes('spark-a')).toEqual([]);
  });

  it('swaps the cable of one cage: the other stays up, the new one trains and reads its own serial', async () => {
    const clock = new VirtualClock();
    const lab = createLab({ scenario: 'dual-cage', clock });
    lab.unplug(0);
    await clock.sleep(2000);
    expect(lab.state('spark-a', 0).linkUp).toBe(false);
    expect(lab.state('spark-a', 1).linkUp).toBe(true);
    lab.plug('good-qsfp112', { serial: 'LX24309999', cage: 0 });
    await clock.sleep(30_000);
    expect(lab.state('spark-a', 0).linkUp).toBe(true);
    expect((await readModuleEeprom(lab.runner('spark-b'), 'enp1s0f0np0')).vendorSn).toBe('LX24309999');
    expect(lab.events.filter((e) => e.kind === 'cable-plugged').map((e) => e.cage)).toEqual([0]);
  });

  it('a second cable must sit in the other cage, with addresses of its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-dual-'));
    const write = (name: string, second: object) => {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, JSON.stringify({ ...loadRaw(), name, secondCable: { ...loadRaw().secondCable, ...second } }));
      return file;
    };
    expect(() => loadScenario(write('same-cage', { cage: 1 }))).toThrow(/secondCable: cage 1 holds the first cable at spark-a: give the other cage/);
    expect(() =>
      loadScenario(
        write('same-ips', {
          railIps: [
            ['192.168.100.10', '192.168.103.10'],
            ['192.168.102.11', '192.168.103.11'],
          ],
        }),
      ),
    ).toThrow(/every rail of both cages needs an address of its own/);
    expect(() => loadScenario(write('nested', { scenario: 'dual-cage' }))).toThrow(/dual-cage has a second cable itself/);
  });
});

// dual-cage.json's own fields (what a variant of it changes).
function loadRaw(): Record<string, any> {
  return JSON.parse(readFileSync(join(SCENARIOS_DIR, 'dual-cage.json'), 'utf8'));
}
