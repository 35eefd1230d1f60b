// The simulated port's error counters agree with each other every second, as a real port's do (issue 21 item 11):
// codeword and bit counts come from one model (src/sim/fec-draws.ts), and a lane whose scenario declares error bursts
// is overdispersed (compound Poisson). Generated counters, not recordings.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEthtoolStats } from '../../src/probes/ethtool-stats.js';
import { loadScenario } from '../../src/sim/scenario.js';
import type { PortCounters } from '../../src/sim/model.js';
import { cmd } from '../../src/transport/commands.js';
import { newLab, startGpuLoad, startLinkLoad } from './drive.js';

type Delta = { [K in keyof PortCounters]: K extends 'lanes' ? number[] : number };
const delta = (a: PortCounters, b: PortCounters): Delta => ({
  ...(Object.fromEntries(Object.keys(b).map((k) => [k, (b[k as keyof PortCounters] as number) - (a[k as keyof PortCounters] as number)])) as Omit<
    Delta,
    'lanes'
  >),
  lanes: b.lanes.map((v, i) => v - a.lanes[i]!),
});

// Every one-second interval of both receivers through the default protocol's load pattern: 10 min of full link load
// with idle GPUs, then 25 min with the GPUs loaded (the NIC at its hottest well before; or until the link drops).
async function intervals(scenario: string): Promise<Delta[]> {
  const { lab, clock } = newLab(scenario);
  await startLinkLoad(lab);
  const out: Delta[] = [];
  let prev = lab.nodes.map((n) => lab.state(n).port);
  for (let s = 0; s < 2100; s++) {
    if (s === 600) await startGpuLoad(lab);
    await clock.sleep(1000);
    const now = lab.nodes.map((n) => lab.state(n).port);
    now.forEach((p, i) => out.push(delta(prev[i]!, p)));
    prev = now;
    if (lab.events.some((e) => e.kind === 'link-down')) break;
  }
  return out;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('error counters of a simulated port agree with each other every second', () => {
  it.each(['good-qsfp112', 'marginal-qsfp112', 'crc-errors', 'failing-clone', 'uniform-heat-qsfp56', 'rare-errors-qsfp56'])(
    '%s: corrected codewords <= corrected bits = the lanes sum; lost frames <= 2 per uncorrectable codeword; bits enough for every codeword',
    async (scenario) => {
      const ds = await intervals(scenario);
      expect(ds.length).toBeGreaterThan(400);
      const bad = {
        codewordsOverBits: ds.filter((d) => d.correctedBlocks > d.correctedBits).length,
        bitsNotLaneSum: ds.filter((d) => d.correctedBits !== sum(d.lanes)).length,
        pcsNotCrc: ds.filter((d) => d.pcsSymbolErrors !== d.crcFrames).length,
        crcOverTwicePerCodeword: ds.filter((d) => d.crcFrames > 2 * d.uncorrectable).length,
        tooFewBits: ds.filter((d) => d.correctedBits < d.correctedBlocks + 16 * d.uncorrectable).length,
      };
      expect(bad).toEqual({ codewordsOverBits: 0, bitsNotLaneSum: 0, pcsNotCrc: 0, crcOverTwicePerCodeword: 0, tooFewBits: 0 });
      // Not vacuous: each of these scenarios corrects errors, and codewords are counted.
      expect(sum(ds.map((d) => d.correctedBlocks))).toBeGreaterThan(0);
      if (scenario === 'crc-errors' || scenario === 'failing-clone') expect(sum(ds.map((d) => d.crcFrames))).toBeGreaterThan(0);
    },
  );

  it('rx_pcs_symbol_err_phy, rx_symbol_err_phy and rx_crc_errors_phy read the same, as on the real degraded port', async () => {
    const { lab, clock } = newLab('crc-errors');
    await startLinkLoad(lab);
    await clock.sleep(600_000);
    await startGpuLoad(lab);
    await clock.sleep(1_200_000);
    const s = parseEthtoolStats((await lab.runner('spark-a').run(cmd.ethtoolStats('enp1s0f1np1'))).stdout);
    expect(s.crcErrors! > 50n).toBe(true);
    expect(s.pcsSymbolErrors).toBe(s.crcErrors);
    expect(s.symbolErrors).toBe(s.crcErrors);
    expect(s.correctedBits).toBe(s.lanes.reduce((a, b) => a + b, 0n));
  });
});

describe('a lane with error bursts is overdispersed', () => {
  // A clean QSFP56 cable with one lane at a steady 4000 errored bits a second, in bursts of `meanBits` (or none).
  function steadyLane(meanBits: number | null): string {
    const spec = loadScenario('good-qsfp56');
    const name = `steady-${meanBits ?? 'single'}`;
    const file = join(mkdtempSync(join(tmpdir(), 'cq-burst-')), `${name}.json`);
    const lanes = [[[0, 0]], [[0, 4000]], [[0, 0]], [[0, 0]]];
    writeFileSync(file, JSON.stringify({ ...spec, name, lanes, ...(meanBits ? { burstBits: [[1e-9, meanBits]] } : {}) }));
    return file;
  }

  // Index of dispersion (variance / mean) of a lane's count per second over 2000 seconds.
  async function dispersion(meanBits: number | null): Promise<{ mean: number; dispersion: number }> {
    const { lab, clock } = newLab(steadyLane(meanBits));
    const counts: number[] = [];
    let prev = lab.state('spark-a').port.lanes[1];
    for (let s = 0; s < 2000; s++) {
      await clock.sleep(1000);
      const now = lab.state('spark-a').port.lanes[1];
      counts.push(now - prev);
      prev = now;
    }
    const mean = sum(counts) / counts.length;
    const variance = sum(counts.map((c) => (c - mean) ** 2)) / (counts.length - 1);
    return { mean, dispersion: variance / mean };
  }

  it('bursts of mean length m: compound Poisson, variance / mean = 2m - 1; independent errors: Poisson, 1', async () => {
    const single = await dispersion(null);
    expect(single.mean).toBeGreaterThan(3900);
    expect(single.mean).toBeLessThan(4100);
    expect(single.dispersion).toBeGreaterThan(0.85);
    expect(single.dispersion).toBeLessThan(1.15);
    const bursty = await dispersion(8);
    expect(bursty.mean).toBeGreaterThan(3800);
    expect(bursty.mean).toBeLessThan(4200);
    expect(bursty.dispersion).toBeGreaterThan(15 * 0.8);
    expect(bursty.dispersion).toBeLessThan(15 * 1.2);
  });
});
