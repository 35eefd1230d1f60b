// RS(544,514) codeword statistics of the simulated lab (src/sim/fec.ts), checked against independent calculations:
// the binomial tail for independent bit errors, and a bit-level Monte Carlo of the 200GBASE-R layout for bursts.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CODEWORDS_PER_S, codewordStats, RS_N, RS_T } from '../../src/sim/fec.js';
import { burstBitsAt, loadScenario } from '../../src/sim/scenario.js';
import { newLab, startLinkLoad } from './drive.js';

const LANE_BPS = 53.125e9; // one QSFP56 lane

// One bad lane at `ber` in bursts of mean `meanBits`, the other three clean (the clone's shape).
const oneLane = (ber: number, meanBits: number) =>
  codewordStats(4, [
    { bitsPerS: 0, meanBits: 1 },
    { bitsPerS: 0, meanBits: 1 },
    { bitsPerS: ber * LANE_BPS, meanBits },
    { bitsPerS: 0, meanBits: 1 },
  ]);

function logFactorial(n: number): number {
  let s = 0;
  for (let i = 2; i <= n; i++) s += Math.log(i);
  return s;
}

// P(more than 15 of 544 ten-bit symbols wrong) when every bit is wrong independently with probability p.
function binomialUncorrectable(p: number): number {
  const ps = 1 - (1 - p) ** 10;
  let sum = 0;
  for (let k = RS_T + 1; k <= RS_N; k++) {
    const term = Math.exp(logFactorial(RS_N) - logFactorial(k) - logFactorial(RS_N - k) + k * Math.log(ps) + (RS_N - k) * Math.log(1 - ps));
    sum += term;
    if (k > 60 && term < sum * 1e-16) break;
  }
  return sum;
}

// A small deterministic PRNG for the Monte Carlo (mulberry32).
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Bit-level Monte Carlo of codeword pairs on a 4-lane link: codewords A and B interleaved symbol by symbol, symbol
// pairs round robin over 8 PCS lanes, 2 PCS lanes bit-multiplexed per physical lane. Error bursts on each lane: Poisson
// count per pair window, uniform start, geometric length in PAM4 symbols, each errored PAM4 symbol one of its two bits.
// Returns the share of codewords (A and B) with more than 15 symbol errors.
function monteCarloUncorrectable(laneBer: number[], meanBits: number, windows: number, seed: number): number {
  const rand = rng(seed);
  const pamPerWindow = (2 * RS_N * 10) / 4 / 2; // PAM4 symbols of one lane during a codeword pair
  const q = meanBits <= 1 ? 0 : 1 - 1 / meanBits;
  const poisson = (mean: number) => {
    let k = 0;
    let p = Math.exp(-mean);
    let c = p;
    const u = rand();
    while (u > c) {
      k++;
      p *= mean / k;
      c += p;
    }
    return k;
  };
  let bad = 0;
  for (let w = 0; w < windows; w++) {
    const hit = [new Set<number>(), new Set<number>()];
    for (let lane = 0; lane < 4; lane++) {
      const events = poisson((laneBer[lane]! * 2 * pamPerWindow) / Math.max(1, meanBits));
      for (let e = 0; e < events; e++) {
        const start = Math.floor(rand() * pamPerWindow);
        let L = 1;
        while (rand() < q) L++;
        for (let j = start; j < start + L; j++) {
          const bit = 2 * (j % pamPerWindow) + (rand() < 0.5 ? 0 : 1);
          const pcs = bit % 2;
          const symbol = Math.floor(Math.floor(bit / 2) / 10); // symbol slot on that PCS lane: A, B, A, B, ...
          hit[symbol % 2]!.add((lane * 2 + pcs) * 100000 + symbol);
        }
      }
    }
    for (const h of hit) if (h.size > RS_T) bad++;
  }
  return bad / (2 * windows);
}

