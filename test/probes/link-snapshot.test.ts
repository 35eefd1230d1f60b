// The link snapshot: three ethtool reads of one receiver at once, with the reason the PHY gives while the link is down.
// Over the simulated lab (its outputs are generated): the link-flap scenario's drop, a pulled cable, a lost node.
import { describe, expect, it } from 'vitest';
import { linkState, linkSnapshotCommands, takeLinkSnapshot } from '../../src/probes/link-snapshot.js';
import { TransportError, type CommandRunner } from '../../src/transport/types.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { newLab, startGpuLoad, startLinkLoad } from '../sim/drive.js';
import { SIM_LINK_DOWN_REASONS } from '../../src/sim/model.js';

// ethtool netlink/settings.c: names_link_ext_state, and the substates the simulator uses (names_autoneg_..., the
// link training, bad signal integrity and cable issue tables).
const EXT_STATES = [
  'Autoneg',
  'Link training failure',
  'Logical mismatch',
  'Bad signal integrity',
  'No cable',
  'Cable issue',
  'EEPROM issue',
  'Calibration failure',
  'Power budget exceeded',
  'Overheat',
  'Module',
];
const SUBSTATES = ['No partner detected', 'Remote side is not ready yet', 'Large number of physical errors', 'Unsupported cable', 'Cable test failure'];

const IFACE = 'enp1s0f1np1';

describe('takeLinkSnapshot', () => {
  it("link-flap: taken while the link is down it reads the PHY's reason and the three outputs whole; once the link is back, yes and no reason", async () => {
    const { lab, clock } = newLab('link-flap');
    const load = await startLinkLoad(lab);
    const origin = clock.now();
    while (lab.state('spark-b').linkUp) await clock.sleep(1000);
    const down = await takeLinkSnapshot(lab.runner('spark-b'), IFACE, clock, { originMs: origin });
    expect(down.node).toBe('spark-b');
    expect(down.netdev).toBe(IFACE);
    expect(down.atS).toBe((clock.now() - origin) / 1000);
    expect(down.at).toBe(new Date(clock.now()).toISOString());
    expect(down.link).toMatchObject({ command: `ethtool ${IFACE}`, detected: false, reason: 'Cable issue', exitCode: 0 });
    expect(down.link.raw).toContain('\tLink detected: no (Cable issue)\n');
    expect(down.stats.command).toBe(`ethtool -S ${IFACE}`);
    expect(down.stats.raw).toMatch(/^\s+link_down_events_phy: 1$/m);
    expect(down.module.command).toBe(`sudo -n ethtool -m ${IFACE}`);
    expect(down.module.raw).toMatch(/Identifier/);

    while (!lab.state('spark-b').linkUp) await clock.sleep(1000);
    const up = await takeLinkSnapshot(lab.runner('spark-b'), IFACE, clock);
    expect(up.link).toMatchObject({ detected: true, reason: null });
    expect(up.link.raw).toContain('\tLink detected: yes\n');
    for (const p of load) await p.stop();
  });

  it("failing-clone: the PCS's hi_ber drop reads as bad signal integrity", async () => {
    const { lab, clock } = newLab('failing-clone');
    const load = await startLinkLoad(lab);
    const gpus = await startGpuLoad(lab);
    while (lab.state('spark-b').linkUp) await clock.sleep(1000);
    const s = await takeLinkSnapshot(lab.runner('spark-b'), IFACE, clock);
    expect(s.link).toMatchObject({ detected: false, reason: 'Bad signal integrity, Large number of physical errors' });
    for (const p of [...load, ...gpus]) await p.stop();
  });

  it('a node that does not answer leaves the error in place of each read; an abort is not swallowed', async () => {
    const clock = new VirtualClock();
    const lost: CommandRunner = {
      node: 'spark-x',
      simulated: true,
      run: () => Promise.reject(new TransportError('spark-x', 'connection lost')),
      start: () => Promise.reject(new Error('unused')),
      openShell: () => Promise.reject(new Error('unused')),
      close: () => Promise.resolve(),
    };
    const s = await takeLinkSnapshot(lost, IFACE, clock);
    expect(s.link).toMatchObject({ raw: '', exitCode: null, detected: null, reason: null, error: 'spark-x: connection lost' });
    expect(s.stats.error).toBe('spark-x: connection lost');
    expect(s.module.command).toBe(linkSnapshotCommands(IFACE).module);
    const broken = { ...lost, run: () => Promise.reject(new Error('harness bug')) };
    await expect(takeLinkSnapshot(broken, IFACE, clock)).rejects.toThrow('harness bug');
  });

  it("linkState reads stdout with stderr's notices, and stdout alone when stderr is not ethtool's", () => {
    const raw = 'Settings for x:\n\tLink detected: no (Overheat)\n';
    expect(linkState({ raw, stderr: 'netlink error: Operation not permitted\n' })).toEqual({ detected: false, reason: 'Overheat' });
    expect(linkState({ raw, stderr: 'sudo: a password is required\n' })).toEqual({ detected: false, reason: 'Overheat' });
    expect(linkState({ raw: 'ethtool: command not found' })).toEqual({ detected: null, reason: null });
  });

  it("the simulator's reasons are ethtool's names: a state, then a substate of it when one is given", () => {
    for (const reason of Object.values(SIM_LINK_DOWN_REASONS)) {
      const [state, sub, ...rest] = reason.split(', ');
      expect(EXT_STATES).toContain(state);
      if (sub !== undefined) expect(SUBSTATES).toContain(sub);
      expect(rest).toEqual([]);
    }
  });
});
