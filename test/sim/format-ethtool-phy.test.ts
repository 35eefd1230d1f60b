import { describe, expect, it } from 'vitest';
import { formatEthtoolStats, type StatsView } from '../../src/sim/format-ethtool.js';
import { PHY_LINES } from '../../src/transport/commands.js';

// Generated (simulated) counters, not a recording: the point is that the *_phy shortcut prints what grep would keep.
const view = (k: number): StatsView => ({
  cabled: true,
  port: {
    rxBytes: 1e12 + k,
    txBytes: 9e11 + k,
    rxPackets: 7e8 + k,
    txPackets: 6e8 + k,
    lanes: [k, 2 * k, 0, 3],
    correctedBits: 11 * k,
    correctedBlocks: 5 * k,
    uncorrectable: k % 2,
    pcsSymbolErrors: 17 * (k % 2),
    crcFrames: k % 2,
    linkDown: 1,
    recoveries: k % 3,
  },
  rail: { rxBytes: 5e11, txBytes: 4e11, rxPackets: 3e8, txPackets: 2e8 },
  host: { rx: { unicast: 1234 + k, multicast: 30, broadcast: 7 }, tx: { unicast: 999 + k, multicast: 20, broadcast: 1 } },
  portHost: { rx: { unicast: 2345 + k, multicast: 45, broadcast: 9 }, tx: { unicast: 1800 + k, multicast: 33, broadcast: 2 } },
  uncorrectableAsCrc: true,
});

describe('simulated ethtool -S through grep -E PHY_LINES', () => {
  it('the shortcut taken after the first dump prints exactly the lines grep keeps from the whole dump', () => {
    const re = new RegExp(PHY_LINES);
    const grep = (text: string) =>
      `${text
        .split('\n')
        .filter((l) => l !== '' && re.test(l))
        .join('\n')}\n`;
    const first = formatEthtoolStats(view(1), re); // whole dump filtered; learns the filter keeps *_phy only
    expect(first).toBe(grep(formatEthtoolStats(view(1))));
    for (const k of [2, 3, 977]) expect(formatEthtoolStats(view(k), re)).toBe(grep(formatEthtoolStats(view(k))));
    const lines = formatEthtoolStats(view(3), re).trimEnd().split('\n');
    expect(lines[0]).toBe('NIC statistics:');
    expect(lines).toContain('     rx_err_lane_1_phy: 6');
    expect(lines).toContain('     rx_corrected_bits_phy: 33');
    expect(lines).toHaveLength(43);
  });

  // Issue #33 item 5: a node whose kernel has total_success_recovery_phy prints it after the lanes, also when the
  // shortcut was learned from a node that lacks it.
  it('the recovery counter of a newer kernel, after the lanes, through the same shortcut', () => {
    const re = new RegExp(PHY_LINES);
    const newer = (k: number): StatsView => ({ ...view(k), recoveryCounter: true });
    formatEthtoolStats(view(1), re);
    const lines = formatEthtoolStats(newer(5), re).trimEnd().split('\n');
    expect(lines).toHaveLength(44);
    expect(lines.indexOf('     total_success_recovery_phy: 2')).toBe(lines.indexOf('     rx_err_lane_3_phy: 3') + 1);
    expect(formatEthtoolStats(newer(5), re)).toBe(
      `${formatEthtoolStats(newer(5))
        .split('\n')
        .filter((l) => l !== '' && re.test(l))
        .join('\n')}\n`,
    );
    expect(formatEthtoolStats(view(5), re)).not.toContain('total_success_recovery_phy');
  });
});