describe('RS(544,514) codeword statistics', () => {
  it('independent bit errors: the uncorrectable rate is the binomial tail (within the Poisson approximation)', () => {
    for (const ber of [1e-4, 2e-4, 2.4e-4, 5e-4, 1e-3]) {
      const model = codewordStats(
        4,
        [0, 1, 2, 3].map(() => ({ bitsPerS: ber * LANE_BPS, meanBits: 1 })),
      ).pUncorrectable;
      const exact = binomialUncorrectable(ber);
      expect(model / exact, `BER ${ber}: model ${model}, binomial ${exact}`).toBeGreaterThan(0.95);
      expect(model / exact, `BER ${ber}: model ${model}, binomial ${exact}`).toBeLessThan(1.35);
    }
    // The clone's worst lane (2.2e-4 on one lane, clean others) with independent errors: never, in practice.
    expect(oneLane(2.2e-4, 1).uncorrectablePerS * 86400 * 365).toBeLessThan(1e-6);
  });

  // The model takes error events to hit disjoint symbols; two bursts in the same symbols are rare at the densities of the
  // scenarios (the clone's worst lane: ~0.05 events per codeword pair). These points have 0.06..0.8 events per pair and
  // are within 15% (at 2..4 events per pair, e.g. 1.2e-2 in bursts of 8 or 16, the model is 15..30% high).
  it('bursts: the uncorrectable share matches a bit-level Monte Carlo of the 200GBASE-R layout', () => {
    for (const [ber, meanBits, seed] of [
      [1e-3, 48, 1],
      [6e-3, 20, 2],
      [4e-3, 24, 3],
      [2e-3, 32, 4],
    ] as const) {
      const model = oneLane(ber, meanBits).pUncorrectable;
      const mc = monteCarloUncorrectable([0, 0, ber, 0], meanBits, 200_000, seed);
      expect(mc, `BER ${ber} burst ${meanBits}`).toBeGreaterThan(2e-3); // > 800 uncorrectable codewords: +-3.5% (1 sigma)
      expect(model / mc, `BER ${ber} burst ${meanBits}: model ${model}, Monte Carlo ${mc}`).toBeGreaterThan(0.85);
      expect(model / mc, `BER ${ber} burst ${meanBits}: model ${model}, Monte Carlo ${mc}`).toBeLessThan(1.15);
    }
  });

  it("uncorrectable codewords per second versus one lane's BER, for a few burst lengths (the numbers the scenarios rest on)", () => {
    const fmt = (x: number) => (x < 1e-6 ? '0' : x.toPrecision(2));
    const table = [1e-5, 5e-5, 1e-4, 2.2e-4].map((ber) => [ber, ...[1, 4, 8, 12, 16].map((b) => fmt(oneLane(ber, b).uncorrectablePerS))].join(' '));
    // Independent errors never fail a codeword at these rates; bursts of ~10 errored PAM4 symbols on one lane at the
    // clone's 2.2e-4 give tens of uncorrectable codewords a second, and the link cannot hold (see the link-drop test).
    expect(table).toMatchInlineSnapshot(`
      [
        "0.00001 0 0 0.00084 0.36 6.4",
        "0.00005 0 0 0.0062 2.0 34",
        "0.0001 0 0 0.019 4.5 72",
        "0.00022 0 0.0000043 0.091 13 1.8e+2",
      ]
    `);
  });

  it('corrected blocks count codewords, not bits / 1.15: independent errors at a low rate are one per codeword', () => {
    const s = codewordStats(2, [
      { bitsPerS: 6000, meanBits: 1 },
      { bitsPerS: 10_000, meanBits: 1 },
    ]);
    expect(s.correctedPerS / 16_000).toBeGreaterThan(0.999);
    expect(s.correctedPerS / 16_000).toBeLessThan(1.0001);
    // A burst of ~8 errored PAM4 symbols usually lands in both interleaved codewords.
    const b = oneLane(1e-7, 8);
    const events = (1e-7 * LANE_BPS) / 8;
    expect(b.correctedPerS / events).toBeGreaterThan(1.3);
    expect(b.correctedPerS / events).toBeLessThan(2);
    expect(b.uncorrectablePerS).toBeLessThan(1e-4);
    expect(CODEWORDS_PER_S).toBe(212.5e9 / 5440);
  });
});

describe('burstBits', () => {
  it('is log-log between its points, held beyond them, and 1 (independent errors) when a scenario has none', () => {
    const clone = loadScenario('failing-clone'); // [[1e-7, 1.5], [1.5e-4, 7], [2.2e-4, 11], [3e-4, 18]]
    expect(burstBitsAt(clone, 1e-9)).toBeCloseTo(1.5, 1);
    expect(burstBitsAt(clone, 1.5e-4)).toBeCloseTo(7, 1);
    expect(burstBitsAt(clone, Math.sqrt(1.5e-4 * 2.2e-4))).toBeCloseTo(Math.sqrt(7 * 11), 1);
    expect(burstBitsAt(clone, 1e-2)).toBeCloseTo(18, 1);
    expect(burstBitsAt(loadScenario('good-qsfp112'), 1e-5)).toBe(1);
  });
});

describe('the link drops when uncorrectable codewords come two within 500 us', () => {
  // A clean cable with a scripted uncorrectable-codeword rate (the documented uncorrectablePerS override).
  function scenarioWith(uncPerS: number): string {
    const spec = loadScenario('good-qsfp56');
    const file = join(mkdtempSync(join(tmpdir(), 'cq-unc-')), `unc-${uncPerS}.json`);
    writeFileSync(file, JSON.stringify({ ...spec, name: `unc-${String(uncPerS).replace('.', '-')}`, uncorrectablePerS: [[0, uncPerS]] }));
    return file;
  }

  it('at 10 per second the hazard is 10^2 x 500 us = 0.05/s: drops come after ~20 s on average', async () => {
    const waits: number[] = [];
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const { lab, clock } = newLab(scenarioWith(10), { seed });
      await startLinkLoad(lab);
      while (lab.state('spark-a').linkUp && lab.timeS() < 600) await clock.sleep(1000);
      waits.push(lab.timeS());
    }
    const mean = waits.reduce((a, b) => a + b, 0) / waits.length;
    expect(mean).toBeGreaterThan(8);
    expect(mean).toBeLessThan(45);
  });

  it('at 0.05 per second CRC errors accumulate and the link stays up', async () => {
    const { lab, clock } = newLab(scenarioWith(0.05));
    await startLinkLoad(lab);
    await clock.sleep(1800_000);
    const s = lab.state('spark-a');
    expect(s.linkUp).toBe(true);
    expect(s.port.linkDown).toBe(0);
    expect(s.port.uncorrectable).toBeGreaterThan(60);
    expect(s.port.crcFrames).toBeGreaterThan(s.port.uncorrectable * 0.8);
    expect(s.port.crcFrames).toBeLessThanOrEqual(2 * s.port.uncorrectable);
    expect(s.port.pcsSymbolErrors).toBe(s.port.crcFrames);
  });
});
