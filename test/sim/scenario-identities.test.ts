// Each shipped scenario is its own simulated cable (issue 21 item 12): its own serial, so that the lab store never sees
// one cable that passed, failed and errored, and a part number of its family.
import { describe, expect, it } from 'vitest';
import { readModuleEeprom } from '../../src/probes/eeprom-hex.js';
import { DEFAULT_CABLED_CAGE } from '../../src/sim/lab-core.js';
import { createLab } from '../../src/sim/lab.js';
import { listScenarios, loadScenario } from '../../src/sim/scenario.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';

// Parts whose family is known (/work/shared/DOMAIN.md "Cable families"): the two NVIDIA-approved passive DACs are
// 400G-class (QSFP112; NJAAKK0006 is the 0.5 m NJAAKK-N911), MCP1650-V00AE30 the user-reported QSFP56 alternative.
const KNOWN_PARTS: Record<string, 'QSFP56' | 'QSFP112'> = {
  'NJAAKK-N911': 'QSFP112',
  NJAAKK0006: 'QSFP112',
  'LMTQF022-SD-R': 'QSFP112',
  'MCP1650-V00AE30': 'QSFP56',
};

// A generic identity (a clone's or an unbranded cable's) names its family in its part number, as QS56 or QSFP56 does.
const namesFamily = (pn: string, family: 'QSFP56' | 'QSFP112') => (family === 'QSFP56' ? /QS(FP)?56/ : /QS(FP)?112/).test(pn);

describe('shipped scenarios', () => {
  const scenarios = listScenarios().map((s) => loadScenario(s.name));

  it('every cable has a serial of its own (both ends of eeprom-mismatch included)', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(14);
    const serials = scenarios.flatMap((s) => [
      // A cluster's cables, each its own (the bench's cable fields are its first cable's).
      ...(s.cables ?? []).map((c, i) => ({ scenario: `${s.name} (cable ${i})`, serial: c.spec.cable.eeprom.vendorSn })),
      ...(s.cables ? [] : [{ scenario: s.name, serial: s.cable.eeprom.vendorSn }]),
      ...(s.secondCable ? [{ scenario: `${s.name} (second cable)`, serial: s.secondCable.spec.cable.eeprom.vendorSn }] : []),
      ...Object.values(s.cable.serialByNode ?? {})
        .filter((sn) => sn !== s.cable.eeprom.vendorSn)
        .map((serial) => ({ scenario: `${s.name} (other end)`, serial })),
    ]);
    const seen = new Map<string, string>();
    const repeats: string[] = [];
    for (const { scenario, serial } of serials) {
      const first = seen.get(serial);
      if (first) repeats.push(`${serial}: ${first} and ${scenario}`);
      else seen.set(serial, scenario);
    }
    expect(repeats).toEqual([]);
  });

  it('every cable’s EEPROM reads back through the harness’s reader at each end: vendor, part and serial as the scenario says', async () => {
    for (const s of scenarios) {
      const lab = createLab({ scenario: s.name, clock: new VirtualClock() });
      if (s.cables) {
        // A cluster: each cable's EEPROM at each of its Spark ends, in that end's cage.
        const read: string[][] = [];
        for (const c of s.cables)
          for (const e of c.ends) {
            if ('switch' in e) continue;
            const id = await readModuleEeprom(lab.runner(e.node), e.cage === 0 ? 'enp1s0f0np0' : 'enp1s0f1np1');
            read.push([s.name, e.node, id.vendorPn, id.vendorSn]);
          }
        const want = s.cables.flatMap((c) =>
          c.ends
            .filter((e) => !('switch' in e))
            .map((e) => [
              s.name,
              (e as { node: string }).node,
              c.spec.cable.eeprom.vendorPn,
              c.spec.cable.serialByNode?.[(e as { node: string }).node] ?? c.spec.cable.eeprom.vendorSn,
            ]),
        );
        expect(read).toEqual(want);
        expect(new Set(read.map((r) => r[3])).size).toBe(s.cables.length);
        continue;
      }
      for (const [i, node] of s.nodes.entries()) {
        const cage = node.cage ?? DEFAULT_CABLED_CAGE;
        const netdev = node.interfaces?.[cage][0].netdev ?? (cage === 0 ? 'enp1s0f0np0' : 'enp1s0f1np1');
        const id = await readModuleEeprom(lab.runner(lab.nodes[i]!), netdev);
        expect([s.name, id.vendorName, id.vendorPn, id.vendorSn]).toEqual([
          s.name,
          s.cable.eeprom.vendorName,
          s.cable.eeprom.vendorPn,
          s.cable.serialByNode?.[node.name] ?? s.cable.eeprom.vendorSn,
        ]);
        // A second cable, in the other cage, reads as its own.
        const second = s.secondCable;
        if (second)
          expect((await readModuleEeprom(lab.runner(lab.nodes[i]!), second.cage === 0 ? 'enp1s0f0np0' : 'enp1s0f1np1')).vendorSn).toBe(
            second.spec.cable.eeprom.vendorSn,
          );
      }
    }
  });

  it("every cable's part number is of its family: a known part's family, or a generic part that names it", () => {
    const wrong = scenarios
      .map((s) => ({ name: s.name, family: s.cable.family, pn: s.cable.eeprom.vendorPn }))
      .filter(({ family, pn }) => (pn in KNOWN_PARTS ? KNOWN_PARTS[pn] !== family : !namesFamily(pn, family)))
      .map(({ name, family, pn }) => `${name}: ${pn} is not a ${family} part`);
    expect(wrong).toEqual([]);
    // The check knows both families' parts: it would refuse the approved 400G-class DAC on a QSFP56 scenario.
    expect(KNOWN_PARTS['NJAAKK0006']).toBe('QSFP112');
    expect(scenarios.some((s) => s.cable.family === 'QSFP56' && s.cable.eeprom.vendorPn in KNOWN_PARTS)).toBe(true);
    expect(scenarios.some((s) => s.cable.family === 'QSFP112' && s.cable.eeprom.vendorPn in KNOWN_PARTS)).toBe(true);
  });
});
