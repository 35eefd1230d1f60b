// How much worse one lane is than the others: the three ways a rules version may measure it, over counts or rates
// taken over the same time. A rules version names the one each of its rules uses (src/rules/versions.ts).
import { median } from 'simple-statistics';
import { poissonLowerBound, poissonUpperBound } from './poisson.js';

// The lane with the most errors (the first of equals), or null when no lane has any.
function worstOf(xs: readonly number[]): number | null {
  if (xs.length < 2) return null;
  let lane = 0;
  for (let i = 1; i < xs.length; i++) if (xs[i]! > xs[lane]!) lane = i;
  return xs[lane]! > 0 ? lane : null;
}

// The certain lane ratio (rules version 2 on): the worst lane's 95% lower bound over the 95% upper bound of the other
// lanes' median count (upper middle for an even number), so counting noise never makes a ratio look larger than it is.
// `againstZero`: the others' median is zero, so the ratio is only a lower bound ("at least").
export function certainLaneRatio(counts: readonly number[]): { lane: number; value: number; againstZero: boolean } | null {
  const lane = worstOf(counts);
  if (lane === null) return null;
  const others = counts.filter((_, i) => i !== lane).sort((a, b) => a - b);
  const mid = others[Math.floor(others.length / 2)]!;
  return { lane, value: poissonLowerBound(counts[lane]!) / poissonUpperBound(mid), againstZero: mid === 0 };
}

// The rate ratio (rules version 1): the worst lane's rate over the median of the others' rates, that median floored
// at `floorRate` (one error per phase) so that lanes without errors give a finite ratio.
export function rateLaneRatio(rates: readonly number[], floorRate: number): { lane: number | null; value: number } {
  const lane = worstOf(rates);
  if (lane === null) return { lane: null, value: 0 };
  const others = rates.filter((_, i) => i !== lane);
  return { lane, value: rates[lane]! / Math.max(median(others), floorRate) };
}

// The tick ratio (rules version 1's watch): one tick's worst count over the 95% upper bound of the others' median
// count, rounded (a zero median becomes 3, so quiet ticks never count).
export function tickLaneRatio(counts: readonly number[]): { lane: number; value: number } | null {
  const lane = worstOf(counts);
  if (lane === null) return null;
  const others = counts.filter((_, i) => i !== lane);
  return { lane, value: counts[lane]! / poissonUpperBound(Math.round(median(others)), 0.95, 'exact') };
}
