// One second of one receiver's error counters, drawn from one model so that they agree with each other as a real
// port's do. Error events come to each lane as a Poisson stream; each is a burst of errored bits of geometric length
// (mean: the scenario's burstBits at the lane's BER, 1 = independent bit errors), so a lane's count is compound
// Poisson (overdispersed: variance/mean = 2 x mean burst - 1). The codewords those events hit, and which of them are
// uncorrectable, follow the codeword statistics of fec.ts: an event hits one codeword, or both interleaved codewords
// when it is long enough, and a codeword with 16 or more errored symbols is uncorrectable. Hence, every second, a
// corrected codeword holds at least one of the bits counted, and an uncorrectable one at least 16.
import type { CodewordStats, LaneErrors } from './fec.js';
import { binomial, negativeBinomial, poisson } from './prng.js';

// What one receiver counted in one second.
export interface SecondCounts {
  // Errored bits per lane (rx_err_lane_N_phy); rx_corrected_bits_phy counts their sum, as on the real ports
  // (samples/ethtool-stats/mlx5-100g-annotated-..., gx10-blog-lane-errors-partial: corrected bits = the lanes' sum).
  laneBits: number[];
  corrected: number; // codewords with 1..15 errored symbols
  uncorrectable: number; // codewords with 16 or more
}

// Keys of the draws (the lanes' keep 0..3, so that independent bit errors draw what they drew before bursts were
// modelled).
const LONG_EVENTS = 15;
const LONG_BITS = 16;
const SECOND_HITS = 18;
const UNCORRECTABLE = 12;

// Draw one second (index k) of one receiver (stream key) whose lanes run at these error rates, with their expected
// codeword statistics `stats` (fec.ts codewordStats of the same lanes).
export function drawSecond(lanes: LaneErrors[], stats: CodewordStats, seed: number, key: number, k: number): SecondCounts {
  const laneBits: number[] = [];
  let events = 0; // error events this second, all lanes
  let longEvents = 0; // of them, bursts of two bits or more
  let eventRate = 0; // expected events per second
  let longRate = 0; // expected bursts of two bits or more per second
  let bits = 0;
  lanes.forEach((le, l) => {
    const mean = Math.max(1, le.meanBits);
    const rate = le.bitsPerS > 0 ? le.bitsPerS / mean : 0;
    const n = poisson(rate, seed, key, l, k);
    // P(a burst goes on past its first bit) = 1 - 1/mean; what follows the first of those bits is again geometric.
    const goOn = 1 - 1 / mean;
    const n2 = binomial(n, goOn, seed, key, LONG_EVENTS, l, k);
    const b = n + n2 + negativeBinomial(n2, 1 / mean, seed, key, LONG_BITS, l, k);
    laneBits.push(b);
    bits += b;
    events += n;
    longEvents += n2;
    eventRate += rate;
    longRate += rate * goOn;
  });
  // Codewords hit: expected codewords with an errored symbol per event. Below 1, events share codewords (high rates)
  // or hit none of their bits' codewords' symbols twice; above 1, some long bursts reach the second codeword.
  const perEvent = eventRate > 0 ? (stats.correctedPerS + stats.uncorrectablePerS) / eventRate : 0;
  const hit =
    perEvent <= 1
      ? binomial(events, perEvent, seed, key, SECOND_HITS, k)
      : events + binomial(longEvents, longRate > 0 ? Math.min(1, ((perEvent - 1) * eventRate) / longRate) : 0, seed, key, SECOND_HITS, k);
  const shareUncorrectable = stats.uncorrectablePerS > 0 ? stats.uncorrectablePerS / (stats.correctedPerS + stats.uncorrectablePerS) : 0;
  // An uncorrectable codeword holds 16 errored symbols or more (a bit each at least), the others one: the draw keeps to
  // the bits drawn.
  const uncorrectable = Math.min(binomial(hit, shareUncorrectable, seed, key, UNCORRECTABLE, k), Math.floor((bits - hit) / 15));
  return { laneBits, corrected: hit - uncorrectable, uncorrectable };
}
