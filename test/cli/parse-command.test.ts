import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('cablequal parse', () => {
  it('refuses an unknown kind with exit 2: the nearest kind when one is close, else where the kinds are listed', async () => {
    const typo = await runCli(['parse', 'ethtool-stat', '-']);
    expect(typo).toEqual({
      code: 2,
      out: '',
      err: 'cablequal: parse: unknown kind "ethtool-stat": did you mean ethtool-stats?\nRun "cablequal parse --help" for usage.\n',
    });
    const r = await runCli(['parse', 'no-such-kind', '-']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('cablequal: parse: unknown kind "no-such-kind"\nRun "cablequal parse --help" for usage.\n');
    expect((await runCli(['parse', '--help'])).out).toMatch(/choices: "ethtool-stats", "ethtool-link", /);
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

  it('reads the node facts kinds: net-identity prints its maps as JSON objects', async () => {
    const r = await runCli(['parse', 'net-identity', '-'], {
      stdin:
        '/sys/class/net/cx7a/phys_port_name:p1\n/sys/class/net/cx7a/device/uevent:PCI_SLOT_NAME=0002:01:00.1\n/sys/class/infiniband/mlx5_1/sys_image_guid:b8ce:f603:00e5:f118\n',
    });
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      netdevs: { cx7a: { pci: '0002:01:00.1', driver: null, physPortName: 'p1' } },
      sysImageGuid: { mlx5_1: 'b8ce:f603:00e5:f118' },
    });
    const v = await runCli(['parse', 'perftest-version', '-'], { stdin: 'Version: 6.22\n' });
    expect(JSON.parse(v.out)).toBe('6.22');
  });
});
