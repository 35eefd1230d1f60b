import { join } from 'node:path';
import type { Reason } from '../domain/outcome.js';
import type { RunRecord, TogetherRecord } from '../domain/record.js';
import { differentCagesWarning } from '../domain/node.js';
import { writeFileAtomic } from '../io/atomic-write.js';
import { certificateContent, documentKind, type CertificateContent, type DocumentKind, type ProtocolDerived } from './certificate-content.js';
import { zeroErrorBound } from '../rules/qualification.js';
import { laneRateChart, throughputChart } from './charts.js';
import { escapeXml as e } from './escape.js';
import { fmtCount, fmtExp, fmtFixed, fmtRatio } from '../domain/number-format.js';
import { EMPTY_TIMESERIES, type RunTimeseries } from './series.js';

// What the HTML says about the signed JSON beside it (the HTML itself is not signed).
export interface SignatureNote {
  fingerprint: string | null; // null = unsigned
  unsignedReason?: string;
  journalSha256: string | null;
}

export interface HtmlWriterExtras {
  timeseries?: RunTimeseries;
  signature?: SignatureNote;
  protocolDerived?: ProtocolDerived | null;
}

const CSS = `
@page { size: A4; margin: 10mm 11mm; }
* { box-sizing: border-box; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; font-size: 8pt; line-height: 1.25; color: #111; margin: 0 auto; max-width: 188mm; padding: 0; }
h1 { font-size: 14pt; margin: 0 0 1mm; }
h2 { font-size: 9.5pt; margin: 2.5mm 0 1mm; border-bottom: 0.6pt solid #888; padding-bottom: 0.5mm; }
h3 { font-size: 8.5pt; margin: 1.5mm 0 0.5mm; }
p { margin: 0.8mm 0; }
table { width: 100%; border-collapse: collapse; table-layout: fixed; margin: 0.5mm 0 1mm; }
th, td { border: 0.4pt solid #bbb; padding: 0.25mm 0.8mm; text-align: left; vertical-align: top; overflow-wrap: anywhere; word-break: break-word; }
th { background: #eee; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.lanes td.num { white-space: nowrap; font-size: 7pt; }
table.lanes th, table.nodes th { font-size: 7pt; }
table.nodes td { font-size: 7pt; }
.mono { font-family: "DejaVu Sans Mono", monospace; font-size: 7pt; overflow-wrap: anywhere; word-break: break-all; }
.head { display: flex; justify-content: space-between; align-items: flex-start; gap: 4mm; }
.verdict { font-size: 20pt; font-weight: bold; padding: 1.5mm 4mm; border: 1.2pt solid; border-radius: 2mm; white-space: nowrap; }
.verdict .kind { font-size: 8pt; text-align: center; }
.v-PASS { color: #0a6b1f; border-color: #0a6b1f; background: #e6f4ea; }
.v-MARGINAL { color: #8a5a00; border-color: #8a5a00; background: #fff4d6; }
.v-FAIL { color: #a50e0e; border-color: #a50e0e; background: #fce8e6; }
.v-ERROR, .v-ABORTED { color: #333; border-color: #333; background: #eee; }
.banner { border: 1.5pt solid; padding: 1.5mm 3mm; margin: 1.5mm 0; font-weight: bold; font-size: 10pt; }
.banner.sim { color: #7a2e00; border-color: #c25400; background: repeating-linear-gradient(45deg, #fff3e0, #fff3e0 6px, #ffe0b2 6px, #ffe0b2 12px); }
.banner.report { color: #222; border-color: #222; background: #f1f1f1; }
.banner.unsigned { color: #7a2e00; border-color: #c25400; font-size: 8.5pt; }
.grade-FAIL { color: #a50e0e; font-weight: bold; }
.grade-MARGINAL { color: #8a5a00; font-weight: bold; }
.grade-PASS { color: #0a6b1f; }
.anomalies li { color: #8a3b00; }
ul { margin: 0.5mm 0 1mm 5mm; padding: 0; }
.chart { display: block; width: 100%; height: auto; margin: 1mm 0; break-inside: avoid; }
section { break-inside: auto; }
.muted { color: #555; }
footer { margin-top: 2mm; border-top: 0.6pt solid #888; padding-top: 1mm; font-size: 7pt; color: #333; }
@media screen { body { padding: 8mm; } }
`;

function where(r: { node?: string | undefined; phase?: string | undefined; lane?: number | undefined; rail?: number | undefined }): string {
  return [r.node, r.phase, r.lane !== undefined ? `lane ${r.lane}` : undefined, r.rail !== undefined ? `rail ${r.rail}` : undefined]
    .filter(Boolean)
    .join(' · ');
}

