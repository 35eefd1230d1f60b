import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('cablequal parse', () => {
  it('refuses an unknown kind with exit 2 and names the kinds', async () => {
    const r = await runCli(['parse', 'no-such-kind', '-']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/ethtool-stats/);
  });

  it('reports a missing file in one line with exit 2', async () => {
    const r = await runCli(['parse', 'ethtool-stats', 'does/not/exist.txt']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('ENOENT');
    expect(r.err.trim().split('\n')).toHaveLength(1);
  });

  it('refuses a missing command with exit 2', async () => {
    const r = await runCli([]);
    expect(r.code).toBe(2);
  });

  it('reads standard input for -, and prints a ParseError as one line with the line number (exit 2)', async () => {
    const ok = await runCli(['parse', 'ethtool-stats', '-'], { stdin: 'NIC statistics:\n     rx_err_lane_0_phy: 18446744073709551615\n' });
    expect(ok.code, ok.err).toBe(0);
    expect(JSON.parse(ok.out).counters.rx_err_lane_0_phy).toBe('18446744073709551615');
    const bad = await runCli(['parse', 'ethtool-stats', '-'], { stdin: 'NIC statistics:\n     rx_err_lane_0_phy: -1\n' });
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^<stdin>: ethtool-stats: line 2: /);
    expect(bad.err.trim().split('\n')).toHaveLength(1);
  });
});
