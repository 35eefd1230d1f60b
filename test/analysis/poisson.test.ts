import { describe, expect, it } from 'vitest';
import { chiSquareQuantile, gammaP, gammaQuantile, lnGamma, poissonUpperBound } from '../../src/analysis/poisson.js';

describe('exact Poisson upper bound', () => {
  it('matches chi2inv(0.95, 2k+2)/2 from tables', () => {
    expect(poissonUpperBound(0)).toBeCloseTo(2.9957, 4); // = -ln(0.05)
    expect(poissonUpperBound(0)).toBeCloseTo(-Math.log(0.05), 12);
    expect(poissonUpperBound(1)).toBeCloseTo(4.7439, 4);
    expect(poissonUpperBound(10)).toBeCloseTo(16.962, 3);
    expect(poissonUpperBound(100)).toBeCloseTo(118.079, 3);
  });

  it('is where P(X <= k; UB) = 0.05 (checked by summing the Poisson terms)', () => {
    for (const k of [0, 1, 3, 7, 25]) {
      const lam = poissonUpperBound(k);
      let term = Math.exp(-lam);
      let cdf = term;
      for (let i = 1; i <= k; i++) cdf += term *= lam / i;
      expect(cdf).toBeCloseTo(0.05, 10);
    }
  });

  it('stays continuous where the large-count approximation takes over', () => {
    const below = gammaQuantile(0.95, 1e5);
    const above = gammaQuantile(0.95, 1e5 + 1e-6);
    expect(Math.abs(above - below) / below).toBeLessThan(1e-8);
    // large counts: the bound is about k + 1.645 sqrt(k)
    const k = 4e10;
    expect(poissonUpperBound(k) - k).toBeCloseTo(1.6449 * Math.sqrt(k), -2);
  });

  it('chi-square quantiles agree with published tables', () => {
    expect(chiSquareQuantile(0.95, 1)).toBeCloseTo(3.8415, 4);
    expect(chiSquareQuantile(0.05, 10)).toBeCloseTo(3.9403, 4);
    expect(chiSquareQuantile(0.975, 3)).toBeCloseTo(9.3484, 4);
    expect(chiSquareQuantile(0.99, 30)).toBeCloseTo(50.892, 3);
  });

  it('gamma helpers: lnGamma and P(a, x) at known points', () => {
    expect(lnGamma(5)).toBeCloseTo(Math.log(24), 12);
    expect(lnGamma(0.5)).toBeCloseTo(Math.log(Math.sqrt(Math.PI)), 12);
    expect(gammaP(1, 2)).toBeCloseTo(1 - Math.exp(-2), 14);
    expect(gammaP(3, 10)).toBeCloseTo(1 - Math.exp(-10) * (1 + 10 + 50), 13);
  });

  it('refuses a negative count', () => {
    expect(() => poissonUpperBound(-1)).toThrow(RangeError);
  });
});