function fmtValue(v: number | string | undefined, unit?: string): string {
  if (v === undefined) return '';
  if (typeof v === 'string') return `${v}${unit ? ` ${unit}` : ''}`;
  const abs = Math.abs(v);
  const s = abs !== 0 && (abs < 1e-3 || abs >= 1e5) ? fmtExp(v, 3) : Number.isInteger(v) ? String(v) : v.toFixed(2);
  return `${s}${unit ? ` ${unit}` : ''}`;
}

function reasonsTable(reasons: Reason[], graded: boolean): string {
  if (reasons.length === 0) return '<p>No rule was violated.</p>';
  const rows = reasons
    .map(
      (r) =>
        `<tr>${graded ? `<td class="grade-${e(r.grade ?? '')}">${e(r.grade ?? '')}</td>` : ''}<td>${e(r.rule)}</td><td>${e(where(r))}</td><td class="num">${e(fmtValue(r.value, r.unit))}</td><td>${e(r.limit ?? '')}</td><td>${e(r.message)}${r.advice ? `<br><span class="muted">${e(r.advice)}</span>` : ''}${r.atS !== undefined ? ` <span class="muted">(at ${e(fmtFixed(r.atS, 0))} s)</span>` : ''}</td></tr>`,
    )
    .join('');
  return `<table class="reasons"><colgroup>${graded ? '<col style="width:11%">' : ''}<col style="width:12%"><col style="width:17%"><col style="width:12%"><col style="width:18%"><col></colgroup><thead><tr>${graded ? '<th>grade</th>' : ''}<th>rule</th><th>where</th><th class="num">value</th><th>limit</th><th>what was seen</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function cableTable(c: CertificateContent['cable']): string {
  const ends = c.ends;
  if (ends.length === 0) return '<p>No EEPROM was read.</p>';
  if (ends.every((x) => x.vendorPn === null && x.vendorName === null))
    return `<p>No EEPROM identity was read: ${ends.map((x) => `${e(x.node)} ${e(x.netdev)}: ${e(x.error ?? 'not read')}`).join('; ')}. Family ${e(c.family)}, trained ${e(c.trainedMode ?? '—')}.</p>`;
  const row = (label: string, f: (x: (typeof ends)[number]) => string) => `<tr><th>${e(label)}</th>${ends.map((x) => `<td>${e(f(x))}</td>`).join('')}</tr>`;
  const atten = (x: (typeof ends)[number]) =>
    Object.entries(x.attenuationDb)
      .map(([k, v]) => `${k} ${v} dB`)
      .join(', ');
  return `<table class="cable"><colgroup><col style="width:20%"></colgroup><thead><tr><th>EEPROM field</th>${ends.map((x) => `<th>${e(x.node)} · ${e(x.netdev)}</th>`).join('')}</tr></thead><tbody>${[
    row('vendor', (x) => x.vendorName ?? x.error ?? 'not read'),
    row('part number', (x) => x.vendorPn ?? ''),
    row('serial number', (x) => x.vendorSn ?? ''),
    row('revision', (x) => x.vendorRev ?? ''),
    row('vendor OUI', (x) => x.vendorOui ?? ''),
    row('date code', (x) => x.dateCode ?? ''),
    row('length (EEPROM)', (x) => (x.lengthM === null ? '' : `${x.lengthM} m`)),
    row('standard / identifier', (x) => [x.standard, x.identifier].filter(Boolean).join(' · ')),
    row('attenuation', atten),
  ].join('')}</tbody></table>
<p>Family <b>${e(c.family)}</b> as the EEPROM says${c.familyBasis ? ` (${e(c.familyBasis)})` : ''}; trained <b>${e(c.trainedMode ?? '—')}</b>${
    c.endsAgree === false ? ' — <b class="grade-FAIL">the two ends report different identities</b>' : c.endsAgree ? ' — both ends report the same identity' : ''
  }.</p>${c.anomalies.length ? `<h3>EEPROM anomalies (the EEPROM is not trusted blindly)</h3><ul class="anomalies">${c.anomalies.map((a) => `<li>${e(a)}</li>`).join('')}</ul>` : '<p>No EEPROM anomalies found.</p>'}`;
}

function conditions(c: CertificateContent): string {
  const cell = (...parts: (string | null | undefined)[]) => e(parts.filter((x) => x != null && x !== '').join(' · ') || '—');
  const rows = c.nodes
    .map(
      (n) =>
        `<tr><td>${e(n.name)}</td><td>${e(n.host)}</td><td>${e(n.cage ? `cage ${n.cage.index}: ${n.cage.rails.map((r) => r.netdev).join(', ')}` : '—')}</td><td>${cell(n.dmi?.productName, n.dmi?.biosVersion ? `BIOS ${n.dmi.biosVersion}` : null)}</td><td>${cell(n.osRelease, n.kernel)}</td><td>${cell(n.driver)}</td><td>${cell(n.firmware)}</td><td>${e([n.speedMbps ? `${n.speedMbps / 1000}G` : null, n.lanes ? `${n.lanes} lanes` : null, n.fecActive ? `FEC ${n.fecActive}` : null].filter(Boolean).join(', ') || '—')}</td></tr>`,
    )
    .join('');
  const s = c.sampling;
  // The software each node ran, one short value per cell (what a lab compares between two batches).
  const v = (x: string | undefined) => e(x ?? '—');
  const software = c.nodes
    .map(
      (n) =>
        `<tr><td>${e(n.name)}</td><td>${v(n.gpuDriverVersion)}</td><td>${v(n.cudaVersion)}</td><td>${v(n.ncclVersion)}</td><td>${v(n.ncclTestsVersion)}</td><td>${v(n.openMpiVersion)}</td><td>${v(n.perftestVersion)}</td><td>${v(n.ethtoolVersion)}</td></tr>`,
    )
    .join('');
  return `<table class="nodes"><colgroup><col style="width:8%"><col style="width:9%"><col style="width:17%"><col style="width:15%"><col style="width:17%"><col style="width:12%"><col style="width:11%"><col></colgroup><thead><tr><th>node</th><th>host</th><th>cage / rails</th><th>machine / BIOS</th><th>OS / kernel</th><th>NIC driver</th><th>NIC firmware</th><th>link</th></tr></thead><tbody>${rows}</tbody></table>
<table class="nodes software"><colgroup><col style="width:8%"></colgroup><thead><tr><th>node</th><th>GPU driver</th><th>CUDA (driver)</th><th>NCCL</th><th>nccl-tests</th><th>Open MPI</th><th>perftest</th><th>ethtool</th></tr></thead><tbody>${software}</tbody></table>
<table class="run"><colgroup><col style="width:20%"><col></colgroup><tbody>
<tr><th>protocol</th><td>${e(c.protocol.name)} <span class="mono">sha256 ${e(c.protocol.sha256)}</span>${c.protocolRecorded ? `; graded with these limits, not those of the protocol that ran: ${e(c.protocolRecorded.name)} <span class="mono">sha256 ${e(c.protocolRecorded.sha256)}</span>` : ''}${c.protocolDerived ? `<br><b>not a built-in protocol</b>: derived from ${e(c.protocolDerived.from)} <span class="mono">sha256 ${e(c.protocolDerived.fromSha256)}</span>, changing ${c.protocolDerived.changes.length ? c.protocolDerived.changes.map((x) => `<span class="mono">${e(x)}</span>`).join('; ') : 'nothing but its name'}` : ''}</td></tr>
<tr><th>started / ended</th><td>${e(c.startedAt)} → ${e(c.endedAt ?? 'not ended')}${c.decidedAtS !== null ? ` (decided at ${e(fmtFixed(c.decidedAtS, 0))} s)` : ''}</td></tr>
<tr><th>hardware</th><td>${c.simulated ? `<b>SIMULATED</b> (scenario ${e(c.scenario ?? '—')}): no real cable was measured` : 'real nodes'}</td></tr>${
    c.sharedNodes.length
      ? `<tr><th>shared nodes</th><td>${e(c.sharedNodes.join(', '))} carried another cable under test at the same time: their 200 Gb/s was shared, the benchmarks ran one after the other, the soaks overlapped (lane errors do not depend on payload)</td></tr>`
      : ''
  }${c.together ? `<tr><th>mode</th><td>${e(togetherStatement(c.together))}</td></tr>` : ''}${c.clusterCheck ? `<tr><th>cluster check</th><td>${e(c.clusterCheck)}</td></tr>` : ''}${c.cable.differentCages ? `<tr><th>cages</th><td>${e(differentCagesWarning(c.cable.differentCages))}</td></tr>` : ''}
<tr><th>phases</th><td>${c.phases.map((p) => `${e(p.name)} ${e(fmtFixed(p.startS, 0))}–${e(p.endS === null ? '…' : fmtFixed(p.endS, 0))} s (${e(p.status)}${p.note ? `: ${e(p.note)}` : ''})`).join('; ')}</td></tr>
${soakLoadRows(c)}
<tr><th>sampling</th><td>${e(s.ticks)} ticks, interval p50 ${e(fmtFixed(s.intervalP50Ms, 0))} ms, p99 ${e(fmtFixed(s.intervalP99Ms, 0))} ms, node skew p99 ${e(fmtFixed(s.skewP99Ms, 0))} ms${s.rawSkewP99Ms !== undefined ? ' (node clock offsets removed)' : ''}, ${s.gaps.length} gap(s)${s.gaps.map((g) => `; ${e(g.node)} ${e(g.fromS)}–${e(g.toS)} s ${e(g.reason)}`).join('')}</td></tr>
</tbody></table>`;
}

// What the two PCIe functions of each cage counted (rules version 4 on grades the larger of the two for every counter).
function functionsText(d: NonNullable<CertificateContent['functionDivergence']>): string {
  if (!d.length) return 'both PCIe functions of each cage counted every graded counter alike';
  const each = d.map((x) => `${e(x.node)} ${e(x.counter)}: ${x.counts.map((c) => `${e(c.netdev)} ${e(c.count)}`).join(', ')}`);
  return `the PCIe functions of a cage counted differently (the larger is graded): ${each.join('; ')}`;
}

// How a cable qualified beside another was run: what it shared, and what that changes (and does not) in its figures.
function togetherStatement(t: TogetherRecord): string {
  if (t.topology && t.link) {
    const others = t.with.map((o) => `${o.link ?? `cage ${o.cage}`}${o.serial ? ` (serial ${o.serial})` : ''}, run ${o.runId}`).join('; ');
    return (
      `qualified in place in a ${t.topology} of Sparks (cablequal run --cluster): this cable joins ${t.link.replace('--', ' to ')}, ` +
      `qualified at once with the cluster's other cables (${others}). The benchmarks ran one cable at a time, against the one-cable ` +
      `limits; each soak started with every cable loaded together, so this cable carried its share of its nodes' ~200 Gb/s (its load ` +
      `below, judged against that share of its own ib_write_bw figure) while its wire ran at the full 212.5 Gb/s line rate and its ` +
      `lane errors were counted as with one cable`
    );
  }
  const others = t.with.map((o) => `the cable in cage ${o.cage}${o.serial ? ` (serial ${o.serial})` : ''}, run ${o.runId}`).join(', ');
  return (
    `qualified at once with ${others}; this cable in cage ${t.cage} (cablequal run --port both). The benchmarks ran one cable at a time, ` +
    `against the one-cable limits; each soak started with both cables loaded together over the nodes' ~200 Gb/s (the same two PCIe ` +
    `rails serve both cages), so this cable carried about half the payload while both loads ran (its load below, judged against ` +
    `its share of its own ib_write_bw figure) while its wire ran at the full 212.5 Gb/s line rate, its lane errors counted as with ` +
    `one cable, and the NIC carried the same total traffic and heat`
  );
}

