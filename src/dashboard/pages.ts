// The dashboard's pages, rendered on the server from query results (the charts drawn in the page by uPlot from
// the JSON embedded beside them). Pure: data in, HTML out.
import { ruleOf } from '../rules/versions.js';
import { chartSpec, OUTCOME_COLOURS } from './chart-spec.js';
import { esc, fmt, fmtBerBound, fmtMargin, href, jsonScript, layout, query } from './html.js';
import {
  OUTCOMES,
  berBoundFigure,
  cableYieldOf,
  marginFigure,
  type CableCounts,
  type Counts,
  type Distribution,
  type RunFilter,
  type RunItem,
} from './queries.js';
import type { BatchItem, facets, goldenRuns, liveRuns, partsAndVendors, yieldPage } from './queries.js';

type Facets = Awaited<ReturnType<typeof facets>>;
// Where a run's certificate (or run report) is served, or null when it is not under the dashboard's reports directory.
export type CertUrl = (r: RunItem) => string | null;

function outcomeCell(r: RunItem): string {
  const o = r.state === 'running' ? 'running' : (r.outcome ?? '?');
  return `<td class="${esc(o)}">${esc(o)}</td>`;
}

// The margin and BER cells of a run: the one FEC margin and worst-lane BER of its result (over the graded soaks); a
// deciding value is in the "why" code beside them, under its rule's name.
function figureCells(r: RunItem): string {
  return `<td class="num margin">${fmtMargin(marginFigure(r))}</td><td class="num ber">${esc(fmtBerBound(berBoundFigure(r)))}</td>`;
}

// The short code of why (rows imported before schema 3 have none: the start of their sentence instead).
function shortWhy(r: RunItem): string {
  if (r.mainCode) return r.mainCode;
  const m = r.mainReason ?? '';
  return m.length > 60 ? `${m.slice(0, 59)}…` : m;
}

// The link to a run's own page.
export function runLink(r: Pick<RunItem, 'runId'>): string {
  return `<a class="run" href="${href('/runs/{}', r.runId)}">${esc(r.runId)}</a>`;
}

function runRows(runs: RunItem[], certUrl: CertUrl, opts: { cable?: boolean } = {}): string {
  return runs
    .map((r) => {
      const cert = certUrl(r);
      return `<tr data-run="${esc(r.runId)}">
<td>${esc(r.startedAt?.replace('T', ' ').slice(0, 19) ?? '')}</td><td>${runLink(r)}${r.simulated ? ' <span class="sim">simulated</span>' : ''}${r.runKind === 'setup-check' ? ' <span class="sim">set-up check</span>' : ''}</td>${outcomeCell(r)}
<td class="code" title="${esc(r.mainReason ?? '')}">${esc(shortWhy(r))}</td>
${opts.cable === false ? '' : `<td>${r.serial ? `<a href="${href('/cables/{}', r.serial)}">${esc(r.serial)}</a>` : '<span class="muted">unidentified</span>'}</td>`}
<td>${esc(r.label ?? '')}</td><td>${r.batchId ? `<a href="${href('/batches/{}', r.batchId)}">${esc(r.batchName ?? r.batchId)}</a>` : ''}</td>
<td>${r.partNumber ? `<a href="${href('/parts/{}', r.partNumber)}">${esc(r.partNumber)}</a>` : ''}</td>
<td>${r.vendor ? `<a href="${href('/vendors/{}', r.vendor)}">${esc(r.vendor)}</a>` : ''}</td>
<td>${esc(r.lot ?? '')}</td><td>${esc(r.station ?? '')}</td>${figureCells(r)}
<td>${cert ? `<a class="cert" href="${esc(cert)}">${esc(r.certificateFile ?? 'certificate')}</a>` : r.certificateFile ? '<span class="muted">on another controller</span>' : ''}</td></tr>`;
    })
    .join('\n');
}

const RUN_HEAD = (cable = true) =>
  `<tr><th>started (UTC)</th><th>run</th><th>outcome</th><th>why</th>${cable ? '<th>cable serial</th>' : ''}<th>label</th><th>batch</th><th>part number</th><th>vendor</th><th>lot</th><th>station</th><th title="the worst lane's 95% upper bound over the graded soaks, as decades below the RS-FEC limit (the certificate's and summary.csv's)">FEC margin (decades)</th><th title="the worst lane over the graded soaks, 95% upper bound">worst-lane BER</th><th>certificate</th></tr>`;

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
<label>serial (part of it, any case)<input name="serial" value="${esc(f.serial ?? '')}" maxlength="200"></label><button type="submit">filter</button> <a href="/">clear</a></form>`;
  const { limit, offset } = o.page;
  const q = (off: number) => `/${query({ ...f, offset: off || undefined, limit: limit === 100 ? undefined : limit })}`;
  const pager = `<p class="pager"><span id="run-count">${o.total}</span> run(s)${o.total ? `, ${offset + 1}–${Math.min(offset + limit, o.total)} shown` : ''}
