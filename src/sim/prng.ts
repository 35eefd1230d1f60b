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
