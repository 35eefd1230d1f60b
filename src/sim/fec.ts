// RS(544,514) codeword statistics of one 200GBASE-R receiver, computed per second from each lane's pre-FEC error rate
// and error-burst length: what the FEC corrects, what it cannot, and when the PCS gives up on the link.
//
// Physics and layout (IEEE 802.3 clause 119 PCS, as public descriptions give it; see docs/simulator.md):
// - A codeword is 544 ten-bit symbols; up to 15 symbol errors are corrected, 16 or more make it uncorrectable.
// - Two codewords (A, B) are interleaved symbol by symbol and handed to 8 PCS lanes as symbol pairs (A_k, B_k),
//   round robin; the PMA bit-multiplexes the 8 PCS lanes onto the physical lanes (2 per lane on a 4-lane QSFP56
//   link, 4 per lane on a 2-lane QSFP112 link). So every codeword is spread over all lanes, and a burst on one lane
//   lands in both codewords: ten consecutive PAM4 symbols of a lane carry about one symbol of each codeword.
// - Pre-FEC errors come in bursts (DFE error propagation in PAM4 receivers): an error event is a run of consecutive
//   errored PAM4 symbols, each with one bit wrong (Gray coding), its length geometric with mean `meanBits`
//   (1 = independent bit errors). The mean burst length is scenario data.
// - The codeword's symbol-error count is then compound Poisson: Poisson error events on each lane during the
//   codeword pair's 51.2 ns, each hitting a number of the codeword's symbols given exactly by the layout above
//   (averaged over where the burst starts). Panjer's recursion gives P(k symbol errors), k = 0..15.

export const RS_N = 544; // symbols per codeword
export const RS_T = 15; // correctable symbols per codeword
const SYMBOL_BITS = 10;
const SERIAL_BPS = 212.5e9; // 200GBASE-R on the wire, all lanes: 4 x 53.125 or 2 x 106.25 Gb/s
// Codewords per second through one receiver (A and B both counted).
export const CODEWORDS_PER_S = SERIAL_BPS / (RS_N * SYMBOL_BITS);
// Seconds a codeword pair (A and B, interleaved) takes on the wire.
const PAIR_S = (2 * RS_N * SYMBOL_BITS) / SERIAL_BPS;
// The PCS lanes of 200GBASE-R.
const PCS_LANES = 8;
// Symbol counts tracked one by one; more hits than this from one burst are lumped (they are uncorrectable anyway).
const X_MAX = 48;

// The PCS's BER monitor: 97 invalid sync headers within 500 us raise hi_ber (a link fault); an uncorrectable codeword
// has the sync headers of its 66b blocks invalidated (20 x 257b = 80 x 66b blocks a codeword), so two uncorrectable
// codewords within 500 us take the link down, on both ends (the peer receives remote fault).
export const HI_BER_WINDOW_S = 500e-6;
const HI_BER_INVALID_SYNC_HEADERS = 97;
// 66b blocks (8 bytes of MAC data each) a codeword carries.
export const BLOCKS_PER_CODEWORD = 80;
// Uncorrectable codewords within the window that raise hi_ber: 2.
export const HI_BER_UNCORRECTABLE = Math.ceil(HI_BER_INVALID_SYNC_HEADERS / BLOCKS_PER_CODEWORD);

// Physical lanes of a cable family.
export function laneCountOf(family: 'QSFP56' | 'QSFP112'): 4 | 2 {
  return family === 'QSFP56' ? 4 : 2;
}

const footprints = new Map<number, number[][]>();

// pmf of the number of codeword-A symbols hit by a burst of L errored PAM4 symbols on one lane (L = 1..), for a
// link of `lanes` physical lanes; index [L][x]. Exact over the layout, averaged over the burst's start.
function burstFootprint(lanes: 4 | 2, L: number): number[] {
  let table = footprints.get(lanes);
  if (!table) footprints.set(lanes, (table = [[1]]));
  while (table.length <= L) table.push(footprintOf(lanes, table.length));
  return table[L]!;
}

function footprintOf(lanes: 4 | 2, L: number): number[] {
  const m = PCS_LANES / lanes; // PCS lanes bit-multiplexed onto one physical lane
  const period = 10 * m; // PAM4 symbols until the A/B pattern of every PCS lane repeats
  const pmf = new Array<number>(X_MAX + 2).fill(0);
  for (let phase = 0; phase < period; phase++) {
    // Errored PAM4 symbols per group: a group is the two (PCS lane, symbol) cells one PAM4 symbol's two bits (2j and
    // 2j + 1, on PCS lanes 2j mod m and 2j + 1 mod m) fall in; both sit in the same symbol index of their PCS lane.
    const groups = new Map<number, number>();
    for (let j = phase; j < phase + L; j++) {
      const b0 = 2 * j;
      const block = Math.floor(Math.floor(b0 / m) / SYMBOL_BITS);
      if (block % 2 !== 0) continue; // codeword B's symbol
      const key = block * m + (b0 % m);
      groups.set(key, (groups.get(key) ?? 0) + 1);
    }
    // Each group's hits: 1 cell if all its errors fell on the same bit lane, else 2.
    let dist = [1];
    for (const n of groups.values()) {
      const one = 2 * 0.5 ** n;
      const next = new Array<number>(dist.length + 2).fill(0);
      for (let x = 0; x < dist.length; x++) {
        next[x + 1]! += dist[x]! * one;
        next[x + 2]! += dist[x]! * (1 - one);
      }
      dist = next;
    }
    for (let x = 0; x < dist.length; x++) pmf[Math.min(x, X_MAX + 1)]! += dist[x]! / period;
  }
  return pmf;
}

