// The dashboard's pages, rendered on the server from query results (the charts drawn in the page by uPlot from
// the JSON embedded beside them). Pure: data in, HTML out.
import { esc, fmt, fmtBer, href, jsonScript, layout, query } from './html.js';
import { OUTCOMES, yieldOf, type Counts, type Distribution, type RunFilter, type RunItem } from './queries.js';
import type { facets, goldenRuns, liveRuns, partsAndVendors, yieldPage } from './queries.js';

type Facets = Awaited<ReturnType<typeof facets>>;
// Where a run's certificate (or run report) is served, or null when it is not under the dashboard's reports directory.
export type CertUrl = (r: RunItem) => string | null;

function outcomeCell(r: RunItem): string {
  const o = r.state === 'running' ? 'running' : (r.outcome ?? '?');
  return `<td class="${esc(o)}">${esc(o)}</td>`;
}

function runRows(runs: RunItem[], certUrl: CertUrl, opts: { cable?: boolean } = {}): string {
  return runs
    .map((r) => {
      const cert = certUrl(r);
      return `<tr data-run="${esc(r.runId)}">
<td>${esc(r.startedAt?.replace('T', ' ').slice(0, 19) ?? '')}</td><td>${esc(r.runId)}${r.simulated ? ' <span class="sim">simulated</span>' : ''}${r.runKind === 'setup-check' ? ' <span class="sim">set-up check</span>' : ''}</td>${outcomeCell(r)}
${opts.cable === false ? '' : `<td>${r.serial ? `<a href="${href('/cables/{}', r.serial)}">${esc(r.serial)}</a>` : '<span class="muted">unidentified</span>'}</td>`}
<td>${r.partNumber ? `<a href="${href('/parts/{}', r.partNumber)}">${esc(r.partNumber)}</a>` : ''}</td>
<td>${r.vendor ? `<a href="${href('/vendors/{}', r.vendor)}">${esc(r.vendor)}</a>` : ''}</td>
<td>${esc(r.lot ?? '')}</td><td>${esc(r.station ?? '')}</td>
<td class="num">${fmt(r.fecMarginDecades)}</td><td class="num">${fmtBer(r.worstLaneBer)}</td>
<td class="reason">${esc(r.mainReason ?? '')}</td>
<td>${cert ? `<a class="cert" href="${esc(cert)}">${esc(r.certificateFile ?? 'certificate')}</a>` : r.certificateFile ? '<span class="muted">on another controller</span>' : ''}</td></tr>`;
    })
    .join('\n');
}

const RUN_HEAD = (cable = true) =>
  `<tr><th>started (UTC)</th><th>run</th><th>outcome</th>${cable ? '<th>cable serial</th>' : ''}<th>part number</th><th>vendor</th><th>lot</th><th>station</th><th>FEC margin (decades)</th><th>worst-lane BER</th><th>main reason</th><th>certificate</th></tr>`;

function select(name: string, label: string, values: readonly string[], chosen: string | undefined): string {
  const opts = ['', ...values].map((v) => `<option value="${esc(v)}"${v === (chosen ?? '') ? ' selected' : ''}>${esc(v || 'any')}</option>`).join('');
  return `<label>${esc(label)}<select name="${esc(name)}">${opts}</select></label>`;
}

// The run list with its filters and pages.
export function runsPage(o: {
  filter: RunFilter;
  page: { limit: number; offset: number };
  total: number;
  runs: RunItem[];
  facets: Facets;
  certUrl: CertUrl;
}): string {
  const f = o.filter;
  const form = `<form class="filters" method="get" action="/">
${select('outcome', 'outcome', [...OUTCOMES, 'running'], f.outcome)}${select('part', 'part number', o.facets.parts, f.part)}${select('vendor', 'vendor', o.facets.vendors, f.vendor)}
${select('lot', 'lot (date code)', o.facets.lots, f.lot)}${select('station', 'station', o.facets.stations, f.station)}
<label>from<input type="date" name="from" value="${esc(f.from ?? '')}"></label><label>to<input type="date" name="to" value="${esc(f.to ?? '')}"></label>
<label>serial<input name="serial" value="${esc(f.serial ?? '')}" maxlength="200"></label><button type="submit">filter</button> <a href="/">clear</a></form>`;
  const { limit, offset } = o.page;
  const q = (off: number) => `/${query({ ...f, offset: off || undefined, limit: limit === 100 ? undefined : limit })}`;
  const pager = `<p class="pager"><span id="run-count">${o.total}</span> run(s)${o.total ? `, ${offset + 1}–${Math.min(offset + limit, o.total)} shown` : ''}
${offset > 0 ? `<a href="${q(Math.max(0, offset - limit))}">newer</a>` : ''}${offset + limit < o.total ? `<a href="${q(offset + limit)}">older</a>` : ''} · JSON: <a href="/api/runs${query({ ...f })}">/api/runs</a></p>`;
  const body = `${form}${pager}<table id="runs"><thead>${RUN_HEAD()}</thead><tbody>${runRows(o.runs, o.certUrl)}</tbody></table>`;
  return layout({ title: 'Runs', path: '/', body });
}