${offset > 0 ? `<a href="${q(Math.max(0, offset - limit))}">newer</a>` : ''}${offset + limit < o.total ? `<a href="${q(offset + limit)}">older</a>` : ''} · JSON: <a href="/api/runs${query({ ...f })}">/api/runs</a></p>`;
  const body = `${form}${pager}<table id="runs"><thead>${RUN_HEAD()}</thead><tbody>${runRows(o.runs, o.certUrl)}</tbody></table>`;
  return layout({ title: 'Runs', path: '/', body });
}

// One cable: what its EEPROM says and every run of it, with its FEC margin across runs.
export function cablePage(o: { serial: string; cable: Record<string, unknown> | null; runs: RunItem[]; certUrl: CertUrl; service?: string }): string {
  const c = o.cable;
  const facts = c
    ? `<table><tr><th>part number</th><td>${c['part_number'] ? `<a href="${href('/parts/{}', String(c['part_number']))}">${esc(String(c['part_number']))}</a>` : ''}</td></tr>
<tr><th>vendor</th><td>${esc(String(c['vendor'] ?? ''))}</td></tr><tr><th>vendor OUI</th><td>${esc(String(c['vendor_oui'] ?? ''))}</td></tr>
<tr><th>revision</th><td>${esc(String(c['vendor_rev'] ?? ''))}</td></tr><tr><th>date code / lot</th><td>${esc(String(c['date_code'] ?? ''))}</td></tr>
<tr><th>length (EEPROM)</th><td>${esc(c['length_m'] == null ? '' : `${c['length_m']} m`)}</td></tr><tr><th>family</th><td>${esc(String(c['family'] ?? ''))}</td></tr></table>`
    : '<p class="muted">No run identified this cable.</p>';
  const margins = o.runs.map(marginFigure);
  const fecRule = ruleOf('fec-margin');
  const failAt = fecRule?.fail ?? 1;
  const marginalAt = fecRule?.marginal ?? 2;
  const finite = margins.filter((v): v is number => v !== null && Number.isFinite(v));
  const top = Math.max(marginalAt + 1, ...finite.map((v) => Math.ceil(v + 0.5)));
  const byOutcome = (['PASS', 'MARGINAL', 'FAIL'] as const).map((k) => ({
    label: k,
    values: o.runs.map((r, i) => (r.outcome === k ? margins[i]! : null)),
    colour: OUTCOME_COLOURS[k]!,
    style: 'points' as const,
  }));
  const chart = chartSpec('cable-margin', {
    title: `FEC margin per run: over the graded soaks, as the certificate states it (decades below the RS-FEC limit; FAIL below ${failAt}, MARGINAL below ${marginalAt})`,
    kind: 'points',
    x: o.runs.map((_, i) => i + 1),
    xLabel: 'run (oldest first)',
    yLabel: 'FEC margin (decades)',
    xTicks: 'integer',
    xRange: [0.5, o.runs.length + 0.5],
    yRange: [Math.min(0, ...finite.map((v) => Math.floor(v))), top],
    series: [
      ...byOutcome.filter((s) => s.values.some((v) => v !== null)),
      { label: `FAIL line (${failAt})`, values: o.runs.map(() => failAt), colour: OUTCOME_COLOURS['FAIL']!, style: 'dash' },
      { label: `MARGINAL line (${marginalAt})`, values: o.runs.map(() => marginalAt), colour: OUTCOME_COLOURS['MARGINAL']!, style: 'dash' },
    ],
  });
  // The service section (src/dashboard/service-page.ts) follows the qualification runs: the cable's life in one place.
  const body = `${facts}<h2>${o.runs.length} run(s)</h2>${o.runs.length ? chart : ''}<table id="history"><thead>${RUN_HEAD(false)}</thead><tbody>${runRows(o.runs, o.certUrl, { cable: false })}</tbody></table>${o.service ?? ''}`;
  return layout({ title: `Cable ${o.serial}`, path: '/cables', body, scripts: o.runs.length > 0 || (o.service ?? '').includes('data-chart') });
}

// Cables by latest complete verdict, their yield, then runs by outcome (each retest counted here, not in the yield).
function countsCells(c: CableCounts, r: Counts): string {
  const y = cableYieldOf(c);
  const cables = (['PASS', 'MARGINAL', 'FAIL', 'unjudged'] as const).map((k) => `<td class="num cables-${k}">${c[k]}</td>`).join('');
  const runs = [...OUTCOMES, 'running' as const].map((k) => `<td class="num runs-${k}">${r[k]}</td>`).join('');
  return `${cables}<td class="num yield">${y.passRate === null ? '–' : `${(y.passRate * 100).toFixed(1)} %`}</td>${runs}`;
}

const COUNT_HEAD_1 = `<th colspan="5">cables, by their latest complete verdict</th><th colspan="6">runs (retests included)</th>`;
const COUNT_HEAD_2 = `<th>PASS</th><th>MARGINAL</th><th>FAIL</th><th title="every run of the cable ended ERROR or ABORTED, or is running">not judged</th><th>yield (PASS of judged cables)</th>${[...OUTCOMES, 'running'].map((k) => `<th>${k}</th>`).join('')}`;

// The switch between real runs only (the default) and real and simulated runs.
function scopeNote(path: string, simulated: boolean): string {
  return simulated
    ? `<p class="scope">Simulated runs included. <a href="${esc(path)}">Real runs only</a></p>`
    : `<p class="scope">Real runs only: simulated runs stay out of yield. <a href="${esc(path)}?simulated=1">Include simulated runs</a></p>`;
}

// Yield per part number and per vendor: cables by their latest complete verdict, runs beside them.
export function partsPage(o: Awaited<ReturnType<typeof partsAndVendors>>): string {
  const sim = o.simulated ? '?simulated=1' : '';
  const parts = o.parts
    .map(
      (p) =>
        `<tr data-part="${esc(p.partNumber)}"><td><a href="${href('/parts/{}', p.partNumber)}${sim}">${esc(p.partNumber)}</a></td><td>${esc(p.vendor ?? '')}</td>${countsCells(p.cables, p.runs)}</tr>`,
    )
    .join('\n');
  const vendors = o.vendors
    .map(
      (v) =>
        `<tr data-vendor="${esc(v.vendor)}"><td><a href="${href('/vendors/{}', v.vendor)}${sim}">${esc(v.vendor || '(none)')}</a></td>${countsCells(v.cables, v.runs)}</tr>`,
    )
    .join('\n');
  const body = `${scopeNote('/parts', o.simulated)}<p>A cable counts once, by its latest complete verdict (its newest PASS, MARGINAL or FAIL run); its retests are counted with the runs. ERROR and ABORTED runs could not judge the cable: they are counted apart.</p>
