// Repetition summaries for the benchmark: every figure is the median of several runs, with min and max beside it.

// One figure over its repetitions.
export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
  values: number[];
}

// Median (mean of the two middle values for an even count), min and max; nulls (figure not available) are dropped.
export function summarize(values: readonly (number | null)[]): Summary | null {
  const v = values.filter((x): x is number => x !== null && Number.isFinite(x));
  if (v.length === 0) return null;
  const s = [...v].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]!, n: s.length, values: v };
}

// Summarise each numeric field of a list of result objects.
export function summarizeFields<T extends object>(runs: readonly T[], fields: readonly (keyof T & string)[]): Record<string, Summary | null> {
  const out: Record<string, Summary | null> = {};
  for (const f of fields) out[f] = summarize(runs.map((r) => (typeof r[f] === 'number' ? (r[f] as number) : null)));
  return out;
}

// Milliseconds as the tables print them.
export function fmt(x: number | null | undefined, digits = 1): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return 'n/a';
  return x >= 100 ? x.toFixed(0) : x.toFixed(digits);
}

// `median (min–max)` of a summary.
export function fmtSummary(s: Summary | null | undefined, digits = 1): string {
  return s ? `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})` : 'n/a';
}
