// Benchmark seed: the persistent sampler against a fresh run() per command, over any CommandRunner factory.
// `node --import tsx bench/sampler.ts [--ticks N] [--interval MS]` runs it on this machine with two LocalRunners
// and GENERATED ethtool/nvidia-smi stand-ins on PATH (figures for the transport, not for a real NIC). A later bench
// passes a factory of SshRunners against real sshd.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { measureSampling, type MeasureResult } from '../src/sampling/measure.js';
import type { SampleSetConfig } from '../src/sampling/sample-set.js';
import { LocalRunner } from '../src/transport/local-runner.js';
import type { CommandRunner } from '../src/transport/types.js';

export interface BenchSamplerOptions {
  makeRunner: (node: string) => CommandRunner | Promise<CommandRunner>;
  nodes: string[];
  sampleSet: SampleSetConfig;
  ticks: number;
  intervalMs: number;
}

// Both strategies on fresh runners each, persistent first.
export async function benchSampler(o: BenchSamplerOptions): Promise<MeasureResult[]> {
  const results: MeasureResult[] = [];
  for (const mode of ['persistent', 'naive'] as const) {
    const runners = await Promise.all(o.nodes.map((n) => o.makeRunner(n)));
    try {
      const nodes = runners.map((runner, i) => ({ name: o.nodes[i]!, runner, sampleSet: o.sampleSet }));
      results.push(await measureSampling({ mode, nodes, ticks: o.ticks, intervalMs: o.intervalMs }));
    } finally {
      await Promise.all(runners.map((r) => r.close()));
    }
  }
  return results;
}

// GENERATED stand-ins: ~1,000 counters like an mlx5 `ethtool -S`, a link block, a FEC block, one GPU line.
const FAKE_ETHTOOL = `#!/bin/sh
# GENERATED bench stand-in for ethtool (not recorded output)
case "$1" in
  -S) cat "$(dirname "$0")/stats.txt" ;;
  -I) printf 'FEC parameters for %s:\\nSupported/Configured FEC encodings: Auto\\nActive FEC encoding: RS\\n' "$3" ;;
  *) printf 'Settings for %s:\\n\\tSpeed: 200000Mb/s\\n\\tLanes: 4\\n\\tLink detected: yes\\n' "$1" ;;
esac
`;
const FAKE_STATS =
  'NIC statistics:\n' +
  Array.from({ length: 1000 }, (_, i) => `     ch${i}_packets: ${i * 1000}\n`).join('') +
  '     rx_err_lane_0_phy: 0\n     rx_corrected_bits_phy: 0\n';
const FAKE_NVIDIA_SMI = `#!/bin/sh
# GENERATED bench stand-in for nvidia-smi (not recorded output)
echo '0, NVIDIA GB10, 97, 71, 42.15'
`;

async function main(): Promise<void> {
  const arg = (name: string, dflt: number) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? Number(process.argv[i + 1]) : dflt;
  };
  const dir = await mkdtemp(join(tmpdir(), 'cq-bench-'));
  try {
    for (const [name, text] of [
      ['ethtool', FAKE_ETHTOOL],
      ['nvidia-smi', FAKE_NVIDIA_SMI],
    ] as const) {
      await writeFile(join(dir, name), text);
      await chmod(join(dir, name), 0o755);
    }
    await writeFile(join(dir, 'stats.txt'), FAKE_STATS);
    const results = await benchSampler({
      makeRunner: (node) => new LocalRunner({ node, env: { PATH: `${dir}:${process.env['PATH']}` } }),
      nodes: ['local-a', 'local-b'],
      sampleSet: { rails: ['enp1s0f1np1', 'enP2p1s0f1np1'], fecNetdev: 'enp1s0f1np1' },
      ticks: arg('ticks', 50),
      intervalMs: arg('interval', 0),
    });
    process.stdout.write(`${JSON.stringify({ transport: 'local (generated tools)', results }, null, 2)}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
