import { describe, expect, it } from 'vitest';
import type { Limit } from '../../src/domain/limit.js';
import { checkLimit, formatLimit, gradeValue } from '../../src/rules/in-range.js';
import { formatNumber } from '../../src/domain/number-format.js';

// The defaults of protocols/*.json (copied here so a change to the files cannot silently move these boundaries).
const L: Record<string, Limit> = {
  crc: { rule: 'crc-errors', direction: 'max', fail: 1, unit: 'errors' },
  postFec: { rule: 'post-fec-errors', direction: 'max', fail: 1, unit: 'errors' },
  linkDown: { rule: 'link-down-events', direction: 'max', fail: 1, unit: 'events' },
  margin: { rule: 'fec-margin', direction: 'min', fail: 1, marginal: 2, unit: 'decades' },
  ratio: { rule: 'lane-ratio', direction: 'max', fail: 1000, marginal: 100, unit: 'x' },
  bw: { rule: 'ib-write-bw-sum', direction: 'min', fail: 170, marginal: 180, unit: 'Gb/s' },
  loop: { rule: 'loopback-floor', direction: 'min', fail: 90, unit: 'Gb/s' },
  gpu: { rule: 'gpu-util-min', direction: 'min', fail: 90, unit: '%' },
};

describe('gradeValue boundaries', () => {
  const cases: [keyof typeof L, number, string][] = [
    ['crc', 0, 'PASS'],
    ['crc', 1, 'FAIL'],
    ['crc', 0.5, 'PASS'],
    ['postFec', 0, 'PASS'],
    ['postFec', 1, 'FAIL'],
    ['linkDown', 0, 'PASS'],
    ['linkDown', 1, 'FAIL'],
    ['linkDown', 4, 'FAIL'],
    ['margin', 2, 'PASS'],
    ['margin', 1.9999, 'MARGINAL'],
    ['margin', 1, 'MARGINAL'],
    ['margin', 0.9999, 'FAIL'],
    ['margin', -3, 'FAIL'],
    ['margin', Infinity, 'PASS'],
    ['ratio', 99.99, 'PASS'],
    ['ratio', 100, 'MARGINAL'],
    ['ratio', 999.9, 'MARGINAL'],
    ['ratio', 1000, 'FAIL'],
    ['ratio', 0, 'PASS'],
    ['bw', 180, 'PASS'],
    ['bw', 179.99, 'MARGINAL'],
    ['bw', 170, 'MARGINAL'],
    ['bw', 169.99, 'FAIL'],
    ['bw', 185.1, 'PASS'],
    ['loop', 90, 'PASS'],
    ['loop', 89.9, 'FAIL'],
    ['loop', 13.1, 'FAIL'],
    ['gpu', 90, 'PASS'],
    ['gpu', 89, 'FAIL'],
  ];
  for (const [k, v, g] of cases) it(`${L[k]!.rule} ${v} -> ${g}`, () => expect(gradeValue(L[k]!, v)).toBe(g));

  it('refuses NaN instead of passing it', () => {
    expect(() => gradeValue(L.margin!, NaN)).toThrow(RangeError);
  });
});

describe('limits print themselves', () => {
  it('formatLimit', () => {
    expect(formatLimit(L.margin!)).toBe('marginal below 2, fail below 1');
    expect(formatLimit(L.ratio!)).toBe('marginal at 100 or more, fail at 1000 or more');
    expect(formatLimit(L.crc!)).toBe('fail at 1 or more');
    expect(formatLimit(L.loop!)).toBe('fail below 90');
  });

  it('checkLimit text on each side of each band', () => {
    expect(checkLimit(L.margin!, 2.7)).toEqual({ grade: 'PASS', text: 'margin 2.7 decades >= 2 (marginal below 2, fail below 1)' });
    expect(checkLimit(L.margin!, 1.5).text).toBe('margin 1.5 decades < 2 (marginal below 2, fail below 1)');
    expect(checkLimit(L.margin!, 0.42).text).toBe('margin 0.42 decades < 1 (marginal below 2, fail below 1)');
    expect(checkLimit(L.ratio!, 95).text).toBe('lane ratio 95x < 100 (marginal at 100 or more, fail at 1000 or more)');
    expect(checkLimit(L.ratio!, 1000)).toEqual({ grade: 'FAIL', text: 'lane ratio 1000x >= 1000 (marginal at 100 or more, fail at 1000 or more)' });
    expect(checkLimit(L.crc!, 0).text).toBe('CRC errors 0 errors < 1 (fail at 1 or more)');
    expect(checkLimit(L.crc!, 3)).toEqual({ grade: 'FAIL', text: 'CRC errors 3 errors >= 1 (fail at 1 or more)' });
    expect(checkLimit(L.bw!, 175.25).text).toBe('ib_write_bw sum 175.3 Gb/s < 180 (marginal below 180, fail below 170)');
  });

  it('formatNumber', () => {
    expect([formatNumber(3), formatNumber(2.7), formatNumber(95.2341), formatNumber(1170.53), formatNumber(3.77e-8), formatNumber(Infinity)]).toEqual([
      '3',
      '2.7',
      '95.2',
      '1170.5',
      '3.77e-8',
      'inf',
    ]);
  });
});