// One cable: what its EEPROM says and every run of it, with its FEC margin across runs.
export function cablePage(o: { serial: string; cable: Record<string, unknown> | null; runs: RunItem[]; certUrl: CertUrl }): string {
  const c = o.cable;
  const facts = c
    ? `<table><tr><th>part number</th><td>${c['part_number'] ? `<a href="${href('/parts/{}', String(c['part_number']))}">${esc(String(c['part_number']))}</a>` : ''}</td></tr>
<tr><th>vendor</th><td>${esc(String(c['vendor'] ?? ''))}</td></tr><tr><th>vendor OUI</th><td>${esc(String(c['vendor_oui'] ?? ''))}</td></tr>
<tr><th>revision</th><td>${esc(String(c['vendor_rev'] ?? ''))}</td></tr><tr><th>date code / lot</th><td>${esc(String(c['date_code'] ?? ''))}</td></tr>
<tr><th>length (EEPROM)</th><td>${esc(c['length_m'] == null ? '' : `${c['length_m']} m`)}</td></tr><tr><th>family</th><td>${esc(String(c['family'] ?? ''))}</td></tr></table>`
    : '<p class="muted">No run identified this cable.</p>';
  const chart = chartSpec('cable-margin', {
    title: 'FEC margin per run (decades; below 1 FAIL, below 2 MARGINAL)',
    kind: 'points',
    x: o.runs.map((_, i) => i + 1),
    xLabel: 'run',
    series: [{ label: 'FEC margin', values: o.runs.map((r) => r.fecMarginDecades) }],
  });
  const body = `${facts}<h2>${o.runs.length} run(s)</h2>${o.runs.length ? chart : ''}<table id="history"><thead>${RUN_HEAD(false)}</thead><tbody>${runRows(o.runs, o.certUrl, { cable: false })}</tbody></table>`;
  return layout({ title: `Cable ${o.serial}`, path: '/cables', body, scripts: o.runs.length > 0 });
}

function countsCells(c: Counts): string {
  const y = yieldOf(c);
  return `${OUTCOMES.map((k) => `<td class="num">${c[k]}</td>`).join('')}<td class="num">${c.running}</td><td class="num">${y.passRate === null ? '–' : `${(y.passRate * 100).toFixed(1)} %`}</td>`;
}

const COUNT_HEAD = `${OUTCOMES.map((k) => `<th>${k}</th>`).join('')}<th>running</th><th>pass rate (of PASS+MARGINAL+FAIL)</th>`;

// Yield per part number and per vendor.
export function partsPage(o: Awaited<ReturnType<typeof partsAndVendors>>): string {
  const parts = o.parts
    .map(
      (p) => `<tr><td><a href="${href('/parts/{}', p.partNumber)}">${esc(p.partNumber)}</a></td><td>${esc(p.vendor ?? '')}</td>${countsCells(p.counts)}</tr>`,
    )
    .join('\n');
  const vendors = o.vendors
    .map((v) => `<tr><td><a href="${href('/vendors/{}', v.vendor)}">${esc(v.vendor || '(none)')}</a></td>${countsCells(v.counts)}</tr>`)
    .join('\n');
  const body = `<p>ERROR and ABORTED runs could not judge the cable: they are counted apart and left out of the pass rate.</p>
<h2>Part numbers</h2><table id="parts"><thead><tr><th>part number</th><th>vendor</th>${COUNT_HEAD}</tr></thead><tbody>${parts}</tbody></table>
<h2>Vendors</h2><table id="vendors"><thead><tr><th>vendor</th>${COUNT_HEAD}</tr></thead><tbody>${vendors}</tbody></table>`;
  return layout({ title: 'Parts & vendors', path: '/parts', body });
}

