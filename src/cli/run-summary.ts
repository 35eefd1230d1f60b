// The terminal's final summary of a finished run (src/report/summary-lines.ts makes its reason lines).
import { basename, isAbsolute, relative } from 'node:path';
import type { RunRecord } from '../domain/record.js';
import { printable } from '../domain/text.js';
import { resultOfRecord } from '../rules/result.js';
import { clockText, fit, reasonLines, wrap } from '../report/summary-lines.js';
import type { CliIo } from './io.js';

// What a finished run says on stdout without --json, short: outcome and cable, what it may claim, the FEC margin, one
// line per reason fitted to the terminal, what to do, then where the document is. The full sentences are in the
// document, record.json and `cablequal report`. A path is never cut (under the working directory it is shown from there).
export function printOutcome(record: RunRecord, runDir: string, io: CliIo, prefix = '', document: string | null = null): void {
  const columns = io.columns?.() ?? 80;
  const line = (s: string) => io.stdout(`${fit(s, columns)}\n`);
  for (const l of outcomeLines(record, prefix)) line(l);
  for (const l of reasonLines(record, columns)) io.stdout(`${l}\n`);
  const deciding = resultOfRecord(record).deciding;
  if (deciding?.advice) for (const l of wrap(`  what to do: ${printable(deciding.advice)}`, columns, '    ')) io.stdout(`${l}\n`);
  if (document) io.stdout(`  ${DOCUMENT_NAMES[basename(document)] ?? 'report'}: ${shownPath(document, io.cwd)}\n`);
  io.stdout(`  run directory: ${runDir}\n`);
}

// What a document is called where the summary points at it.
const DOCUMENT_NAMES: Record<string, string> = {
  'certificate.html': 'certificate',
  'setup-check.html': 'set-up check report',
  'run-report.html': 'run report',
};

// A path as the summary shows it: from the working directory when it lies under it.
function shownPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

// The lines before the reasons: outcome and cable, the run's kind and role, the FEC margin, when it was decided.
function outcomeLines(record: RunRecord, prefix: string): string[] {
  const result = resultOfRecord(record);
  const cable = [record.cable.vendor ?? '?', record.cable.partNumber ?? ''].map(printable).join(' ');
  const out = [`${prefix}${record.outcome}${record.simulated ? ' (simulated lab)' : ''}: ${cable} serial ${printable(record.cable.serial ?? '?')}`];
  if (result.kind === 'setup-check') out.push(`  set-up check (protocol ${printable(record.protocol.name)}): not a qualification, qualifies no cable`);
  if (result.role === 'golden') out.push('  golden reference cable (checks the bench; not a cable of the box)');
  if (result.fecMargin) out.push(`  FEC margin ${result.fecMargin.value.toFixed(2)} decades (${locatedText(result.fecMargin)})`);
  const more = [
    result.worstLaneBer ? `worst-lane BER < ${result.worstLaneBer.value.toExponential(1)} (95% bound)` : null,
    result.decidedAtS !== null ? `decided at ${clockText(result.decidedAtS)}` : null,
  ].filter((x) => x !== null);
  if (more.length) out.push(`  ${more.join('; ')}`);
  return out;
}

// Where a figure was seen: "spark-b lane 2, soak-loaded".
function locatedText(l: { node: string; lane: number | null; phase: string }): string {
  return `${printable(l.node)}${l.lane !== null ? ` lane ${l.lane}` : ''}, ${printable(l.phase)}`;
}
