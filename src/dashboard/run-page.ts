// One run's page (/runs/<id>): the outcome and when it was decided first, then the certificate's headline per receiver,
// the charts (drawn in the page from /api/runs/<id>/series, growing over /api/runs/<id>/stream while the run is
// running), the verdict table, both EEPROM ends, the conditions and node facts, and links to the certificate and CSVs.
// Pure: data in, HTML out; every string from a cable or a node is escaped.
import type { CableEndRecord, HeadlineReceiver, NodeRecord, PhaseRecord } from '../domain/record.js';
import type { Measurement } from '../domain/limit.js';
import type { Reason } from '../domain/outcome.js';
import { esc, fmt, fmtBerBound, fmtMargin, href, jsonScript, layout } from './html.js';
import { berBoundFigure, marginFigure, type RunDetail } from './queries.js';

// The live status of a running run (the store's live row).
export interface RunLive {
  phase: string | null;
  elapsedS: number | null;
  remainingS: number | null;
  updatedAt: string | null;
}

// What the run page is made of: the run, its live status, the files served and where its series are.
export interface RunPageInput {
  run: RunDetail;
  live: RunLive | null;
  links: { label: string; url: string }[]; // certificate, CSVs, journal: those served
  seriesUrl: string | null; // null: the journal is not on this controller
  journalNote: string | null; // why there are no charts
}

const mmss = (s: number | null | undefined) => {
  if (s === null || s === undefined || !Number.isFinite(s)) return '–';
  const m = Math.floor(s / 60);
  const r = Math.floor(s % 60);
  return `${m}:${String(r).padStart(2, '0')}`;
};

const arr = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

function summary(o: RunPageInput): string {
  const r = o.run;
  const running = r.state === 'running';
  const outcome = running ? 'running' : (r.outcome ?? '?');
  const decided = running
    ? `<span id="run-phase">${esc(o.live?.phase ?? 'starting')}</span>, <span id="run-elapsed">${mmss(o.live?.elapsedS)}</span> elapsed, <b><span id="run-left">${mmss(o.live?.remainingS)}</span> left</b>`
    : r.decidedAtS !== null
      ? `decided at <b id="decided-at">${mmss(r.decidedAtS)}</b> into the run (${fmt(r.decidedAtS, 0)} s): the loads stopped there`
      : 'ran to the end of the procedure';
  const margin = marginFigure(r);
  const where = r.fecMarginNode
    ? ` (${esc(r.fecMarginNode)}${r.fecMarginLane !== null ? ` lane ${r.fecMarginLane}` : ''}, ${esc(r.fecMarginPhase ?? '')})`
    : '';
  return `<div class="summary ${esc(outcome)}" id="summary"><span class="big" id="outcome">${esc(outcome)}</span> <span id="decision">${decided}</span>
${r.mainCode && r.outcome !== 'PASS' ? `<div class="code" id="main-code">${esc(r.mainCode)}</div>` : ''}
${r.mainReason && r.outcome !== 'PASS' ? `<div class="reason" id="main-reason">${esc(r.mainReason)}</div>` : ''}
${running ? '' : `<div>FEC margin <b id="fig-margin">${fmtMargin(margin)}</b> decades${where} · worst-lane BER <b id="fig-ber">${esc(fmtBerBound(berBoundFigure(r)))}</b> (95% upper bound, graded soaks)${r.runKind === 'setup-check' ? ' · <b>set-up check</b>: qualifies no cable' : ''}${r.runRole === 'golden' ? ' · golden reference cable' : ''}</div>`}</div>`;
}

function facts(o: RunPageInput): string {
  const r = o.run;
  const row = (k: string, v: string) => `<tr><th>${esc(k)}</th><td>${v}</td></tr>`;
  return `<table class="facts" id="run-facts">${[
    row('cable serial', r.serial ? `<a href="${href('/cables/{}', r.serial)}">${esc(r.serial)}</a>` : '<span class="muted">unidentified</span>'),
    row('part number', r.partNumber ? `<a href="${href('/parts/{}', r.partNumber)}">${esc(r.partNumber)}</a>` : ''),
    row('vendor', r.vendor ? `<a href="${href('/vendors/{}', r.vendor)}">${esc(r.vendor)}</a>` : ''),
    row('lot (date code)', esc(r.lot ?? '')),
    row('label', esc(r.label ?? '')),
    row(
      'batch',
      r.batchId ? `<a href="${href('/batches/{}', r.batchId)}">${esc(r.batchName ?? r.batchId)}</a>${r.batchRole ? ` (${esc(r.batchRole)})` : ''}` : '',
    ),
    row('station', esc(r.station ?? '')),
    row('protocol', esc(r.protocol ?? '')),
    row('started / ended (UTC)', `${esc(r.startedAt ?? '')} / ${esc(r.endedAt ?? '')}`),
    row('checked against', checkedAgainst(r.journalCheck, r.state)),
    ...clusterCheckRow(r.result, row),
    row('simulated', r.simulated ? '<span class="sim">simulated: generated outputs, not a recording</span>' : 'no'),
    row(
      'files',
      o.links.length
        ? o.links.map((l) => `<a class="file" href="${esc(l.url)}">${esc(l.label)}</a>`).join(' · ')
        : `<span class="muted">${r.state === 'running' ? 'none yet: the certificate and the CSVs are written when the run ends' : "not under this dashboard's reports directory"}</span>`,
    ),
    row('JSON', `<a href="${href('/api/runs/{}', r.runId)}">run</a>${o.seriesUrl ? ` · <a href="${esc(o.seriesUrl)}">series</a>` : ''}`),
  ].join('')}</table>`;
}

