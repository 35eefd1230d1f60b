// Rules version 1, FROZEN: a copy of what cablequal 0.1.0 graded with (see engine.ts). Do not change it.
// OpenHTF-style InRange: a limit with a marginal band that grades a value and prints itself next to it.
import type { Limit } from './types.js';
import type { Grade } from '../../domain/outcome.js';

// Thresholds are the first bad value on the high side, so each band is half-open [a, b):
//   max: FAIL when value >= fail, MARGINAL when value >= marginal (crc-errors fail 1 => one error fails; lane-ratio fails at exactly 1000)
//   min: FAIL when value <  fail, MARGINAL when value <  marginal (fec-margin: FAIL below 1 decade, MARGINAL below 2)
export function gradeValue(limit: Limit, value: number): Grade {
  if (Number.isNaN(value)) throw new RangeError(`${limit.rule}: cannot grade NaN`);
  if (limit.direction === 'max') {
    if (value >= limit.fail) return 'FAIL';
    return limit.marginal !== undefined && value >= limit.marginal ? 'MARGINAL' : 'PASS';
  }
  if (value < limit.fail) return 'FAIL';
  return limit.marginal !== undefined && value < limit.marginal ? 'MARGINAL' : 'PASS';
}

// Numbers as a reader wants them on a certificate: integers exact, others to about three figures.
export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : v < 0 ? '-inf' : 'NaN';
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  if (a >= 100) return v.toFixed(1);
  if (a >= 0.01) return String(Number(v.toPrecision(3)));
  return v.toExponential(2);
}

const withUnit = (v: number, unit: string) => (unit === 'x' ? `${formatNumber(v)}x` : `${formatNumber(v)} ${unit}`);

// The bands of a limit in words, e.g. "marginal below 2, fail below 1" or "fail at 1 or more".
export function formatLimit(limit: Limit): string {
  const n = formatNumber;
  if (limit.direction === 'min') {
    return limit.marginal !== undefined ? `marginal below ${n(limit.marginal)}, fail below ${n(limit.fail)}` : `fail below ${n(limit.fail)}`;
  }
  return limit.marginal !== undefined ? `marginal at ${n(limit.marginal)} or more, fail at ${n(limit.fail)} or more` : `fail at ${n(limit.fail)} or more`;
}

// What a rule's value is called in a sentence.
const LABELS: Record<string, string> = {
  'crc-errors': 'CRC errors',
  'post-fec-errors': 'post-FEC errors',
  'link-down-events': 'link down events',
  'fec-margin': 'margin',
  'lane-ratio': 'lane ratio',
  'ib-write-bw-sum': 'ib_write_bw sum',
  'loopback-floor': 'loopback',
  'gpu-util-min': 'GPU utilisation',
};

// Grade a value and say why in one line, e.g. "margin 2.7 decades >= 2 (marginal below 2, fail below 1)".
export function checkLimit(limit: Limit, value: number): { grade: Grade; text: string } {
  const grade = gradeValue(limit, value);
  const edge = grade === 'FAIL' ? limit.fail : (limit.marginal ?? limit.fail);
  const rel = limit.direction === 'max' ? (grade === 'PASS' ? '<' : '>=') : grade === 'PASS' ? '>=' : '<';
  const label = LABELS[limit.rule] ?? limit.rule;
  return { grade, text: `${label} ${withUnit(value, limit.unit)} ${rel} ${formatNumber(edge)} (${formatLimit(limit)})` };
}