// The load each soak measured (each direction against its own ib_write_bw figure, the GPUs from their load's start)
// and counters cleared during the run: the conditions the verdict stands on.
function soakLoadRows(c: CertificateContent): string {
  const out: string[] = [];
  const soaks = [...new Set([...(c.soakLoad?.link ?? []), ...(c.soakLoad?.gpu ?? [])].map((x) => x.phase))];
  for (const phase of soaks) {
    const link = (c.soakLoad?.link ?? [])
      .filter((d) => d.phase === phase)
      .map(
        (d) =>
          `${e(d.from)} → ${e(d.to)} ${d.medianGbps === null ? 'no rows' : `${fmtFixed(d.medianGbps, 1)} Gb/s median`}${d.pctOfBenchmark !== null ? ` (${fmtFixed(d.pctOfBenchmark, 1)} % of ${d.sharedBy ? `its share (1/${e(d.sharedBy)}${d.sharedUntilS !== undefined ? `, all of it from ${fmtFixed(d.sharedUntilS, 0)} s when the other cable's load stopped` : ''}) of ` : ''}its ib_write_bw ${fmtFixed(d.benchmarkGbps, 1)})` : ''}, ${e(d.rows)} rows, longest wait ${fmtFixed(d.longestGapS, 0)} s`,
      );
    const gpu = (c.soakLoad?.gpu ?? [])
      .filter((g) => g.phase === phase)
      .map(
        (g) =>
          `${e(g.node)} GPUs ${g.meanPct === null ? 'not read' : `${fmtFixed(g.meanPct, 1)} % mean`} from ${fmtFixed(g.fromS, 0)} s (${e(g.samples)} readings)`,
      );
    out.push(`<tr><th>load in ${e(phase)}</th><td>${[...link, ...gpu].join('; ')}</td></tr>`);
  }
  if (c.counterResets?.length) {
    const resets = c.counterResets.map(
      (r) => `${e(r.node)} at ${fmtFixed(r.tS, 0)} s (${e(r.phase)}): ${r.rebooted ? 'rebooted' : 'cleared on the running node, counted from zero'}`,
    );
    out.push(`<tr><th>counter resets</th><td>${resets.join('; ')}</td></tr>`);
  }
  if (c.functionDivergence) out.push(`<tr><th>PCIe functions</th><td>${functionsText(c.functionDivergence)}</td></tr>`);
  return out.join('\n');
}

function throughput(c: CertificateContent): string {
  const b = c.benchmarks;
  const parts: string[] = [];
  if (b.ibWriteBw) {
    const railRows = (rails: typeof b.ibWriteBw.perRail, from?: string) =>
      rails
        .map(
          (r) =>
            `<tr><td>${from ? `${e(from)} ` : ''}rail ${e(r.rail)}</td><td>${e(r.device)}</td><td class="num">${fmtFixed(r.minGbps, 2)}</td><td class="num">${fmtFixed(r.medianGbps, 2)}</td><td class="num">${fmtFixed(r.maxGbps, 2)}</td><td class="num">${e(r.samples)}</td></tr>`,
        )
        .join('');
    const sumRow = (label: string, v: number) => `<tr><th colspan="3">${label}</th><td class="num"><b>${fmtFixed(v, 2)}</b></td><td colspan="2"></td></tr>`;
    // One stream per direction since runs record perDirection, each direction alone since they say so; earlier runs
    // show a -b sum halved per rail.
    const how = b.ibWriteBw.directions === 'one-at-a-time' ? 'one direction at a time' : 'per direction';
    const body = b.ibWriteBw.perDirection
      ? b.ibWriteBw.perDirection
          .map((d) => railRows(d.perRail, `${d.from} → ${d.to}`) + sumRow(`${e(d.from)} → ${e(d.to)}: both rails summed (medians)`, d.sumMedianGbps))
          .join('')
      : railRows(b.ibWriteBw.perRail) + sumRow('both rails summed (medians)', b.ibWriteBw.sumMedianGbps);
    parts.push(
      `<table class="throughput"><thead><tr><th>ib_write_bw (${how})</th><th>device</th><th class="num">min Gb/s</th><th class="num">median Gb/s</th><th class="num">max Gb/s</th><th class="num">runs</th></tr></thead><tbody>${body}</tbody></table>`,
    );
  } else parts.push('<p>ib_write_bw: not run.</p>');
  const nccl = b.nccl;
  const loop = b.loopback.length
    ? `Loopback (card health, no wire): ${b.loopback.map((l) => `${e(l.node)} rail ${e(l.rail)} ${fmtFixed(l.gbps, 1)} Gb/s`).join(', ')}.`
    : '';
  parts.push(
    `<p>NCCL all_reduce bus bandwidth: ${nccl?.busbwGBs != null ? `<b>${fmtFixed(nccl.busbwGBs, 2)} GB/s</b> (max ${fmtFixed(nccl.maxBusbwGBs, 2)} GB/s, ${e(nccl.network ?? '?')}, ${nccl.ranks ? nccl.ranks.map((r) => `${e(r.node)}: ${e(r.devices.join(', ') || '—')}`).join('; ') : `devices ${e(nccl.devices.join(', ') || '—')}`})` : 'not run'}. ${loop}</p>`,
  );
  return parts.join('');
}

// Registered extra readings (src/probes/readings.ts) per node and phase: min, mean, max (the id names the unit).
function readingsTable(c: CertificateContent): string {
  const per = c.perNodePhase.filter((p) => p.readings && Object.keys(p.readings).length > 0);
  if (per.length === 0) return '';
  const rows = per
    .flatMap((p) =>
      Object.entries(p.readings!).map(
        ([id, r]) =>
          `<tr><td>${e(p.node)}</td><td>${e(p.phase)}</td><td>${e(id)}</td><td class="num">${fmtFixed(r.min, 2)}</td><td class="num">${fmtFixed(r.mean, 2)}</td><td class="num">${fmtFixed(r.max, 2)}</td><td class="num">${e(r.n)}</td></tr>`,
      ),
    )
    .join('');
  return `<h3>Other readings</h3><table class="readings"><thead><tr><th>node</th><th>phase</th><th>reading</th><th class="num">min</th><th class="num">mean</th><th class="num">max</th><th class="num">values</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function laneTable(c: CertificateContent): string {
  const per = c.perNodePhase;
  if (per.length === 0) return '<p>No error-rate analysis (the run did not get that far).</p>';
  const maxLanes = Math.max(...per.map((p) => p.laneBer.length));
  const laneHead = [...Array(maxLanes).keys()].map((l) => `<th class="num">lane ${l} BER (ub95)</th>`).join('');
  // Protocol order, then receiver, so a reader scans one phase at a time.
  const order = new Map(c.phases.map((ph, i) => [ph.name, i]));
  const rows = [...per]
    .sort((a, b) => (order.get(a.phase) ?? 1e9) - (order.get(b.phase) ?? 1e9) || a.node.localeCompare(b.node))
    .map((p) => {
      const lanes = [...Array(maxLanes).keys()]
        .map((l) => {
          const s = p.laneBer[l];
          const worst = p.worstLane === l && p.worstLaneRatio >= 10;
          return `<td class="num${worst ? ' grade-FAIL' : ''}">${s ? `${fmtExp(s.ber)}<br><span class="muted">≤${fmtExp(s.berUb95)}</span>` : ''}</td>`;
        })
        .join('');
      return `<tr><td>${e(p.node)}</td><td>${e(p.phase)}</td><td class="num">${fmtFixed(p.seconds, 0)}</td><td class="num">${fmtExp(p.preFecBer)}<br><span class="muted">≤${fmtExp(p.preFecBerUb95)}</span></td>${lanes}<td class="num">${e(p.laneRatioText)}</td><td class="num">${fmtCount(p.crcErrors)}</td><td class="num">${fmtCount(p.postFecErrors)}</td><td class="num">${fmtCount(p.linkDownEvents)}${p.recoveries !== undefined ? `<br><span class="muted">${fmtCount(p.recoveries)} recovered</span>` : ''}</td><td class="num">${fmtFixed(p.nicTempMaxC, 0)}</td></tr>`;
    })
    .join('');
  return `<table class="lanes"><colgroup><col style="width:8%"><col style="width:10%"><col style="width:5%"><col style="width:9%"></colgroup><thead><tr><th>receiver</th><th>phase</th><th class="num">s</th><th class="num">pre-FEC BER (ub95)</th>${laneHead}<th class="num">worst lane ratio</th><th class="num">CRC</th><th class="num">post-FEC</th><th class="num">link down</th><th class="num">NIC max °C</th></tr></thead><tbody>${rows}</tbody></table>`;
}

// What the loaded soak proved, per receiver: the statement a PASS leads with (a FAIL or MARGINAL leads with its
// reasons; its figures are in the lane table and certificate.json's headline).
function headline(c: CertificateContent): string {
  const h = c.headline;
  // Only a soak is a headline: a run without one graded states none (src/rules/result.ts).
  if (!h || h.receivers.length === 0 || c.result.headlinePhase !== h.phase) return '';
  const rows = h.receivers
    .map((r) => {
      const lanes = r.lanes.length
        ? r.lanes.map((l) => `${l.lane}: ≤${fmtExp(l.berUb95)}${l.errors ? ` (${fmtCount(l.errors)})` : ''}`).join('<br>')
        : 'no per-lane counters';
      const temp = r.nicTempMeanC === null ? '—' : `${fmtFixed(r.nicTempMeanC, 1)} (max ${fmtFixed(r.nicTempMaxC, 1)})`;
      const margin = r.fecMarginDecades === null ? '—' : fmtFixed(r.fecMarginDecades, 1);
      return `<tr><td>${e(r.node)}</td><td class="num">${fmtFixed(r.seconds / 60, 1)}</td><td class="num">${e(temp)}</td><td class="num"><b>≤${fmtExp(r.berUb95)}</b><br><span class="muted">${fmtCount(r.errors)} errors</span></td><td class="num">${lanes}</td><td class="num"><b>${e(margin)}</b></td><td class="num">${fmtCount(r.crcErrors)} / ${fmtCount(r.postFecErrors)} / ${fmtCount(r.linkDownEvents)}</td><td>${e(r.laneRatio)}</td></tr>`;
    })
    .join('');
  // The bound zero errors would give over this soak's own duration (its shortest receiver), never a longer one's.
  const zero = zeroErrorBound(Math.min(...h.receivers.map((r) => r.seconds)));
  const what =
    c.kind === 'setup-check'
      ? `What the loaded soak showed (${e(h.phase)}, ${e(zero.duration)}: a set-up check, not a qualification)`
      : `What the loaded soak proved (${e(h.phase)}, per receiver and lane)`;
  return `<section class="headline"><h2>${what}</h2><table class="lanes"><colgroup><col style="width:9%"><col style="width:7%"><col style="width:13%"><col style="width:13%"><col style="width:20%"><col style="width:9%"><col style="width:11%"><col></colgroup><thead><tr><th>receiver</th><th class="num">min</th><th class="num">NIC °C mean</th><th class="num">pre-FEC BER (95% upper bound, 212.5 Gb/s)</th><th class="num">per lane (95% upper bound)</th><th class="num">loaded-soak FEC margin (decades)</th><th class="num">CRC / post-FEC / link down</th><th>lane ratio</th></tr></thead><tbody>${rows}</tbody></table><p class="muted">Bounds are exact Poisson 95% bounds: zero errors over ${e(zero.duration)} at 212.5 Gb/s bound the BER below ${e(fmtExp(zero.ber))}. The loaded-soak FEC margin is how many decades the worst lane's upper bound in this soak sits below the RS(544,514) design input BER 2.4e-4; the FEC margin (below) is the same over every graded soak. Shorter phases are in the table below, never stated here.</p></section>`;
}

// Lanes whose error rate grew with the NIC temperature (a runaway is the failing clone's signature).
function temperatureLine(c: CertificateContent): string {
  const runaway = c.laneTemperature.filter((l) => l.runaway);
  const grew = (runaway.length ? runaway : c.laneTemperature.filter((l) => l.growing)).slice(0, 4);
  if (grew.length === 0) return '';
  const item = (l: CertificateContent['laneTemperature'][number]) =>
    `${e(l.node)} lane ${e(l.lane)} ${l.runaway ? '<b class="grade-FAIL">runaway</b>: ' : ''}×10^${fmtFixed(l.growthDecades, 1)} from ${fmtFixed(l.coolC[0], 0)}–${fmtFixed(l.coolC[1], 0)} °C to ${fmtFixed(l.hotC[0], 0)}–${fmtFixed(l.hotC[1], 0)} °C (others ×10^${fmtFixed(l.othersGrowthDecades, 1)})`;
  return `<p>Error rate versus NIC temperature (coolest third of the soak temperatures against the hottest): ${grew.map(item).join('; ')}.</p>`;
}

function summaryLine(c: CertificateContent): string {
  const s = c.summary;
  return `<p>FEC margin <b class="fec-margin">${fmtFixed(s.fecMarginDecades, 2)} decades</b> below the RS(544,514) design input BER 2.4e-4 (worst lane's 95% bound over the graded soaks) · worst lane ratio <b>${s.maxLaneRatio ? `${fmtRatio(s.maxLaneRatio)}×` : 'no errors'}</b> · loaded/idle BER ratio ${fmtRatio(s.loadedVsIdleRatio)} · CRC ${fmtCount(s.crcErrors)} · post-FEC ${fmtCount(s.postFecErrors)} · link-down events ${fmtCount(s.linkDownEvents)}${s.recoveries !== undefined ? ` · PHY recoveries without a link drop ${fmtCount(s.recoveries)}` : ''} · NIC max ${fmtFixed(s.nicTempMaxC, 0)} °C${s.logRateVsTempSlope !== null ? ` · error rate vs temperature ${fmtFixed(s.logRateVsTempSlope, 2)} decades/°C` : ''}.</p>`;
}

const GRADE_ORDER = { PASS: 0, MARGINAL: 1, FAIL: 2 } as const;

// One row per rule (count, value range, worst grade and where) keeps the page count fixed; certificate.json lists every check.
function measurementsTable(c: CertificateContent, graded: boolean): string {
  if (c.measurements.length === 0) return '';
  const groups = new Map<string, CertificateContent['measurements']>();
  for (const m of c.measurements) groups.set(m.rule, [...(groups.get(m.rule) ?? []), m]);
  const rows = [...groups.entries()]
    .map(([rule, ms]) => {
      const worst = ms.reduce((w, m) => (GRADE_ORDER[m.grade] > GRADE_ORDER[w.grade] ? m : w), ms[0]!);
      const values = ms.map((m) => m.value).filter((v) => Number.isFinite(v));
      const lo = values.length ? Math.min(...values) : NaN;
      const hi = values.length ? Math.max(...values) : NaN;
      const range =
        rule === 'lane-ratio' && hi === 0
          ? 'no errors'
          : ms.length === 1 || lo === hi
            ? fmtValue(worst.value, worst.unit)
            : `${fmtValue(lo)} … ${fmtValue(hi, worst.unit)}`;
      const limits = [...new Set(ms.map((m) => m.limitText))];
      const whereText = ms.length === 1 ? where(worst) : graded && worst.grade !== 'PASS' ? `worst: ${where(worst)}` : `${ms.length} checks`;
      return `<tr><td>${e(rule)}</td><td>${e(whereText)}</td><td class="num">${e(range)}</td><td>${e(limits.length === 1 ? limits[0]! : limits.join('; '))}</td>${graded ? `<td class="grade-${e(worst.grade)}">${e(worst.grade)}${ms.length > 1 ? ` <span class="muted">(${ms.filter((m) => m.grade === worst.grade).length}/${ms.length})</span>` : ''}</td>` : ''}</tr>`;
    })
    .join('');
  return `<h3>Checked against the protocol's limits (one row per rule; every check is in the JSON)</h3><table class="measurements"><colgroup><col style="width:16%"><col style="width:26%"><col style="width:18%"><col></colgroup><thead><tr><th>rule</th><th>where</th><th class="num">value</th><th>limit</th>${graded ? '<th>grade</th>' : ''}</tr></thead><tbody>${rows}</tbody></table>`;
}

function charts(c: CertificateContent, ts: RunTimeseries): string {
  const tMax = Math.max(0, ...c.phases.map((p) => p.endS ?? p.startS));
  const lane = c.nodes.map((n) =>
    laneRateChart({ title: `Per-lane pre-FEC error rate, receiver ${n.name}`, points: ts.points.filter((p) => p.node === n.name), phases: c.phases, tMax }),
  );
  return `<div class="charts">${lane.join('')}${throughputChart({ title: 'Throughput per rail', points: ts.throughput, phases: c.phases, tMax })}</div><p class="muted">Each plotted point is the maximum over its time bucket (at most 200 per series), so short bursts stay visible. A rate of zero is drawn on the “0” line below the lowest decade.</p>`;
}

function footer(c: CertificateContent, sig: SignatureNote | undefined, jsonName: string): string {
  const signed = sig?.fingerprint
    ? `Signed JSON: ${e(jsonName)} (Ed25519, lab key <span class="mono">${e(sig.fingerprint)}</span>). Verify with <code>cablequal verify</code>.`
    : `UNSIGNED: ${e(jsonName)} carries no signature${sig?.unsignedReason ? ` (${e(sig.unsignedReason)})` : ''}.`;
  return `<footer>Run ${e(c.runId)} · ${signed}${sig?.journalSha256 ? ` Journal SHA-256 <span class="mono">${e(sig.journalSha256)}</span>.` : ''} This HTML is a rendering; the signed JSON is the record of truth.</footer>`;
}

// Each kind of document says what it is first.
const TITLES: Record<DocumentKind, string> = {
  certificate: 'Cable qualification certificate',
  'setup-check': 'Set-up check — NOT a qualification certificate',
  'run-report': 'Run report — NOT a certificate',
};

// Pure: the whole self-contained page (inline CSS and SVG, no scripts, fonts or links) for one run.
export function renderCertificateHtml(
  record: RunRecord,
  timeseries: RunTimeseries = EMPTY_TIMESERIES,
  signature?: SignatureNote,
  protocolDerived?: ProtocolDerived | null,
): string {
  const c = certificateContent(record, protocolDerived);
  // A certificate or a set-up check states a verdict; a run report does not.
  const judged = c.kind !== 'run-report';
  const title = TITLES[c.kind];
  const ident = [c.cable.vendor, c.cable.partNumber, c.cable.serial ? `SN ${c.cable.serial}` : null].filter(Boolean).join(' · ') || 'cable identity unknown';
  // A set-up check's verdict box says so itself, so that no crop of the page reads as a qualification.
  const verdictBox = `<div class="verdict v-${e(c.outcome)}">${e(c.outcome)}${c.kind === 'setup-check' ? '<div class="kind">set-up check</div>' : ''}</div>`;
  const banners = [
    c.simulated
      ? `<div class="banner sim">SIMULATED RUN — no real cable or hardware was measured${c.scenario ? ` (scenario: ${e(c.scenario)})` : ''}. This document says nothing about any physical cable.</div>`
      : '',
    !judged
      ? `<div class="banner report">This run ended ${e(c.outcome)}: the harness could not judge the cable, so no verdict is given. Fix the cause below and run again.</div>`
      : '',
    c.kind === 'setup-check'
      ? `<div class="banner report">SET-UP CHECK — NOT A QUALIFICATION. Protocol ${e(c.protocol.name)} runs short of the burn-in a qualification needs: ${e(c.shortOfQualification.join('; '))}. Its verdict says how this short run went (a FAIL is a failure); a PASS qualifies no cable. Qualify it with the full protocol (protocols/spark-burnin.json).</div>`
      : '',
    judged && !signature?.fingerprint
      ? `<div class="banner unsigned">UNSIGNED — no lab key was available${signature?.unsignedReason ? ` (${e(signature.unsignedReason)})` : ''}.</div>`
      : '',
  ].join('');
  const jsonName = `${c.kind}.json`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="generator" content="cablequal">
<title>${e(title)} · ${e(ident)} · ${e(c.runId)}</title><style>${CSS}</style></head>
<body class="${c.kind}">
<div class="head"><div><h1>${e(title)}</h1><p><b>${e(ident)}</b>${c.label ? ` · label ${e(c.label)}` : ''} · run <span class="mono">${e(c.runId)}</span></p></div>${verdictBox}</div>
${banners}
${judged && c.outcome === 'PASS' ? headline(c) : ''}<section class="verdict-reasons"><h2>${judged ? `Verdict and reasons <span class="muted">(grading rules version ${e(c.rulesVersion)})</span>` : 'Why the run stopped'}</h2>${reasonsTable(c.reasons, judged)}</section>
<section class="cable-identity"><h2>Cable identity (module EEPROM, both ends)</h2>${cableTable(c.cable)}</section>
<section class="conditions"><h2>Conditions</h2>${conditions(c)}</section>
<section class="measurements"><h2>Measurements</h2>${throughput(c)}${laneTable(c)}${readingsTable(c)}${c.perNodePhase.length ? summaryLine(c) : ''}${temperatureLine(c)}${measurementsTable(c, judged)}</section>
<section class="charts-section"><h2>Charts</h2>${charts(c, timeseries)}</section>
${footer(c, signature, jsonName)}
</body></html>
`;
}

// Writes certificate.html (setup-check.html for a set-up check, run-report.html for ERROR/ABORTED) atomically into the run dir.
export async function writeCertificateHtml(record: RunRecord, dir: string, extras: HtmlWriterExtras = {}): Promise<string[]> {
  const path = join(dir, `${documentKind(record)}.html`);
  await writeFileAtomic(path, renderCertificateHtml(record, extras.timeseries, extras.signature, extras.protocolDerived));
  return [path];
}
