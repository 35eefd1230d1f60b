// What a protocol must run to qualify a cable, declared once (src/rules/qualification.ts): the shipped protocols
// against it, each minimum on both sides, and the zero-error bound a soak's own duration allows.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProtocol } from '../../src/protocol/load.js';
import { QUALIFICATION_MINIMUMS, qualificationShortfalls, zeroErrorBound, type ClaimPhase } from '../../src/rules/qualification.js';

const shipped = (name: string) => {
  const file = join(import.meta.dirname, '..', '..', 'protocols', `${name}.json`);
  return parseProtocol(readFileSync(file, 'utf8'), file).phases;
};

// The default burn-in's phases, as data (soaks of 600 s idle and 3600 s loaded).
const FULL: ClaimPhase[] = [
  { kind: 'preflight' },
  { kind: 'identity' },
  { kind: 'loopback', durationS: 10 },
  { kind: 'ib_write_bw', durationS: 30 },
  { kind: 'nccl' },
  { kind: 'soak', durationS: 600, gpuLoad: false, linkLoad: true },
  { kind: 'soak', durationS: 3600, gpuLoad: true, linkLoad: true },
];
const edit = (i: number, change: Partial<ClaimPhase>) => FULL.map((p, k) => (k === i ? { ...p, ...change } : p));

describe('what a protocol must run to qualify a cable', () => {
  it('the default burn-in qualifies; the quick protocol is a set-up check and says why', () => {
    expect(qualificationShortfalls(shipped('spark-burnin'))).toEqual([]);
    expect(qualificationShortfalls(shipped('quick'))).toEqual([
      'its soak with link load and idle GPUs runs 60 s; a qualification needs 10 min',
      'its soak with link load and the GPU load on both nodes runs 3 min; a qualification needs 60 min',
    ]);
  });

  it('the minimums: a loaded soak of 60 minutes with GPU load, an idle soak of 10, both with link load, and the benchmarks', () => {
    expect(QUALIFICATION_MINIMUMS).toEqual({ benchmarks: ['ib_write_bw', 'nccl'], idleSoakS: 600, loadedSoakS: 3600 });
    expect(qualificationShortfalls(FULL)).toEqual([]);
    expect(qualificationShortfalls(edit(6, { durationS: 3599 }))).toEqual([
      'its soak with link load and the GPU load on both nodes runs 3599 s; a qualification needs 60 min',
    ]);
    expect(qualificationShortfalls(edit(6, { gpuLoad: false }))).toEqual([
      'no soak with link load and the GPU load on both nodes; a qualification needs 60 min',
    ]);
    expect(qualificationShortfalls(edit(6, { linkLoad: false }))).toEqual([
      'no soak with link load and the GPU load on both nodes; a qualification needs 60 min',
    ]);
    expect(qualificationShortfalls(edit(5, { durationS: 599 }))).toEqual(['its soak with link load and idle GPUs runs 599 s; a qualification needs 10 min']);
    expect(qualificationShortfalls(FULL.filter((p) => p.kind !== 'nccl'))).toEqual(["no nccl phase (NVIDIA's benchmarks come first)"]);
    expect(qualificationShortfalls(FULL.filter((p) => p.kind !== 'ib_write_bw'))).toEqual(["no ib_write_bw phase (NVIDIA's benchmarks come first)"]);
    // A longer burn-in still qualifies.
    expect(qualificationShortfalls(edit(6, { durationS: 7200 }))).toEqual([]);
  });

  it("the zero-error bound of a soak's own duration: 3.9e-15 over 60 minutes, 7.8e-14 over the quick protocol's 3", () => {
    expect(zeroErrorBound(3600).duration).toBe('60 min');
    expect(zeroErrorBound(3600).ber.toExponential(1)).toBe('3.9e-15');
    expect(zeroErrorBound(180).duration).toBe('3 min');
    expect(zeroErrorBound(180).ber.toExponential(1)).toBe('7.8e-14');
    // -ln(0.05) / bits, the exact Poisson 95% upper bound of zero events.
    expect(zeroErrorBound(60).ber).toBeCloseTo(-Math.log(0.05) / (60 * 212.5e9), 25);
  });
});