<h2>Part numbers</h2><table id="parts"><thead><tr><th rowspan="2">part number</th><th rowspan="2">vendor</th>${COUNT_HEAD_1}</tr><tr>${COUNT_HEAD_2}</tr></thead><tbody>${parts}</tbody></table>
<h2>Vendors</h2><table id="vendors"><thead><tr><th rowspan="2">vendor</th>${COUNT_HEAD_1}</tr><tr>${COUNT_HEAD_2}</tr></thead><tbody>${vendors}</tbody></table>`;
  return layout({ title: 'Parts & vendors', path: '/parts', body });
}

// A histogram of cables per bin, the lots stacked: each lot's bar drawn on top of the lots before it. The y axis starts
// at 0 with whole-number ticks; the x range holds every bin whole.
function histogramChart(id: string, title: string, d: Distribution, xLabel: string, log: boolean): string {
  const lots = Object.entries(d.counts).slice(0, 12);
  // An empty bin on each side: each bar is as wide as its bin, and the end bins are drawn whole.
  const x = [d.bins[0]! - d.width, ...d.bins, d.bins[d.bins.length - 1]! + d.width].map((v) => +v.toFixed(6));
  const running = x.map(() => 0);
  const stacked = lots.map(([lot, values]) => ({ lot, values: [0, ...values, 0].map((v, i) => (running[i]! += v)) }));
  const top = Math.max(1, ...running);
  return chartSpec(id, {
    title,
    kind: 'bars',
    x,
    xLabel,
    yLabel: 'cables',
    // The tallest stack first, so each lot's part stays visible on top of it.
    series: stacked.reverse().map((s) => ({ label: `lot ${s.lot}`, values: s.values, style: 'bars' as const })),
    xTicks: log ? 'log10' : undefined,
    yTicks: 'integer',
    xRange: [x[0]! - d.width / 2, x[x.length - 1]! + d.width / 2],
    yRange: [0, top + Math.max(1, Math.ceil(top * 0.1))],
    barWidth: d.width,
  });
}

// A part number's (or vendor's) yield per lot and the distributions of FEC margin and worst-lane BER over its cables.
export function yieldPageHtml(o: Awaited<ReturnType<typeof yieldPage>>): string {
  const rows = o.lots
    .map(
      (l) =>
        `<tr data-lot="${esc(l.lot)}"><td><a href="/${query({ [o.by === 'part' ? 'part' : 'vendor']: o.key, lot: l.lot === '(none)' ? undefined : l.lot })}">${esc(l.lot)}</a></td>${countsCells(l.cables, l.runs)}</tr>`,
    )
    .join('\n');
  const other =
    o.by === 'part'
      ? `<p>vendor: ${o.vendors.map((v) => `<a href="${href('/vendors/{}', v)}">${esc(v)}</a>`).join(', ')}</p>`
      : `<p>part numbers: ${o.parts.map((p) => `<a href="${href('/parts/{}', p)}">${esc(p)}</a>`).join(', ')}</p>`;
  const dist = (id: string, title: string, d: Distribution, xLabel: string, log: boolean) =>
    d.bins.length ? histogramChart(id, title, d, xLabel, log) : `<p class="muted">${esc(title)}: no judged cable with a value on this axis.</p>`;
  const zeros = Object.entries(o.worstLaneBer.zeroBer);
  const path = `/${o.by === 'part' ? 'parts' : 'vendors'}/${encodeURIComponent(o.key)}`;
  const body = `${scopeNote(path, o.simulated)}${other}<table id="yield"><thead><tr><th rowspan="2">lot (date code)</th>${COUNT_HEAD_1}</tr><tr>${COUNT_HEAD_2}</tr></thead><tbody>${rows}<tr class="all"><th>all</th>${countsCells(o.cables, o.runs)}</tr></tbody></table>
