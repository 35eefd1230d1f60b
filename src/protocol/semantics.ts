// What a JSON Schema cannot say about a protocol: the order its phases must run in (what each phase needs from an
// earlier one, as src/run/qualify.ts runs them), and the limits the numbers put on each other.
import type { Limit } from '../domain/limit.js';
import type { Phase } from './types.js';

// One problem: the field at fault and what it must be.
export interface SemanticProblem {
  path: string;
  expected: string;
  got?: unknown;
}

// The most samples per node a protocol may take (sum of sampled durations / samplingIntervalS): at 1.3 kB of journal
// and about 3.3 kB of grading memory per two-node tick (BENCHMARKS.md: 57 MB and 220 MB for 42,500 ticks), 300,000
// ticks are about 400 MB of journal and 1 GB to grade: a 72-h soak at 1 Hz, or 8 h at 10 Hz.
export const MAX_TICKS = 300_000;

// What each phase kind needs to have run before it: preflight finds the cage and rail addresses every later step
// uses; identity reads the EEPROM and starts the sampling a soak is graded on; ib_write_bw's sum is graded only when
// a loopback before it showed every rail fine (else a throttled NIC would pass as a slow cable).
const NEEDS: Partial<Record<Phase['kind'], { kind: Phase['kind']; why: string }>> = {
  soak: { kind: 'identity', why: 'sampling starts when identity has read the EEPROM' },
  ib_write_bw: { kind: 'loopback', why: 'its sum is graded only when loopback showed every rail fine' },
};

// Phase order: preflight first and once, identity at most once, each phase after what it needs, at least one soak.
export function phaseOrderProblems(phases: readonly Phase[]): SemanticProblem[] {
  const out: SemanticProblem[] = [];
  phases.forEach((p, i) => {
    const at = `phases[${i}].kind`;
    if (i === 0 && p.kind !== 'preflight') out.push({ path: at, expected: '"preflight" first (every later phase uses the cage and rail addresses it finds)', got: p.kind });
    if (i > 0 && p.kind === 'preflight') out.push({ path: at, expected: 'preflight once, as the first phase', got: p.kind });
    if (p.kind === 'identity' && phases.slice(0, i).some((q) => q.kind === 'identity')) out.push({ path: at, expected: 'identity once (sampling starts there)', got: p.kind });
    const need = NEEDS[p.kind];
    if (need && !phases.slice(0, i).some((q) => q.kind === need.kind)) out.push({ path: at, expected: `${/^[aeiou]/.test(need.kind) ? 'an' : 'a'} ${need.kind} phase before ${p.kind} (${need.why})`, got: p.kind });
  });
  if (!phases.some((p) => p.kind === 'soak')) out.push({ path: 'phases', expected: 'at least one soak phase (the cable is graded on its soaks)', got: phases.map((p) => p.kind).join(',') });
  return out;
}

// Windows at least one sampling interval long, and no more samples than a controller can journal and grade.
// `pathOf` names where a limit came from in the file (a default limit has no place of its own).
export function samplingProblems(phases: readonly Phase[], limits: readonly Limit[], intervalS: number, pathOf: (rule: string) => string): SemanticProblem[] {
  const out: SemanticProblem[] = [];
  for (const l of limits) {
    const w = l.params?.['windowS'];
    if (w !== undefined && w < intervalS) out.push({ path: `${pathOf(l.rule)}.windowS`, expected: `a window of at least one sampling interval (${intervalS} s)`, got: w });
  }
  const sampledS = phases.reduce((s, p) => s + (p.kind === 'loopback' || p.kind === 'ib_write_bw' || p.kind === 'soak' ? p.durationS : 0), 0);
  const ticks = Math.ceil(sampledS / intervalS);
  if (ticks > MAX_TICKS) {
    out.push({ path: 'samplingIntervalS', expected: `at most ${MAX_TICKS} samples per node (load phases ${sampledS} s / samplingIntervalS): raise samplingIntervalS or shorten the soaks`, got: ticks === Infinity ? 'no limit' : `${intervalS} (${ticks} samples)` });
  }
  return out;
}
