import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { median } from 'simple-statistics';
import type { RunRecord } from '../domain/record.js';
import { writeFileAtomic } from '../io/atomic-write.js';
import { CSV_COLUMNS, readRunRecord, runRow, toCsv } from '../report/index.js';
import type { RunResult } from '../domain/result.js';
import { resultOfRecord } from '../rules/result.js';
import { escapeXml } from '../report/escape.js';
import type { BatchState, CableState } from './state.js';
import { throughputLines, throughputOf } from './throughput.js';
import { sci } from '../domain/number-format.js';

// One manifest cable as the summary shows it: its record and result, or why it has none. A golden drift marks every
// verdict of the batch not trusted (the bench changed); the record's outcome stands, the reason says so.
export interface SummaryRow {
  cable: CableState;
  record: RunRecord | null;
  result: RunResult | null;
  outcome: string; // PASS, MARGINAL, FAIL, ERROR, ABORTED, or '' when not tested
  reason: string;
}

export async function summaryRows(dir: string, s: BatchState): Promise<SummaryRow[]> {
  const drift = s.goldenDrift && !s.goldenDrift.ok ? s.goldenDrift.detail : null;
  const rows: SummaryRow[] = [];
  for (const c of s.cables.filter((x) => !x.golden)) {
    const record = c.status === 'done' && c.runDir ? await readRunRecord(join(dir, c.runDir)) : null;
    const outcome = record?.outcome ?? (c.status === 'refused' || c.benchError ? 'ERROR' : '');
    const first = record?.reasons[0];
    const reason = record
      ? `${drift ? `bench-drift: not trusted, the golden cable drifted (${drift}); ` : ''}${first ? `${first.rule}: ${first.message}` : ''}`
      : c.status === 'refused'
        ? `refused: ${c.reason}`
        : (c.reason ?? (c.status === 'pending' ? 'not tested yet' : c.status));
    rows.push({ cable: c, record, result: record ? resultOfRecord(record) : null, outcome, reason });
  }
  return rows;
}

// batch.csv: the compare columns, one row per manifest cable (untested cables keep label, serial, outcome, reason).
export function batchCsv(rows: SummaryRow[]): string {
  const names = CSV_COLUMNS['compare.csv'].map((c) => c.name);
  return toCsv(
    names,
    rows.map((r) => {
      if (r.record) return runRow(r.record);
      const by: Record<string, string | null> = { label: r.cable.label, serial: r.cable.serial, outcome: r.outcome, reasons: r.reason };
      return names.map((n) => by[n] ?? null);
    }),
  );
}

const fmtBer = (b: number | null) => (b === null ? '–' : sci(b));