${dist('fec-margin', "FEC margin of each qualified cable's latest verdict, per lot (over the graded soaks, as the certificate states it; set-up checks and golden runs not counted; bins of 0.5 decade, lots stacked)", o.fecMargin, 'FEC margin (decades below the RS-FEC limit)', false)}
${dist('worst-ber', "Worst-lane pre-FEC BER bound of each judged cable's latest verdict, per lot (95% upper bound, bins of one decade, lots stacked)", o.worstLaneBer, 'worst-lane BER (95% upper bound)', true)}
${zeros.length ? `<p>Cables imported before bounds were stored whose worst lane counted no error (not on the log axis; \`cablequal db import\` again adds their bound): ${zeros.map(([lot, n]) => `lot ${esc(lot)}: ${n}`).join(', ')}</p>` : ''}`;
  return layout({
    title: `${o.by === 'part' ? 'Part' : 'Vendor'} ${o.key}`,
    path: '/parts',
    body,
    scripts: o.fecMargin.bins.length + o.worstLaneBer.bins.length > 0,
  });
}

// The figures a golden cable is watched on, with the protocol tolerance that makes its drift limit: what is plotted
// (the worst-lane BER as the log10 of its 95% upper bound, as every BER the dashboard shows) and how the table prints it.
// A figure plotted as it is and printed with one decimal.
const plainFigure = <K extends 'ibWriteBwGbps' | 'ncclBusbwGBs' | 'nicTempMaxC'>(
  key: K,
  title: string,
  tolerance: string,
  relative: boolean,
  unit: string,
) => ({
  key,
  title,
  tolerance,
  relative,
  unit,
  value: (r: RunItem): number | null => r[key],
  text: (r: RunItem) => fmt(r[key], 1),
});

export const GOLDEN_FIGURES = [
  plainFigure('ibWriteBwGbps', 'ib_write_bw, both rails (Gb/s)', 'throughputPct', true, ' %'),
  plainFigure('ncclBusbwGBs', 'NCCL bus bandwidth (GB/s)', 'busbwPct', true, ' %'),
  {
    key: 'worstLaneBer',
    title: 'worst-lane pre-FEC BER, 95% upper bound (log10)',
    tolerance: 'berDecades',
    relative: false,
    unit: ' decades',
    value: (r: RunItem): number | null => {
      const b = berBoundFigure(r);
      return b !== null && b > 0 ? Math.log10(b) : null;
    },
    text: (r: RunItem) => fmtBerBound(berBoundFigure(r)),
  },
  plainFigure('nicTempMaxC', 'NIC temperature, max (°C)', 'tempC', false, ' °C'),
];

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
    const limits = GOLDEN_FIGURES.map((fig) => controlLimits(g.runs.map(fig.value), tol[fig.tolerance] ?? 0, fig.relative));
    const charts = GOLDEN_FIGURES.map((fig, k) => {
      const values = g.runs.map(fig.value);
      const lim = limits[k];
      if (!lim) return '';
      const flat = (y: number) => values.map(() => y);
      return chartSpec(`golden-${g.serial}-${fig.key}`, {
        title: `${fig.title}; drift limits: centre ± ${tol[fig.tolerance]}${fig.unit}`,
        kind: 'control',
        x: g.runs.map((_, i) => i + 1),
        xLabel: 'golden run (oldest first)',
        yLabel: fig.title,
        xTicks: 'integer',
        xRange: [0.5, g.runs.length + 0.5],
        series: [
          { label: 'value', values },
          { label: 'centre', values: flat(lim.centre) },
          { label: 'upper limit', values: flat(lim.upper) },
          { label: 'lower limit', values: flat(lim.lower) },
        ],
      });
    }).join('');
    // A figure outside its drift limits is marked in the table (class "out").
    const cells = (r: RunItem) =>
      GOLDEN_FIGURES.map((fig, k) => {
        const lim = limits[k];
        const v = fig.value(r);
        const out = lim && v !== null && (v < lim.lower || v > lim.upper);
        return `<td class="num${out ? ' out' : ''}">${esc(fig.text(r))}</td>`;
      }).join('');
    const rows = g.runs
      .map(
        (r, i) =>
          `<tr><td class="num">${i + 1}</td><td>${esc(r.batchName ?? '')}</td><td>${esc(r.batchRole ?? '')}</td><td>${esc(r.startedAt ?? '')}</td>${outcomeCell(r)}${cells(r)}<td>${certUrl(r) ? `<a href="${esc(certUrl(r)!)}">certificate</a>` : ''}</td></tr>`,
      )
      .join('\n');
    return `<h2>Golden cable <a href="${href('/cables/{}', g.serial)}">${esc(g.serial)}</a></h2>${charts}
