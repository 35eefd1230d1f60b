// What a run may claim. A qualification is the burn-in docs/grading.md describes, run whole: NVIDIA's benchmarks
// (ib_write_bw on both rails, NCCL all_reduce_perf), 10 minutes of full link load with idle GPUs, then 60 minutes of
// full link load with GPUs loaded on both nodes (the clone that motivates the harness failed only there, 3.1 minutes
// into the load, after 101 clean idle minutes). A protocol that runs less (protocols/quick.json: 1 and 3 minutes) is a
// set-up check: it shows the lab, the nodes and the tools work, and its FAIL is a failure, but its PASS qualifies no
// cable. The minimums are declared here once; the record, the reports, the store and `--json` read the run's kind.
import { SERIAL_RATE_BPS, berBounds } from '../analysis/counters.js';
import { formatNumber } from '../domain/number-format.js';

// What a protocol must run for its verdict to qualify a cable.
export const QUALIFICATION_MINIMUMS = {
  // NVIDIA's benchmarks, each a phase of its own.
  benchmarks: ['ib_write_bw', 'nccl'],
  // A soak with link load and the GPUs idle, at least this long (s).
  idleSoakS: 600,
  // A soak with link load and the GPU load on both nodes, at least this long (s): the phase a PASS is stated for.
  loadedSoakS: 3600,
} as const;

// A protocol phase as the minimums read it (src/protocol's phases fit).
export interface ClaimPhase {
  kind: string;
  durationS?: number;
  gpuLoad?: boolean;
  linkLoad?: boolean;
}

// Seconds as a reader says them, never rounded across a minimum: "60 s", "3 min", "60 min", "3599 s".
function spoken(s: number): string {
  return s >= 120 && s % 60 === 0 ? `${s / 60} min` : `${formatNumber(s)} s`;
}

// What a protocol's phases lack to qualify a cable, one sentence per minimum not met; none when it qualifies.
export function qualificationShortfalls(phases: readonly ClaimPhase[]): string[] {
  const m = QUALIFICATION_MINIMUMS;
  const out = m.benchmarks.filter((k) => !phases.some((p) => p.kind === k)).map((k) => `no ${k} phase (NVIDIA's benchmarks come first)`);
  const soaks = phases.filter((p) => p.kind === 'soak' && p.linkLoad !== false);
  for (const [gpu, minS, what] of [
    [false, m.idleSoakS, 'link load and idle GPUs'],
    [true, m.loadedSoakS, 'link load and the GPU load on both nodes'],
  ] as const) {
    const longest = Math.max(0, ...soaks.filter((p) => (p.gpuLoad === true) === gpu).map((p) => p.durationS ?? 0));
    if (longest < minS)
      out.push(`${longest ? `its soak with ${what} runs ${spoken(longest)}` : `no soak with ${what}`}; a qualification needs ${spoken(minS)}`);
  }
  return out;
}

// What zero errors over `seconds` at the serial rate (212.5 Gb/s) bound the BER below (exact Poisson 95% upper bound),
// and that duration as a reader says it: every "zero errors bound" sentence is made of the soak's own duration.
export function zeroErrorBound(seconds: number): { ber: number; duration: string } {
  return { ber: berBounds(0, seconds * SERIAL_RATE_BPS).ub95, duration: spoken(seconds) };
}
