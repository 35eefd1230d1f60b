// Every number format a sentence, a certificate, a CSV or a status line uses, so one value reads the same everywhere.
// Each is part of what old certificates say (their verdict sentences are re-graded byte for byte): change none of them;
// add a new one instead.

// Exponent form with d decimals ("2.4e-4" for d = 1): the BERs of the rules' sentences and the status line.
export const sci = (x: number, d = 1): string => x.toExponential(d);

// BER and other tiny quantities: two significant digits in exponent form ("2.9e-13"), "0" for zero.
export function fmtExp(v: number | null | undefined, digits = 2): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  if (v === 0) return '0';
  return v.toExponential(digits - 1).replace('e+', 'e');
}

// Plain quantities (Gb/s, °C, decades) with a fixed number of decimals.
export function fmtFixed(v: number | null | undefined, decimals = 1): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  return v.toFixed(decimals);
}

// Counts, grouped for reading ("402,000,000").
export function fmtCount(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  return Math.round(v).toLocaleString('en-US');
}

// Ratios that span decades: exponent form above 1e4.
export function fmtRatio(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  return Math.abs(v) >= 1e4 ? fmtExp(v, 2) : v.toFixed(1);
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