<table class="golden"><thead><tr><th>#</th><th>batch</th><th>run</th><th>started</th><th>outcome</th><th>ib_write_bw Gb/s</th><th>NCCL GB/s</th><th>worst-lane BER (95% upper bound)</th><th>NIC max °C</th><th></th></tr></thead><tbody>${rows}</tbody></table>`;
  });
  return layout({ title: 'Golden cable', path: '/golden', body: sections.join('\n'), scripts: true });
}

// Runs in progress; the page's script keeps the table current from /api/live/stream (server-sent events).
export function livePage(runs: Awaited<ReturnType<typeof liveRuns>>): string {
  const body = `<p>Runs in progress on every controller writing to this store, updated as their status arrives (<span id="live-state">connecting</span>). Each run's page shows its charts growing as it runs; a lane far above its neighbours is <span class="outlier">marked</span>.</p>
<table id="live"><thead><tr><th>run</th><th>label</th><th>station</th><th>phase</th><th>elapsed</th><th>time left (whole procedure)</th><th>pre-FEC errors/s per lane</th><th>NIC °C</th><th>GPU °C / util</th><th>updated</th></tr></thead>
<tbody></tbody></table>${jsonScript('live-initial', runs)}`;
  return layout({ title: 'Live runs', path: '/live', body, scripts: true });
}

function runCounts(c: Counts): string {
  return [...OUTCOMES, 'running' as const]
    .filter((k) => c[k] > 0)
    .map((k) => `<span class="${k}">${c[k]} ${k}</span>`)
    .join(' ');
}

