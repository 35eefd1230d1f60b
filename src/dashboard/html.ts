// HTML building blocks of the dashboard. Every string from a cable's EEPROM or a node is untrusted: text and
// attributes go through esc(), URLs through href() (path segments and query values encoded), data for the charts
// through jsonScript() (no `<`, `>`, `&` or line separators left raw inside <script>).
import { escapeXml } from '../report/escape.js';
import { sci } from '../domain/number-format.js';

export const esc = escapeXml;

// A URL built from a path template and untrusted values: each value percent-encoded, the result attribute-escaped.
export function href(path: string, ...values: string[]): string {
  let i = 0;
  return esc(path.replace(/\{\}/g, () => encodeURIComponent(values[i++] ?? '')));
}

// Query string of the given pairs (empty values left out), attribute-escaped.
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${esc(s)}` : '';
}

// JSON for a <script type="application/json"> element: parsed by the page with JSON.parse(textContent).
export function jsonScript(id: string, value: unknown, attrs = ''): string {
  const json = JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
  return `<script type="application/json" id="${esc(id)}"${attrs}>${json}</script>`;
}

export const NAV = [
  ['/', 'Runs'],
  ['/parts', 'Parts & vendors'],
  ['/batches', 'Batches'],
  ['/golden', 'Golden cable'],
  ['/live', 'Live'],
  ['/fleet', 'Fleet'],
] as const;

const CSS = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#1f3b57;color:#fff;padding:8px 16px;display:flex;gap:20px;align-items:center}
header a{color:#fff;text-decoration:none}header a.on{text-decoration:underline}header b{margin-right:12px}
main{padding:12px 16px}
table{border-collapse:collapse;background:#fff;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}th{background:#eef2f6}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.PASS{background:#d8f0d8}.MARGINAL{background:#fff1c2}.FAIL{background:#f8d0d0}.ERROR,.ABORTED{background:#e4e4e4}.running{background:#d8e8f8}
.sim{font-size:11px;background:#eee;border:1px solid #bbb;padding:0 3px;border-radius:3px}
form.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:end;background:#fff;padding:8px;border:1px solid #ddd}
form.filters label{display:flex;flex-direction:column;font-size:12px}
.chart{background:#fff;border:1px solid #ddd;margin:8px 0;padding:4px;display:inline-block}
.out{color:#b00;font-weight:bold}td.reason{min-width:18em;max-width:48em;font-size:12px}.muted{color:#777}.pager a{margin-right:12px}
td.code,.code{font-family:ui-monospace,monospace;font-size:12px;white-space:nowrap}
.summary{padding:8px 12px;border:1px solid #ccc;margin:8px 0}.summary .big{font-size:22px;font-weight:bold;margin-right:10px}.summary .reason{font-size:13px;margin:4px 0}
.outlier{color:#b00;font-weight:bold}.chart-title{font-weight:bold;margin:2px 4px}table.kv th,table.kv td{border:0;padding:1px 4px}
td.anomalies ul{margin:0;padding-left:16px}
`;

// The page frame: navigation, title, body; the charts' library and script only where there are charts or live data.
// `preload`: a URL the page's script will fetch, asked for at once (in parallel with the scripts) rather than after them.
export function layout(o: { title: string; path: string; body: string; scripts?: boolean; preload?: string | null }): string {
  const nav = NAV.map(([p, t]) => `<a href="${p}"${p === o.path ? ' class="on"' : ''}>${t}</a>`).join('');
  const scripts = o.scripts
    ? `${o.preload ? `<link rel="preload" href="${esc(o.preload)}" as="fetch" crossorigin="anonymous">` : ''}<link rel="stylesheet" href="/static/uPlot.min.css"><script src="/static/uPlot.iife.min.js"></script><script src="/static/dashboard.js" defer></script>`
    : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<link rel="icon" href="data:,"><title>${esc(o.title)} — cablequal</title><style>${CSS}</style>${scripts}</head>
<body><header><b>cablequal lab</b>${nav}</header><main><h1>${esc(o.title)}</h1>${o.body}</main></body></html>`;
}

// A number with a fixed number of decimals, or a dash.
export function fmt(v: number | null | undefined, digits = 2): string {
  return v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(digits);
}

// A FEC margin as the certificate and the terminal print it: to two decimals ("9.41", "1.09").
export function fmtMargin(v: number | null | undefined): string {
  return v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(2);
}

// A BER bound as the certificate states it: "< 1.6e-14" (a 95% upper bound, never a bare 0).
export function fmtBerBound(v: number | null | undefined): string {
  return v === null || v === undefined || !Number.isFinite(v) || v <= 0 ? '–' : `< ${sci(v)}`;
}