function headline(h: unknown): string {
  const hl = h as { phase?: string; receivers?: HeadlineReceiver[] } | null;
  if (!hl?.receivers?.length) return '';
  const rows = hl.receivers
    .map(
      (x) =>
        `<tr data-node="${esc(x.node)}"><td>${esc(x.node)}</td><td class="num">${fmt(x.seconds / 60, 1)}</td><td class="num hl-ber">${esc(fmtBerBound(x.berUb95))}</td><td class="hl-lanes">${x.lanes.map((l) => `lane ${l.lane} ${esc(fmtBerBound(l.berUb95))}${l.errors ? ` (${l.errors} errors)` : ''}`).join(', ')}</td><td class="num hl-margin">${fmtMargin(x.fecMarginDecades)}</td><td class="num">${fmt(x.nicTempMeanC, 1)} / ${fmt(x.nicTempMaxC, 1)}</td><td class="num">${x.crcErrors} / ${x.postFecErrors} / ${x.linkDownEvents}</td><td>${esc(x.laneRatio)}</td></tr>`,
    )
    .join('');
  return `<h2>Headline: ${esc(hl.phase ?? '')} per receiver (the certificate's)</h2><table id="headline"><thead><tr><th>receiver</th><th>minutes</th><th>BER, all lanes</th><th>each lane (95% upper bound)</th><th>loaded-soak FEC margin (decades)</th><th>NIC °C mean / max</th><th>CRC / post-FEC / link-down</th><th>lane ratio</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function charts(o: RunPageInput): string {
  if (!o.seriesUrl) return `<h2>Charts</h2><p class="muted" id="no-series">${esc(o.journalNote ?? 'no journal')}</p>`;
  return `<h2>Pre-FEC BER per lane, NIC temperature and throughput over time</h2>
<p class="muted">Each lane's pre-FEC errors per second over each sampling interval, divided by the lane rate (log scale; an interval with no error has no point); the dashed black line is the worst lane's 95% upper bound over the headline phase so far (its last value is the certificate's); the FEC limit and the FAIL and MARGINAL lines of the fec-margin rule; phases shaded; a red line where the decision was taken.</p>
<div id="run-charts" data-series="${esc(o.seriesUrl)}" data-live="${o.run.state === 'running' ? '1' : '0'}" data-stream="${href('/api/runs/{}/stream', o.run.runId)}"></div>`;
}

function verdict(run: RunDetail): string {
  const reasons = arr<Reason>(run.reasons);
  const ms = arr<Measurement>(run.measurements);
  const where = (x: { node?: string; phase?: string; lane?: number; rail?: number }) =>
    [x.node, x.phase, x.lane !== undefined ? `lane ${x.lane}` : undefined, x.rail !== undefined ? `rail ${x.rail}` : undefined].filter(Boolean).join(' ');
  const rrows = reasons
    .map(
      (x) =>
        `<tr><td class="${esc(x.grade ?? '')}">${esc(x.grade ?? '')}</td><td>${esc(x.rule)}</td><td>${esc(where(x))}</td><td class="num">${esc(typeof x.value === 'number' ? `${+x.value.toPrecision(4)} ${x.unit ?? ''}` : String(x.value ?? ''))}</td><td>${esc(x.limit ?? '')}</td><td class="reason">${esc(x.message)}${x.advice ? `<br><span class="muted">${esc(x.advice)}</span>` : ''}</td></tr>`,
    )
    .join('');
  const mrows = ms
    .map(
      (m) =>
        `<tr><td class="${esc(m.grade)}">${esc(m.grade)}</td><td>${esc(m.rule)}</td><td>${esc(where(m))}</td><td class="num">${esc(`${+m.value.toPrecision(4)} ${m.unit}`)}</td><td>${esc(m.limitText)}</td></tr>`,
    )
    .join('');
  if (run.state === 'running' && !reasons.length)
    return '<h2>Verdict</h2><p class="muted" id="no-verdict">None yet: the run is running (an early FAIL would stop it and show here once its record is written).</p>';
  return `<h2>Verdict</h2><table id="reasons"><thead><tr><th>grade</th><th>rule</th><th>where</th><th>value</th><th>limit</th><th>what was seen</th></tr></thead><tbody>${rrows}</tbody></table>
<details><summary>Every check against the limits (${ms.length})</summary><table id="measurements"><thead><tr><th>grade</th><th>rule</th><th>where</th><th>value</th><th>limit</th></tr></thead><tbody>${mrows}</tbody></table></details>`;
}

function ends(v: unknown): string {
  const list = arr<CableEndRecord>(v);
  if (!list.length) return '';
  const cell = (e: CableEndRecord) => {
    const id = e.identity;
    if (!id) return `<td colspan="2" class="out">${esc(e.error ?? 'not read')}</td>`;
    const anomalies = arr<string>((id as { anomalies?: unknown }).anomalies);
    const kv: [string, unknown][] = [
      ['standard', id.standard],
      ['vendor', id.vendorName],
      ['part number', id.vendorPn],
      ['serial', id.vendorSn],
      ['revision', id.vendorRev],
      ['date code', id.dateCode],
      ['vendor OUI', id.vendorOui],
      ['length', id.lengthM === null || id.lengthM === undefined ? null : `${id.lengthM} m`],
    ];
    return `<td><table class="kv">${kv.map(([k, x]) => `<tr><th>${esc(k)}</th><td>${esc(x === null || x === undefined ? '' : String(x))}</td></tr>`).join('')}</table></td><td class="anomalies">${anomalies.length ? `<ul>${anomalies.map((a) => `<li>${esc(a)}</li>`).join('')}</ul>` : '<span class="muted">none</span>'}</td>`;
  };
  return `<h2>Cable EEPROM, both ends</h2><table id="eeprom"><thead><tr><th>end (node, netdev)</th><th>identity</th><th>anomalies</th></tr></thead><tbody>${list
    .map((e) => `<tr data-node="${esc(e.node)}"><td>${esc(e.node)} ${esc(e.netdev)}</td>${cell(e)}</tr>`)
    .join('')}</tbody></table>`;
}

function conditions(v: unknown, phases: unknown): string {
  const rows = arr<Record<string, unknown>>(v);
  const ph = arr<PhaseRecord>(phases);
  const n = (x: unknown, d = 1) => (typeof x === 'number' ? fmt(x, d) : '–');
  const phaseRows = ph
    .map(
      (p) =>
        `<tr><td>${esc(p.name)}</td><td>${esc(p.kind)}</td><td class="num">${n(p.startS, 0)}</td><td class="num">${n(p.endS, 0)}</td><td>${esc(p.status)}${p.note ? ` ${esc(p.note)}` : ''}</td></tr>`,
    )
    .join('');
  const condRows = rows
    .map(
      (c) =>
        `<tr><td>${esc(String(c['node'] ?? ''))}</td><td>${esc(String(c['phase'] ?? ''))}</td><td class="num">${n(c['seconds'], 0)}</td><td class="num">${n(c['nicTempMeanC'])} / ${n(c['nicTempMaxC'])}</td><td class="num">${n(c['gpuUtilMeanPct'], 0)}</td><td class="num">${n(c['gpuTempMaxC'])}</td></tr>`,
    )
    .join('');
  return `${ph.length ? `<h2>Phases</h2><table id="phases"><thead><tr><th>phase</th><th>kind</th><th>start s</th><th>end s</th><th>status</th></tr></thead><tbody>${phaseRows}</tbody></table>` : ''}
${rows.length ? `<h2>Conditions per receiver and phase</h2><table id="conditions"><thead><tr><th>receiver</th><th>phase</th><th>seconds</th><th>NIC °C mean / max</th><th>GPU util % (mean)</th><th>GPU °C max</th></tr></thead><tbody>${condRows}</tbody></table>` : ''}`;
}

function nodes(v: unknown): string {
  const list = arr<NodeRecord>(v);
  if (!list.length) return '';
  const keys: [string, (x: NodeRecord) => unknown][] = [
    ['host', (x) => x.host],
    ['machine (DMI)', (x) => [x.dmi?.sysVendor, x.dmi?.productName].filter(Boolean).join(' ')],
    ['BIOS', (x) => [x.dmi?.biosVersion, x.dmi?.biosDate].filter(Boolean).join(' ')],
    ['OS', (x) => x.osRelease],
    ['kernel', (x) => x.kernel],
    ['NIC driver / firmware', (x) => [x.driver, x.firmware].filter(Boolean).join(' / ')],
    ['cage and rails', (x) => (x.cage ? `cage ${x.cage.index}: ${x.cage.rails.map((r) => `${r.netdev} (${r.rdmaDevice})`).join(', ')}` : '')],
    [
      'link',
      (x) =>
        [x.lanes ? `${x.lanes} lanes` : null, x.speedMbps ? `${x.speedMbps / 1000} Gb/s` : null, x.fecActive ? `FEC ${x.fecActive}` : null]
          .filter(Boolean)
          .join(', '),
    ],
    ['perftest / NCCL / nccl-tests', (x) => [x.perftestVersion, x.ncclVersion, x.ncclTestsVersion].map((y) => y ?? '–').join(' / ')],
  ];
  return `<h2>Nodes</h2><table id="nodes"><thead><tr><th></th>${list.map((x) => `<th>${esc(x.name)}</th>`).join('')}</tr></thead><tbody>${keys
    .map(([k, f]) => `<tr><th>${esc(k)}</th>${list.map((x) => `<td>${esc(String(f(x) ?? ''))}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

function benchmarks(v: unknown): string {
  const b = v as {
    ibWriteBw?: { sumMedianGbps?: number; perDirection?: { from: string; to: string; sumMedianGbps: number }[] } | null;
    nccl?: { busbwGBs?: number | null; network?: string | null; devices?: string[] } | null;
  } | null;
  if (!b) return '';
  const dirs = b.ibWriteBw?.perDirection?.map((d) => `${esc(d.from)} → ${esc(d.to)} ${fmt(d.sumMedianGbps, 1)} Gb/s`).join('; ');
  return `<h2>Benchmarks</h2><table id="benchmarks"><tr><th>ib_write_bw, both rails (median, weaker direction)</th><td>${fmt(b.ibWriteBw?.sumMedianGbps ?? null, 1)} Gb/s${dirs ? ` (${dirs})` : ''}</td></tr><tr><th>NCCL all_reduce bus bandwidth</th><td>${fmt(b.nccl?.busbwGBs ?? null, 1)} GB/s${b.nccl?.network ? ` over ${esc(b.nccl.network)} ${esc((b.nccl.devices ?? []).join(', '))}` : ''}</td></tr></table>`;
}

// A cable of a cluster: the result's sentence of the cluster's check (it grades no cable), when the run had one.
function clusterCheckRow(result: unknown, row: (k: string, v: string) => string): string[] {
  const text = (result as { clusterCheck?: { text?: unknown } } | null)?.clusterCheck?.text;
  return typeof text === 'string' ? [row('cluster check', `<span id="cluster-check">${esc(text)}</span>`)] : [];
}

// What the row was checked against, as one phrase; a record taken alone is marked, never passed off as checked.
const CHECKS: Record<string, string> = {
  run: 'its own journal, as the run wrote it',
  signed: 'its journal, re-graded on import; every line signed by the trusted lab key',
  partial: 'its journal, re-graded on import; signed by the trusted lab key up to where the run stopped',
  unverifiable: 'its journal, re-graded on import; signed, but no trusted lab key was given to check the signatures',
  unsigned: 'its journal, re-graded on import; written by a run without a lab key (not signed)',
  old: 'its journal, re-graded on import; written before journals were signed',
};
function checkedAgainst(check: string | null, state: string): string {
  if (check === null && state !== 'finished') return esc(CHECKS['run']!);
  if (check === 'record-only')
    return '<span class="out">nothing: record.json taken alone (no journal beside it), unchecked; not counted as a qualified cable</span>';
  if (check === null) return '<span class="muted">not recorded (imported before schema 7: db import again)</span>';
  return esc(CHECKS[check] ?? check);
}

// The run page.
export function runPage(o: RunPageInput): string {
  const r = o.run;
  const body = `${summary(o)}${facts(o)}${headline(r.headline)}${charts(o)}${verdict(r)}${ends(r.cableEnds)}${conditions(r.conditions, r.phases)}${benchmarks(r.benchmarks)}${nodes(r.nodes)}${jsonScript('run-info', { runId: r.runId, state: r.state, outcome: r.outcome, decidedAtS: r.decidedAtS })}`;
  return layout({ title: `Run ${r.runId}`, path: '', body, scripts: true, preload: o.seriesUrl });
}