// Every batch (box) in the store: name, controller, cables tested, golden drift, its runs by outcome.
export function batchesPage(list: BatchItem[]): string {
  const rows = list
    .map(
      (b) =>
        `<tr data-batch="${esc(b.id)}"><td><a href="${href('/batches/{}', b.id)}">${esc(b.name)}</a></td><td>${esc(b.controller ?? '')}</td><td>${esc(b.protocol ?? '')}</td><td class="num">${b.tested ?? '–'} / ${b.cables ?? '–'}</td><td>${b.goldenSerial ? `<a href="${href('/cables/{}', b.goldenSerial)}">${esc(b.goldenSerial)}</a>` : ''}</td><td>${b.driftOk === null ? '' : b.driftOk ? 'within limits' : '<span class="out">drifted</span>'}</td><td>${runCounts(b.runs)}</td><td>${esc(b.updatedAt?.replace('T', ' ').slice(0, 19) ?? '')}</td></tr>`,
    )
    .join('\n');
  const body = list.length
    ? `<table id="batches"><thead><tr><th>batch</th><th>controller</th><th>protocol</th><th>cables tested</th><th>golden cable</th><th>golden drift</th><th>runs</th><th>updated (UTC)</th></tr></thead><tbody>${rows}</tbody></table>`
    : '<p class="muted">No batch in the store yet (<code>cablequal batch --manifest box.csv ...</code>).</p>';
  return layout({ title: 'Batches', path: '/batches', body });
}

// One box: each cable (by its label in the manifest) with its latest outcome, then every run of the batch.
export function batchPage(o: { id: string; batch: BatchItem | null; runs: RunItem[]; certUrl: CertUrl }): string {
  const b = o.batch;
  const facts = b
    ? `<table class="facts"><tr><th>controller</th><td>${esc(b.controller ?? '')}</td></tr><tr><th>manifest</th><td>${esc(b.manifest ?? '')}</td></tr><tr><th>protocol</th><td>${esc(b.protocol ?? '')}</td></tr><tr><th>cables tested</th><td>${b.tested ?? '–'} of ${b.cables ?? '–'}</td></tr><tr><th>golden cable</th><td>${b.goldenSerial ? `<a href="${href('/cables/{}', b.goldenSerial)}">${esc(b.goldenSerial)}</a>` : 'none'}${b.driftOk === null ? '' : b.driftOk ? ' (within its drift limits)' : ` <span class="out">drifted</span> ${esc(b.driftDetail ?? '')}`}</td></tr></table>`
    : '<p class="muted">This batch has runs in the store but no batch row (its state file was not imported).</p>';
  // The box's cables by their label; the golden reference's runs apart (they check the bench, they are no cable of it).
  const cables = new Map<string, RunItem[]>();
  const golden = new Map<string, RunItem[]>();
  for (const r of o.runs) {
    const isGolden = (r.batchRole && r.batchRole !== 'cable') || r.runRole === 'golden';
    const into = isGolden ? golden : cables;
    const key = isGolden ? (r.serial ?? 'golden') : (r.label ?? r.serial ?? r.runId);
    into.set(key, [...(into.get(key) ?? []), r]);
  }
  const rowsOf = (m: Map<string, RunItem[]>) =>
    [...m.entries()]
      .map(([label, runs]) => {
        const last = runs[runs.length - 1]!;
        const kind = last.runKind === 'setup-check' ? ' <span class="muted">(set-up check)</span>' : '';
        return `<tr data-cable="${esc(label)}"><td>${esc(label)}</td><td>${last.serial ? `<a href="${href('/cables/{}', last.serial)}">${esc(last.serial)}</a>` : '<span class="muted">unidentified</span>'}</td>${outcomeCell(last)}<td class="code">${esc(shortWhy(last))}${kind}</td>${figureCells(last)}<td>${runs.map(runLink).join(' ')}</td></tr>`;
      })
      .join('\n');
  const head = `<thead><tr><th>cable (label)</th><th>serial</th><th>latest outcome</th><th>why</th><th>FEC margin (decades)</th><th>worst-lane BER</th><th>runs</th></tr></thead>`;
  const goldenTable = golden.size
    ? `<h2>Golden reference (${[...golden.values()].flat().length} run(s), not a cable of the box)</h2><table id="batch-golden">${head}<tbody>${rowsOf(golden)}</tbody></table>`
    : '';
  const body = `${facts}<h2>Cables (${cables.size})</h2><table id="batch-cables">${head}<tbody>${rowsOf(cables)}</tbody></table>${goldenTable}
<h2>Runs (${o.runs.length})</h2><table id="runs"><thead>${RUN_HEAD()}</thead><tbody>${runRows(o.runs, o.certUrl)}</tbody></table>`;
  return layout({ title: `Batch ${b?.name ?? o.id}`, path: '/batches', body });
}

// Plain text page for 4xx answers.
export function errorPage(status: number, message: string): string {
  return layout({ title: `${status}`, path: '', body: `<p>${esc(message)}</p><p><a href="/">all runs</a></p>` });
}
