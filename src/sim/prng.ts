// Deterministic noise for the simulated lab: every random draw is a pure function of (seed, stream, index),
// so the same scenario and seed give the same counters however often, or in whatever order, they are read.

// 32-bit integer hash (a murmur3 finaliser); small input changes scatter over the whole output.
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

// A stable small integer for a name (node, counter), to key noise streams.
export function streamId(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

// Uniform in [0, 1) keyed by integers.
export function uniform(seed: number, ...keys: number[]): number {
  let h = mix32(seed ^ 0x9e3779b9);
  for (const k of keys) h = mix32(h ^ mix32((k | 0) + 0x7f4a7c15));
  return h / 4294967296;
}

// Standard normal draw keyed by integers (Box-Muller over two keyed uniforms).
export function normal(seed: number, ...keys: number[]): number {
  const u1 = Math.max(uniform(seed, ...keys, 1), 1e-12);
  const u2 = uniform(seed, ...keys, 2);
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

// Poisson-ish count with mean `mean`: exact inverse CDF for small means, a rounded normal above 30.
export function poisson(mean: number, seed: number, ...keys: number[]): number {
  if (!(mean > 0)) return 0;
  if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * normal(seed, ...keys)));
  const u = uniform(seed, ...keys);
  let k = 0;
  let p = Math.exp(-mean);
  let cdf = p;
  while (u > cdf && k < 200) {
    k++;
    p *= mean / k;
    cdf += p;
  }
  return k;
}

// Binomial(n, p) count keyed by integers: exact inverse CDF while the smaller tail's mean is at most 30 (counted from
// the rarer outcome), a rounded normal clamped to [0, n] above that.
export function binomial(n: number, p: number, seed: number, ...keys: number[]): number {
  if (!(n > 0) || !(p > 0)) return 0;
  if (p >= 1) return n;
  if (p > 0.5) return n - binomial(n, 1 - p, seed, ...keys);
  const mean = n * p;
  if (mean > 30) return Math.min(n, Math.max(0, Math.round(mean + Math.sqrt(mean * (1 - p)) * normal(seed, ...keys))));
  const u = uniform(seed, ...keys);
  const odds = p / (1 - p);
  let k = 0;
  let pk = Math.exp(n * Math.log1p(-p));
  let cdf = pk;
  while (u > cdf && k < n && k < 400) {
    pk *= ((n - k) / (k + 1)) * odds;
    k++;
    cdf += pk;
  }
  return k;
}

// Failures before the r-th success at success probability p (negative binomial; a sum of r geometric counts), keyed by
// integers: the geometric counts one by one up to r = 30, a rounded normal above.
export function negativeBinomial(r: number, p: number, seed: number, ...keys: number[]): number {
  if (!(r > 0) || p >= 1) return 0;
  if (r > 30) {
    const mean = (r * (1 - p)) / p;
    return Math.max(0, Math.round(mean + (Math.sqrt(r * (1 - p)) / p) * normal(seed, ...keys)));
  }
  const logQ = Math.log1p(-p);
  let sum = 0;
  for (let i = 0; i < r; i++) sum += Math.floor(Math.log(1 - uniform(seed, ...keys, i)) / logQ);
  return sum;
}
