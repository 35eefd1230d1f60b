// Number formats shared by the certificate, the CSVs and the regression text, so one value reads the same everywhere.

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