// batch.html: self-contained (no script, no external file), relative links to each cable's certificate or run report.
export function batchHtml(s: BatchState, rows: SummaryRow[]): string {
  // Qualifications and set-up checks are counted apart: a set-up check qualifies no cable.
  const setup = rows.filter((r) => r.result?.kind === 'setup-check');
  const counted = rows.filter((r) => r.result?.kind !== 'setup-check');
  const tally = (rs: SummaryRow[]) => {
    const counts = new Map<string, number>();
    for (const r of rs) counts.set(r.outcome || 'not tested', (counts.get(r.outcome || 'not tested') ?? 0) + 1);
    return counts;
  };
  const counts = tally(counted);
  const parts = new Map<string, SummaryRow[]>();
  for (const r of rows.filter((x) => x.record)) {
    const pn = r.record!.cable.partNumber ?? '(unknown)';
    parts.set(pn, [...(parts.get(pn) ?? []), r]);
  }
  const link = (c: CableState) =>
    c.report
      ? `<a href="${escapeXml(c.report)}">${escapeXml(c.report.endsWith('certificate.html') ? 'certificate' : c.report.endsWith('setup-check.html') ? 'set-up check' : 'run report')}</a>`
      : c.runDir
        ? escapeXml(c.runDir)
        : '';
  const partRows = [...parts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([pn, rs]) => {
      const judged = rs.filter((r) => r.result?.qualifies);
      const pass = judged.filter((r) => r.outcome === 'PASS').length;
      // The loaded soak's bound (a zero-error soak bounds the BER, it does not measure 0).
      const bers = judged.map((r) => r.result!.loadedSoak?.preFecBerUb95 ?? null).filter((b): b is number => b !== null);
      const checks = rs.filter((r) => r.result?.kind === 'setup-check').length;
      return `<tr><td>${escapeXml(pn)}</td><td>${rs.length}</td><td>${judged.length ? `${pass}/${judged.length} (${Math.round((100 * pass) / judged.length)}%)` : '–'}</td><td>${checks}</td><td>${fmtBer(bers.length ? Math.min(...bers) : null)}</td><td>${fmtBer(bers.length ? median(bers) : null)}</td><td>${fmtBer(bers.length ? Math.max(...bers) : null)}</td></tr>`;
    });
  const bad = rows.filter((r) => r.outcome === 'FAIL' || r.outcome === 'MARGINAL');
  const golden = s.cables.filter((c) => c.golden);
  const simulated = rows.some((r) => r.record?.simulated);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cablequal batch ${escapeXml(s.manifest)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #bbb;padding:.25em .6em;text-align:left}th{background:#eee}.PASS{color:#060}.MARGINAL{color:#a60}.FAIL,.ERROR{color:#b00}</style></head>
<body>
<h1>Batch: ${escapeXml(s.manifest)}</h1>
${simulated ? '<p><strong>SIMULATED LAB: no real hardware was measured.</strong></p>' : ''}
<p>Protocol ${escapeXml(s.protocol)}; pairs: ${s.pairs.map(escapeXml).join(' | ')}; ${rows.length} cables.</p>
${throughputHtml(s)}
${s.goldenDrift ? `<p class="${s.goldenDrift.ok ? 'PASS' : 'ERROR'}">Golden cable ${escapeXml(s.golden)}: ${escapeXml(s.goldenDrift.detail)}${s.goldenDrift.ok ? '' : ' — no verdict of this batch is trusted (the bench changed, not the cables).'}</p>` : s.golden ? `<p>Golden cable ${escapeXml(s.golden)}: not compared (both golden runs are needed).</p>` : ''}
<h2>Verdicts</h2>
${counted.length ? countsTable(counts) : '<p>No qualification in this batch: 0 cables qualified.</p>'}
${setup.length ? `<h2>Set-up checks (not qualifications: they qualify no cable)</h2><p>${setup.length} cable(s) ran a set-up check (protocol ${escapeXml(s.protocol)}, short of the burn-in).</p>${countsTable(tally(setup))}` : ''}
<h2>Per part number</h2>
<table><tr><th>part number</th><th>cables</th><th>pass rate (qualifications)</th><th>set-up checks</th><th>pre-FEC BER loaded (95% bound) min</th><th>median</th><th>max</th></tr>${partRows.join('')}</table>
<h2>FAIL and MARGINAL cables</h2>
${bad.length ? `<table><tr><th>label</th><th>serial</th><th>verdict</th><th>main reason</th><th>report</th></tr>${bad.map((r) => `<tr><td>${escapeXml(r.cable.label)}</td><td>${escapeXml(r.cable.serial)}</td><td class="${escapeXml(r.outcome)}">${escapeXml(r.outcome)}</td><td>${escapeXml(r.reason)}</td><td>${link(r.cable)}</td></tr>`).join('')}</table>` : '<p>None.</p>'}
<h2>All cables</h2>
<table><tr><th>label</th><th>pair</th><th>serial</th><th>part number</th><th>verdict</th><th>main reason</th><th>warnings</th><th>report</th></tr>${rows.map((r) => `<tr><td>${escapeXml(r.cable.label)}</td><td>${r.cable.pair + 1}</td><td>${escapeXml(r.cable.serial)}</td><td>${escapeXml(r.record?.cable.partNumber ?? '')}</td><td class="${escapeXml(r.outcome)}">${escapeXml(r.outcome || 'not tested')}${r.result?.kind === 'setup-check' ? ' (set-up check)' : ''}</td><td>${escapeXml(r.reason)}</td><td>${escapeXml(r.cable.warnings.join('; '))}</td><td>${link(r.cable)}</td></tr>`).join('')}</table>
${golden.length ? `<h2>Golden cable runs</h2><table><tr><th>run</th><th>verdict</th><th>report</th></tr>${golden.map((c) => `<tr><td>${escapeXml(c.label)}</td><td>${escapeXml(c.outcome ?? c.status)}</td><td>${link(c)}</td></tr>`).join('')}</table>` : ''}
</body></html>
`;
}

// Runs by outcome, one column each.
function countsTable(counts: Map<string, number>): string {
  return `<table><tr>${[...counts.keys()].map((k) => `<th class="${escapeXml(k)}">${escapeXml(k)}</th>`).join('')}</tr><tr>${[...counts.values()].map((v) => `<td>${v}</td>`).join('')}</tr></table>`;
}

// The batch's measured throughput (src/batch/throughput.ts), when a cycle has ended.
function throughputHtml(s: BatchState): string {
  const t = throughputOf(s);
  return t ? `<p>${throughputLines(t).map(escapeXml).join('<br>')}</p>` : '';
}

// Write batch.csv and batch.html into the batch directory.
export async function writeBatchSummary(dir: string, s: BatchState): Promise<{ csv: string; html: string; rows: SummaryRow[] }> {
  await mkdir(dir, { recursive: true });
  const rows = await summaryRows(dir, s);
  const csv = await writeFileAtomic(join(dir, 'batch.csv'), batchCsv(rows));
  const html = await writeFileAtomic(join(dir, 'batch.html'), batchHtml(s, rows));
  return { csv, html, rows };
}
