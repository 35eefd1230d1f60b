// OpenHTF-style InRange: a limit with a marginal band that grades a value and prints itself next to it.
import type { Limit } from '../domain/limit.js';
import type { Grade } from '../domain/outcome.js';
import type { RuleDeclaration } from './definitions.js';
import { ruleOf } from './versions.js';
import { formatNumber } from '../domain/number-format.js';

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

const withUnit = (v: number, unit: string) => (unit === 'x' ? `${formatNumber(v)}x` : `${formatNumber(v)} ${unit}`);

// The bands of a limit in words, e.g. "marginal below 2, fail below 1" or "fail at 1 or more", then the settings of
// how the rule is measured when the limit carries them ("60-s windows held 10 s").
export function formatLimit(limit: Limit, decl: RuleDeclaration | undefined = ruleOf(limit.rule)): string {
  const n = formatNumber;
  const bands =
    limit.direction === 'min'
      ? limit.marginal !== undefined
        ? `marginal below ${n(limit.marginal)}, fail below ${n(limit.fail)}`
        : `fail below ${n(limit.fail)}`
      : limit.marginal !== undefined
        ? `marginal at ${n(limit.marginal)} or more, fail at ${n(limit.fail)} or more`
        : `fail at ${n(limit.fail)} or more`;
  const note = limit.params && Object.keys(limit.params).length ? decl?.limitNote?.(limit.params) : undefined;
  return note ? `${bands}; ${note}` : bands;
}

// Grade a value and say why in one line, e.g. "margin 2.7 decades >= 2 (marginal below 2, fail below 1)".
export function checkLimit(limit: Limit, value: number, decl: RuleDeclaration | undefined = ruleOf(limit.rule)): { grade: Grade; text: string } {
  const grade = gradeValue(limit, value);
  return { grade, text: sayLimit(limit, value, grade, undefined, decl) };
}

// The same sentence for a grade decided by the rule itself (two bounds, floors): the relation to the edge is stated
// only when the value is on the side the grade says, else the value is given with the limit and the rule explains.
export function sayLimit(
  limit: Limit,
  value: number,
  grade: Grade,
  valueText = withUnit(value, limit.unit),
  decl: RuleDeclaration | undefined = ruleOf(limit.rule),
): string {
  const label = decl?.label ?? limit.rule;
  if (gradeValue(limit, value) !== grade) return `${label} ${valueText} (${formatLimit(limit, decl)})`;
  const edge = grade === 'FAIL' ? limit.fail : (limit.marginal ?? limit.fail);
  const rel = limit.direction === 'max' ? (grade === 'PASS' ? '<' : '>=') : grade === 'PASS' ? '>=' : '<';
  return `${label} ${valueText} ${rel} ${formatNumber(edge)} (${formatLimit(limit, decl)})`;
}
