// How each lane's pre-FEC error rate follows the NIC temperature: errors and seconds binned by temperature, then the
// coolest third of the range seen compared with the hottest third (exact Poisson bounds, so zero counts are honest).
import type { LaneGrowth } from '../domain/record.js';
import { poissonLowerBound, poissonUpperBound } from './poisson.js';

// Temperature bins of half a degree: the NIC sensor reads whole or half degrees, and a soak spans 20-30 degrees.
const BIN_C = 0.5;

interface Bin {
  seconds: number;
  counts: number[];
}

// Binned counts of one receiver over the graded phases; `growth` compares the two ends of the range seen so far.
export class LaneTempBins {
  private readonly bins = new Map<number, Bin>();

  add(tempC: number, seconds: number, counts: readonly number[]): void {
    const key = Math.round(tempC / BIN_C);
    let b = this.bins.get(key);
    if (!b) this.bins.set(key, (b = { seconds: 0, counts: [] }));
    b.seconds += seconds;
    for (let i = 0; i < counts.length; i++) b.counts[i] = (b.counts[i] ?? 0) + counts[i]!;
  }

  // Lowest and highest temperature seen (bin centres), or null before any interval.
  range(): [number, number] | null {
    let lo = Infinity;
    let hi = -Infinity;
    for (const [k, b] of this.bins) {
      if (b.seconds <= 0) continue;
      lo = Math.min(lo, k * BIN_C);
      hi = Math.max(hi, k * BIN_C);
    }
    return lo <= hi ? [lo, hi] : null;
  }

  // Per lane, the hottest third of the range against the coolest third; null when the range is under minSpanC.
  growth(lanes: number, minSpanC: number): LaneGrowth[] | null {
    const r = this.range();
    if (!r || r[1] - r[0] < minSpanC) return null;
    const third = (r[1] - r[0]) / 3;
    const group = (inside: (t: number) => boolean) => {
      const g = { seconds: 0, tempSeconds: 0, lo: Infinity, hi: -Infinity, counts: new Array<number>(lanes).fill(0) };
      for (const [k, b] of this.bins) {
        const t = k * BIN_C;
        if (b.seconds <= 0 || !inside(t)) continue;
        g.seconds += b.seconds;
        g.tempSeconds += t * b.seconds;
        g.lo = Math.min(g.lo, t);
        g.hi = Math.max(g.hi, t);
        for (let i = 0; i < lanes; i++) g.counts[i]! += b.counts[i] ?? 0;
      }
      return g;
    };
    const cool = group((t) => t <= r[0] + third);
    const hot = group((t) => t >= r[1] - third);
    const dT = hot.tempSeconds / hot.seconds - cool.tempSeconds / cool.seconds;
    return Array.from({ length: lanes }, (_, lane) => {
      const kc = cool.counts[lane]!;
      const kh = hot.counts[lane]!;
      const growth = kc === 0 && kh === 0 ? 0 : Math.log10((kh + 0.5) / hot.seconds / ((kc + 0.5) / cool.seconds));
      const lb = kh === 0 ? null : Math.log10(poissonLowerBound(kh, 0.975) / hot.seconds / (poissonUpperBound(kc, 0.975) / cool.seconds));
      return {
        lane,
        coolC: [cool.lo, cool.hi],
        hotC: [hot.lo, hot.hi],
        coolSeconds: cool.seconds,
        hotSeconds: hot.seconds,
        coolErrors: kc,
        hotErrors: kh,
        growthDecades: growth,
        growthLbDecades: lb,
        slopeDecadesPerC: dT > 0 ? growth / dT : 0,
      };
    });
  }
}

// The lane grows by decades with temperature while the other lanes do not (the failing clone's signature): its own
// growth is certain (lower bound) to reach `growingDecades`, and it exceeds the others' median growth by `runawayDecades`.
export function isRunaway(g: readonly LaneGrowth[], lane: number, growingDecades: number, runawayDecades: number): boolean {
  const me = g.find((x) => x.lane === lane);
  if (!me || !isGrowing(me, growingDecades)) return false;
  return me.growthDecades - othersGrowth(g, lane) >= runawayDecades;
}

// The lane's errors certainly grow with temperature by at least `growingDecades` (a steady lane does not).
export function isGrowing(g: LaneGrowth, growingDecades: number): boolean {
  return g.growthLbDecades !== null && g.growthLbDecades >= growingDecades;
}

// Median growth of the other lanes (upper middle), 0 for a single lane.
export function othersGrowth(g: readonly LaneGrowth[], lane: number): number {
  const others = g
    .filter((x) => x.lane !== lane)
    .map((x) => x.growthDecades)
    .sort((a, b) => a - b);
  return others.length ? others[Math.floor(others.length / 2)]! : 0;
}
