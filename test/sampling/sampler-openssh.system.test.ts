// The sampler over SshRunner to a real OpenSSH sshd whose user has a hostile bash rc: the sampling shell is a clean
// bash all the same, with the persistent *_phy filter and $EPOCHREALTIME inside the SSH shell framing, tick after tick. `ethtool` is a GENERATED stand-in
// (counters grow by 5 per call; not recorded output), put first on PATH by the session's own ~/.bashrc.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { Sampler } from '../../src/sampling/sampler.js';
import { SshRunner } from '../../src/transport/ssh-runner.js';
import { descendants, sshdAvailable, sshdRunner, startSshd, type Sshd } from '../helpers/sshd.js';

const A = 'enp1s0f1np1';
const B = 'enP2p1s0f1np1';

// A full-size dump: ~1,500 non-phy lines around the *_phy block, as mlx5 prints them.
const FAKE_ETHTOOL = (state: string) => `#!/bin/sh
# GENERATED test stand-in for ethtool (not recorded output)
n=$(cat '${state}' 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '${state}'
case "$1" in
  -S)
    echo 'NIC statistics:'
    i=0; while [ $i -lt 1500 ]; do echo "     rx\${i}_packets: $i"; i=$((i + 1)); done
    printf '     rx_crc_errors_phy: 0\\n     rx_err_lane_0_phy: %s\\n     rx_err_lane_1_phy: 1\\n     tx_bytes: 9\\n' $((n * 5)) ;;
  -I) printf 'FEC parameters for %s:\\nSupported/Configured FEC encodings: Auto\\nActive FEC encoding: RS\\n' "$3" ;;
  *) printf 'Settings for %s:\\n\\tSpeed: 200000Mb/s\\n\\tLanes: 4\\n\\tLink detected: yes\\n' "$1" ;;
esac
`;

describe.skipIf(!sshdAvailable)('Sampler over OpenSSH with a bash login shell', { timeout: 60_000 }, () => {
  let sshd: Sshd;
  let runner: SshRunner;
  let homeDir: string;

  beforeAll(async () => {
    const home = mkdtempSync(join(tmpdir(), 'cq-sampler-home-'));
    const bin = join(home, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'ethtool'), FAKE_ETHTOOL(join(home, 'count')));
    chmodSync(join(bin, 'ethtool'), 0o755);
    // A hostile rc, as found on real machines: errexit, and a function named like a tool the sampler runs. The rc runs
    // for the session (its PATH is kept, as for every other command), but the sampling shell is a clean bash.
    writeFileSync(
      join(home, '.bashrc'),
      `# GENERATED test rc\nexport PATH="${bin}:$PATH"\nset -e\nethtool() { echo hijacked by a shell function; }\nperl() { return 1; }\n`,
    );
    writeFileSync(join(home, '.bash_profile'), '# GENERATED test profile\n. ~/.bashrc\n'); // the usual login set-up
    // The sessions get this home (its rc files), never the machine user's own.
    sshd = await startSshd([`SetEnv HOME=${home}`]);
    homeDir = home;
    runner = sshdRunner(sshd, { node: 'node-a', homeDir: sshd.dir });
  });
  afterAll(async () => {
    await runner?.close();
    await sshd?.stop();
    rmSync(homeDir, { recursive: true, force: true });
  });

  it('reads both rails through the filter, in bash, tick after tick, with node time from $EPOCHREALTIME', async () => {
    expect((await runner.run('echo $BASH_VERSION')).stdout).toMatch(/^5\.\d/); // bash >= 5 has $EPOCHREALTIME
    const sampler = new Sampler({
      clock: systemClock,
      calibrationRounds: 2,
      nodes: [{ name: 'node-a', runner, sampleSet: { rails: [A, B], hwmon: false, gpu: false, linkEveryTicks: 0 } }],
    });
    await sampler.open();
    const lane0: bigint[][] = [];
    for (let k = 0; k < 4; k++) {
      const before = Date.now();
      const t = await sampler.tick(k);
      const s = t.nodes[0]!.sample!;
      expect(s.errors).toEqual([]);
      expect(s.tMs).toBeGreaterThanOrEqual(before - 50); // same machine's clock; ms with a fraction
      expect(s.tMs).toBeLessThanOrEqual(Date.now() + 50);
      // Only the *_phy lines arrived: 1,500 rxN_packets and tx_bytes were filtered out on the node.
      expect(
        [A, B].map((r) =>
          t.nodes[0]!.raw[`stats:${r}`]!.split('\n')
            .filter((l) => l.trim() && l.trim() !== 'NIC statistics:')
            .map((l) => l.trim().split(':')[0])
            .sort(),
        ),
      ).toEqual([
        ['rx_crc_errors_phy', 'rx_err_lane_0_phy', 'rx_err_lane_1_phy'],
        ['rx_crc_errors_phy', 'rx_err_lane_0_phy', 'rx_err_lane_1_phy'],
      ]);
      expect(s.rails[0]!.fec).toEqual({ active: 'RS' });
      lane0.push(s.rails.map((r) => r.phy.laneErrors[0]!));
    }
    // Each ethtool call bumps the stand-in's count: -S A, -S B and -I every tick (3 per tick, after 0 at open).
    expect(lane0).toEqual([
      [5n, 10n],
      [20n, 25n],
      [35n, 40n],
      [50n, 55n],
    ]);
    // One filter for the whole session: a single perl process below this connection's sshd.
    const perls = descendants(Number(execFileSync('cat', [join(sshd.dir, 'sshd.pid')]).toString())).filter((pid) => {
      try {
        return (
          execFileSync('cat', [`/proc/${pid}/comm`])
            .toString()
            .trim() === 'perl'
        );
      } catch {
        return false;
      }
    });
    expect(perls).toHaveLength(1);
    await sampler.close();
  });
});
