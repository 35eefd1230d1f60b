// The time speed-up of the simulated lab (`cablequal sim serve --speed N`, `cablequal run --speed N`), one bound for
// every place that takes it (the options, the run's checks, the scaled clock). From 1 (real time: what a real node
// runs at) to 1000 (the sped-up lab's own work stays within its sampling ticks, BENCHMARKS.md). Below 1 the lab would
// run slower than a real node, which tests nothing more, and a speed near 0 turns every wait into a timer node cannot
// hold (`--speed 1e-300` printed 489 TimeoutOverflowWarning lines, #32 item 6).
export const SPEED_MIN = 1;
export const SPEED_MAX = 1000;

// Why `v` is not a speed-up (one line, without the option's name), or null.
export function speedProblem(v: number): string | null {
  return Number.isFinite(v) && v >= SPEED_MIN && v <= SPEED_MAX ? null : `expected a speed-up from ${SPEED_MIN} (real time) to ${SPEED_MAX}`;
}
