// The sampler over LocalRunner and a real /bin/sh: the real shell framing and batch splitting are exercised.
// `ethtool` and `nvidia-smi` are small GENERATED scripts on PATH (this machine has no ConnectX-7); `date` is real.
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { Sampler, tickNode } from '../../src/sampling/sampler.js';
import { TickFigures } from '../../src/sampling/stats.js';
import { LocalRunner } from '../../src/transport/local-runner.js';
import type { CommandRunner } from '../../src/transport/types.js';

const A = 'enp1s0f1np1';
const B = 'enP2p1s0f1np1';

// Generated stand-in for ethtool: counters grow by 7 per call; an unknown netdev fails like ethtool does;
// with $DIE_ON = n, the n-th `ethtool -S` kills the shell that called it (a dropped session).
const FAKE_ETHTOOL = `#!/bin/sh
# GENERATED test stand-in for ethtool (not recorded output)
st="$STATE_DIR/count"; n=$(cat "$st" 2>/dev/null || echo 0)
case "$1" in
  -S)
    n=$((n + 1)); echo $n > "$st"
    if [ "\${DIE_ON:-0}" = "$n" ]; then kill -9 $PPID; exit 1; fi
    case "$2" in ${A}|${B}) ;; *) echo "Cannot get stats strings information: No such device" >&2; exit 71;; esac
    printf 'NIC statistics:\\n     rx_err_lane_0_phy: %s\\n     rx_err_lane_1_phy: 0\\n     rx_corrected_bits_phy: %s\\n' $((n * 7)) 18446744073709551615 ;;
  -I)
    printf 'FEC parameters for %s:\\nSupported/Configured FEC encodings: Auto\\nActive FEC encoding: RS\\n' "$3" ;;
  *)
    printf 'Settings for %s:\\n\\tSpeed: 200000Mb/s\\n\\tLanes: 4\\n\\tLink detected: yes\\n' "$1" ;;
esac
`;

// Generated stand-in for a node whose GPU driver is not loaded.
const FAKE_NVIDIA_SMI = `#!/bin/sh
# GENERATED test stand-in for nvidia-smi (not recorded output)
echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
exit 9
`;

let dir: string;
const runners: LocalRunner[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cq-sampler-'));
  for (const [name, text] of [
    ['ethtool', FAKE_ETHTOOL],
    ['nvidia-smi', FAKE_NVIDIA_SMI],
  ] as const) {
    await writeFile(join(dir, name), text);
    await chmod(join(dir, name), 0o755);
  }
});

afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.close()));
  await rm(dir, { recursive: true, force: true });
});

// A LocalRunner with the fake tools first on PATH and its own counter state.
async function node(name: string, env: Record<string, string> = {}) {
  const state = join(dir, name);
  await mkdir(state, { recursive: true });
  const runner = new LocalRunner({ node: name, env: { PATH: `${dir}:${process.env['PATH']}`, STATE_DIR: state, ...env } });
  runners.push(runner);
  return runner;
}

// Counts shell round trips and shells opened, passing everything through.
function counted(runner: CommandRunner) {
  const c = { calls: 0, opened: 0 };
  const wrapped: CommandRunner = {
    node: runner.node,
    simulated: runner.simulated,
    run: (cmd, o) => runner.run(cmd, o),
    start: (cmd, o) => runner.start(cmd, o),
    close: () => runner.close(),
    openShell: async () => {
      c.opened++;
      const s = await runner.openShell();
      return {
        run: (cmd, o) => {
          c.calls++;
          return s.run(cmd, o);
        },
        close: () => s.close(),
      };
    },
  };
  return { c, wrapped };
}