// A part number's (or vendor's) yield per lot and the distributions of FEC margin and worst-lane BER per lot.
export function yieldPageHtml(o: Awaited<ReturnType<typeof yieldPage>>): string {
  const rows = o.lots
    .map(
      (l) =>
        `<tr><td><a href="/${query({ [o.by === 'part' ? 'part' : 'vendor']: o.key, lot: l.lot === '(none)' ? undefined : l.lot })}">${esc(l.lot)}</a></td>${countsCells(l.counts)}</tr>`,
    )
    .join('\n');
  const other =
    o.by === 'part'
      ? `<p>vendor: ${o.vendors.map((v) => `<a href="${href('/vendors/{}', v)}">${esc(v)}</a>`).join(', ')}</p>`
      : `<p>part numbers: ${o.parts.map((p) => `<a href="${href('/parts/{}', p)}">${esc(p)}</a>`).join(', ')}</p>`;
  const dist = (id: string, title: string, d: Distribution, xLabel: string) =>
    d.bins.length
      ? chartSpec(id, {
          title,
          kind: 'bars',
          x: d.bins,
          xLabel,
          series: Object.entries(d.counts)
            .slice(0, 12)
            .map(([lot, values]) => ({ label: `lot ${lot}`, values })),
        })
      : `<p class="muted">${esc(title)}: no judged run with a value on this axis.</p>`;
  const zeros = Object.entries(o.worstLaneBer.zeroBer);
  const body = `${other}<table id="yield"><thead><tr><th>lot (date code)</th>${COUNT_HEAD}</tr></thead><tbody>${rows}<tr><th>all</th>${countsCells(o.total)}</tr></tbody></table>
${dist('fec-margin', 'FEC margin of judged runs, per lot (decades below the RS-FEC limit; bins of 0.5)', o.fecMargin, 'decades')}
${dist('worst-ber', 'Worst-lane pre-FEC BER of judged runs, per lot (log10, bins of one decade)', o.worstLaneBer, 'log10 BER')}
${zeros.length ? `<p>Runs whose worst lane counted no error (not on the log axis): ${zeros.map(([lot, n]) => `lot ${esc(lot)}: ${n}`).join(', ')}</p>` : ''}`;
  return layout({
    title: `${o.by === 'part' ? 'Part' : 'Vendor'} ${o.key}`,
    path: '/parts',
    body,
    scripts: o.fecMargin.bins.length + o.worstLaneBer.bins.length > 0,
  });
}

// The figures a golden cable is watched on, with the protocol tolerance that makes its drift limit.
export const GOLDEN_FIGURES = [
  { key: 'ibWriteBwGbps', title: 'ib_write_bw, both rails (Gb/s)', tolerance: 'throughputPct', relative: true, log: false },
  { key: 'ncclBusbwGBs', title: 'NCCL bus bandwidth (GB/s)', tolerance: 'busbwPct', relative: true, log: false },
  { key: 'worstLaneBer', title: 'worst-lane pre-FEC BER (log10)', tolerance: 'berDecades', relative: false, log: true },
  { key: 'nicTempMaxC', title: 'NIC temperature, max (°C)', tolerance: 'tempC', relative: false, log: false },
] as const;

const DEFAULT_TOLERANCES: Record<string, number> = { throughputPct: 5, busbwPct: 5, berDecades: 0.5, tempC: 5 };

// Control chart: each golden run's figure, the centre line (median of the golden runs) and the drift limits
// (centre ± the protocol's regression tolerance, the one `batch --golden` judges drift with).
export function controlLimits(values: (number | null)[], tolerance: number, relative: boolean): { centre: number; lower: number; upper: number } | null {
  const xs = values.filter((v): v is number => v !== null && Number.isFinite(v)).sort((a, b) => a - b);
  if (!xs.length) return null;
  const m = xs.length % 2 ? xs[(xs.length - 1) / 2]! : (xs[xs.length / 2 - 1]! + xs[xs.length / 2]!) / 2;
  const d = relative ? (Math.abs(m) * tolerance) / 100 : tolerance;
  return { centre: m, lower: m - d, upper: m + d };
}