// pmf of codeword-A symbols hit by one error event whose length is geometric with mean `meanBits` (>= 1);
// [0..X_MAX] one by one, [X_MAX + 1] = more.
function eventPmf(lanes: 4 | 2, meanBits: number): number[] {
  const key = `${lanes}:${meanBits}`;
  let pmf = eventPmfs.get(key);
  if (!pmf) {
    if (eventPmfs.size > 4096) eventPmfs.clear();
    eventPmfs.set(key, (pmf = eventPmfOf(lanes, meanBits)));
  }
  return pmf;
}
const eventPmfs = new Map<string, number[]>();

function eventPmfOf(lanes: 4 | 2, meanBits: number): number[] {
  const q = meanBits <= 1 ? 0 : 1 - 1 / meanBits; // P(the burst goes on)
  const pmf = new Array<number>(X_MAX + 2).fill(0);
  let pL = 1 - q; // P(L = 1)
  let left = 1;
  for (let L = 1; left > 1e-15; L++) {
    const fp = burstFootprint(lanes, L);
    for (let x = 0; x < fp.length; x++) pmf[x]! += pL * fp[x]!;
    left -= pL;
    pL *= q;
    if (fp[X_MAX + 1]! > 1 - 1e-12) {
      pmf[X_MAX + 1]! += left; // every longer burst hits more than X_MAX symbols
      break;
    }
  }
  return pmf;
}

// One lane's error process at a receiver: raw bit errors per second and mean errored bits per error event.
export interface LaneErrors {
  bitsPerS: number;
  meanBits: number;
}

// Per-second codeword statistics of one receiver.
export interface CodewordStats {
  // Probability that a codeword has k symbol errors, k = 0..15 (the correctable ones).
  pCorrectable: number[];
  pUncorrectable: number;
  correctedPerS: number; // codewords with 1..15 symbol errors
  uncorrectablePerS: number;
}

// Reused by codewordStats (called every simulated second for each receiver).
const scratchF = new Float64Array(X_MAX + 2);
const scratchG = new Float64Array(X_MAX + 1);

// Codeword statistics from each lane's errors (Panjer's recursion over the compound Poisson symbol-error count).
export function codewordStats(lanes: 4 | 2, laneErrors: LaneErrors[]): CodewordStats {
  let lambda = 0;
  const f = scratchF.fill(0);
  for (const le of laneErrors) {
    if (!(le.bitsPerS > 0)) continue;
    const mean = Math.max(1, le.meanBits);
    const l = (le.bitsPerS / mean) * PAIR_S; // error events on this lane during one codeword pair
    const ev = eventPmf(lanes, mean);
    for (let x = 0; x < f.length; x++) f[x]! += l * ev[x]!;
    lambda += l;
  }
  if (lambda === 0) {
    return {
      pCorrectable: [1, ...new Array<number>(RS_T).fill(0)],
      pUncorrectable: 0,
      correctedPerS: 0,
      uncorrectablePerS: 0,
    };
  }
  for (let x = 0; x < f.length; x++) f[x]! /= lambda;
  // g[k] = P(k symbol errors in codeword A) for k <= X_MAX (exact as long as no event hits more than X_MAX).
  const g = scratchG.fill(0);
  g[0] = Math.exp(-lambda * (1 - f[0]!));
  for (let k = 1; k <= X_MAX; k++) {
    let s = 0;
    for (let j = 1; j <= k; j++) s += j * f[j]! * g[k - j]!;
    g[k] = (lambda / k) * s;
  }
  let below = 0;
  for (let k = 0; k <= RS_T; k++) below += g[k]!;
  let tail = 0;
  for (let k = RS_T + 1; k <= X_MAX; k++) tail += g[k]!;
  // Beyond X_MAX: 1 - below - tail where that is above rounding noise, else the first-order mass of events that alone
  // hit more than X_MAX symbols.
  const rest = 1 - below - tail;
  const beyond = rest > 1e-9 ? rest : lambda * f[X_MAX + 1]!;
  const pUnc = Math.min(1, tail + beyond);
  return {
    pCorrectable: Array.from(g.subarray(0, RS_T + 1)),
    pUncorrectable: pUnc,
    correctedPerS: CODEWORDS_PER_S * Math.max(0, below - g[0]!),
    uncorrectablePerS: CODEWORDS_PER_S * pUnc,
  };
}