describe('Sampler over LocalRunner (real /bin/sh framing)', () => {
  it('one round trip per tick carries all items; samples parsed; u64 exact; item failures recorded', async () => {
    const a = counted(await node('spark-a'));
    const sampler = new Sampler({
      clock: systemClock,
      calibrationRounds: 2,
      nodes: [{ name: 'spark-a', runner: a.wrapped, sampleSet: { rails: [A, B], hwmon: false } }],
    });
    expect(await sampler.open()).toEqual([]);
    expect(a.c.calls).toBe(2);
    const before = Date.now();
    const t0 = await sampler.tick();
    const t1 = await sampler.tick();
    const after = Date.now();
    expect(a.c).toEqual({ calls: 4, opened: 1 });

    const s = t1.nodes[0]!.sample!;
    expect(s.tMs).toBeGreaterThanOrEqual(before - 1); // real `date` on the same machine
    expect(s.tMs).toBeLessThanOrEqual(after + 1);
    expect(t0.nodes[0]!.sample!.rails.map((r) => r.phy.laneErrors[0])).toEqual([7n, 14n]);
    expect(s.rails.map((r) => r.phy.laneErrors[0])).toEqual([21n, 28n]);
    expect(s.rails[0]!.phy.correctedBits).toBe(18446744073709551615n);
    expect(s.rails[0]).toMatchObject({ netdev: A, linkUp: true, speedMbps: 200000, lanes: 4, fec: { active: 'RS' } });
    expect(s.rails[1]!.fec).toBeUndefined();
    // The GPU item failed: one error line with its exit status, the tick kept, no invented GPU.
    expect(s.errors).toHaveLength(1);
    expect(s.errors[0]).toMatch(/^gpu: .*\(exit 9\)$/);
    expect(t1.nodes[0]!.raw['gpu']).toBe("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n");
    expect(s.gpus).toEqual([]);
    await sampler.close();
  });

  it('a node whose shell dies mid-batch is missing for that tick, the other node is sampled, and it comes back', async () => {
    const a = counted(await node('spark-a'));
    const b = counted(await node('spark-b', { DIE_ON: '3' })); // 3rd `ethtool -S` = tick 1, first rail
    const sampleSet = { rails: [A], hwmon: false, gpu: false };
    const sampler = new Sampler({
      clock: systemClock,
      calibrationRounds: 1,
      nodes: [
        { name: 'spark-a', runner: a.wrapped, sampleSet },
        { name: 'spark-b', runner: b.wrapped, sampleSet: { ...sampleSet, rails: [A, 'eth9'] } },
      ],
    });
    await sampler.open();
    const ticks = [await sampler.tick(), await sampler.tick(), await sampler.tick()];
    const bTicks = ticks.map((t) => t.nodes[1]!);
    expect(bTicks[0]!.sample!.errors).toEqual([
      // The per-tick read goes through the shell's *_phy filter: the status is ethtool's own (71), and its message
      // (stderr, not filtered) is what the error line quotes.
      expect.stringMatching(/^stats:eth9: ethtool-stats: line 1: .*Cannot get stats strings information: No such device.*\(exit 71\)$/),
    ]);
    expect(bTicks[0]!.raw['stats:eth9']).toBe('Cannot get stats strings information: No such device\n');
    expect(bTicks[1]!.sample).toBeNull();
    expect(bTicks[1]!.error).toMatch(/^spark-b: shell session closed/);
    expect(bTicks[2]!.sample!.rails[0]!.phy.laneErrors[0]).toBe(28n); // calls 4 and 5 = tick 2
    expect(ticks.map((t) => t.nodes[0]!.sample?.rails[0]!.phy.laneErrors[0])).toEqual([7n, 14n, 21n]);
    expect(b.c.opened).toBe(2);
    const figures = new TickFigures();
    for (const t of ticks) figures.add({ startMs: t.startMs, endMs: t.endMs, nodes: t.nodes.map(tickNode) }, sampler.offsetsMs());
    expect(figures.summary()).toMatchObject({ ticks: 3, missingSamples: 1, itemErrors: 2 }); // eth9 unreadable on ticks 0 and 2
    expect(bTicks.map((n) => n.sample === null)).toEqual([false, true, false]); // one gap, tick 1 only
    await sampler.close();
  });
});