export function goldenPage(o: Awaited<ReturnType<typeof goldenRuns>>, certUrl: CertUrl): string {
  if (!o.length)
    return layout({
      title: 'Golden cable',
      path: '/golden',
      body: '<p class="muted">No batch with a golden cable (<code>cablequal batch --golden SERIAL</code>) in the store yet.</p>',
    });
  const sections = o.map((g) => {
    const tol = { ...DEFAULT_TOLERANCES, ...(g.tolerances ?? {}) };
    const charts = GOLDEN_FIGURES.map((fig) => {
      const values = g.runs.map((r) => {
        const v = r[fig.key];
        return v === null ? null : fig.log ? (v > 0 ? Math.log10(v) : null) : v;
      });
      const lim = controlLimits(values, tol[fig.tolerance] ?? 0, fig.relative);
      if (!lim) return '';
      const flat = (y: number) => values.map(() => y);
      return chartSpec(`golden-${g.serial}-${fig.key}`, {
        title: `${fig.title}; drift limits: centre ± ${tol[fig.tolerance]}${fig.relative ? ' %' : fig.key === 'nicTempMaxC' ? ' °C' : ' decades'}`,
        kind: 'control',
        x: g.runs.map((_, i) => i + 1),
        xLabel: 'golden run',
        series: [
          { label: 'value', values },
          { label: 'centre', values: flat(lim.centre) },
          { label: 'upper limit', values: flat(lim.upper) },
          { label: 'lower limit', values: flat(lim.lower) },
        ],
      });
    }).join('');
    // A figure outside its drift limits is marked in the table (class "out").
    const limits = Object.fromEntries(
      GOLDEN_FIGURES.map((fig) => [
        fig.key,
        controlLimits(
          g.runs.map((r) => (fig.log ? ((r[fig.key] ?? 0) > 0 ? Math.log10(r[fig.key]!) : null) : r[fig.key])),
          tol[fig.tolerance] ?? 0,
          fig.relative,
        ),
      ]),
    );
    const cellOf = (r: RunItem, key: (typeof GOLDEN_FIGURES)[number]['key'], text: string) => {
      const lim = limits[key];
      const raw = r[key];
      const v = key === 'worstLaneBer' ? (raw !== null && raw > 0 ? Math.log10(raw) : null) : raw;
      const out = lim && v !== null && (v < lim.lower || v > lim.upper);
      return `<td class="num${out ? ' out' : ''}">${text}</td>`;
    };
    const rows = g.runs
      .map(
        (r, i) =>
          `<tr><td class="num">${i + 1}</td><td>${esc(r.batchName ?? '')}</td><td>${esc(r.batchRole ?? '')}</td><td>${esc(r.startedAt ?? '')}</td>${outcomeCell(r)}${cellOf(r, 'ibWriteBwGbps', fmt(r.ibWriteBwGbps, 1))}${cellOf(r, 'ncclBusbwGBs', fmt(r.ncclBusbwGBs, 1))}${cellOf(r, 'worstLaneBer', fmtBer(r.worstLaneBer))}${cellOf(r, 'nicTempMaxC', fmt(r.nicTempMaxC, 1))}<td>${certUrl(r) ? `<a href="${esc(certUrl(r)!)}">certificate</a>` : ''}</td></tr>`,
      )
      .join('\n');
    return `<h2>Golden cable <a href="${href('/cables/{}', g.serial)}">${esc(g.serial)}</a></h2>${charts}
<table class="golden"><thead><tr><th>#</th><th>batch</th><th>run</th><th>started</th><th>outcome</th><th>ib_write_bw Gb/s</th><th>NCCL GB/s</th><th>worst-lane BER</th><th>NIC max °C</th><th></th></tr></thead><tbody>${rows}</tbody></table>`;
  });
  return layout({ title: 'Golden cable', path: '/golden', body: sections.join('\n'), scripts: true });
}

// Runs in progress; the page's script keeps the table current from /api/live/stream (server-sent events).
export function livePage(runs: Awaited<ReturnType<typeof liveRuns>>): string {
  const body = `<p>Runs in progress on every controller writing to this store, updated as their status arrives (<span id="live-state">connecting</span>).</p>
<table id="live"><thead><tr><th>run</th><th>label</th><th>station</th><th>phase</th><th>elapsed</th><th>remaining</th><th>pre-FEC errors/s per lane</th><th>NIC °C</th><th>GPU °C / util</th><th>updated</th></tr></thead>
<tbody></tbody></table>${jsonScript('live-initial', runs)}`;
  return layout({ title: 'Live runs', path: '/live', body, scripts: true });
}

// A chart for the page's script: an element with the data as JSON beside it.
interface ChartSpec {
  title: string;
  kind: 'bars' | 'points' | 'control';
  x: number[];
  xLabel: string;
  series: { label: string; values: (number | null)[] }[];
}

function chartSpec(id: string, spec: ChartSpec): string {
  return `<div class="chart" id="${esc(id)}"><div class="chart-title">${esc(spec.title)}</div></div>${jsonScript(`${id}-data`, spec, ' data-chart')}`;
}

// Plain text page for 4xx answers.
export function errorPage(status: number, message: string): string {
  return layout({ title: `${status}`, path: '', body: `<p>${esc(message)}</p><p><a href="/">all runs</a></p>` });
}
