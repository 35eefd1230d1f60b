// The terminal's final summary of a run: short by default. One line per reason from its fields (grade, rule, node,
// lane, phase, value, unit, the limit it crossed, when), each fitted to the terminal; the full sentences stay in the
// certificate, record.json and `cablequal report`. A clause (the lane's runaway with heat) is said once.
import type { Reason } from '../domain/outcome.js';
import type { RunRecord } from '../domain/record.js';
import { printable } from '../domain/text.js';
import { formatNumber } from '../domain/number-format.js';

// m:ss, or h:mm:ss from an hour on.
export function clockText(s: number): string {
  const t = Math.max(0, Math.floor(s));
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const sec = String(t % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

// A reason's value as a short figure with its unit: "0.84 decades", "858x", "185.1 Gb/s", "3 errors".
export function valueText(value: number | string | undefined, unit: string | undefined): string | null {
  if (value === undefined) return null;
  if (typeof value === 'string') return printable(value);
  if (!Number.isFinite(value)) return null;
  if (unit === 'x') return `${value >= 100 ? value.toFixed(0) : formatNumber(Number(value.toPrecision(2)))}x`;
  const v = Number.isInteger(value)
    ? String(value)
    : Math.abs(value) >= 100
      ? value.toFixed(1)
      : Math.abs(value) >= 0.01
        ? value.toFixed(2)
        : value.toExponential(1);
  return unit ? `${v} ${unit === '%' ? '%' : unit}`.replace(' %', '%') : v;
}

// The part of a limit's text the grade crossed, short: "fail < 1", "marginal >= 100" (the whole text when unsure).
export function limitText(limit: string | undefined, grade: Reason['grade']): string | null {
  if (!limit) return null;
  const which = grade === 'FAIL' ? 'fail' : 'marginal';
  const m = new RegExp(`${which} (below|at) (\\S+?)( or more)?(?:[;,)]|$)`).exec(limit);
  if (!m) return null;
  return `${which} ${m[1] === 'below' ? '<' : '>='} ${m[2]}`;
}

const range = ([lo, hi]: [number, number]) => `${Math.round(lo)}-${Math.round(hi)}`;

// The lanes whose error rate ran away with the NIC temperature, one line each (said once, not in every reason).
export function runawayLines(record: RunRecord, indent = '  '): string[] {
  return (record.analysis?.laneTemp ?? [])
    .filter((l) => l.runaway)
    .map(
      (l) =>
        `${indent}${printable(l.node)} lane ${l.lane} ran away with heat: +${l.growthDecades.toFixed(1)} decades ${range(l.coolC)} to ${range(l.hotC)} °C, others +${l.othersGrowthDecades.toFixed(1)}`,
    );
}

// Cut a line to `width` characters at a word's end where one is near, an ellipsis marking the cut.
export function fit(line: string, width: number): string {
  const chars = [...line];
  if (chars.length <= width) return line;
  const cut = chars.slice(0, Math.max(1, width - 1)).join('');
  const space = cut.lastIndexOf(' ');
  return `${space > width / 2 ? cut.slice(0, space) : cut}…`;
}

// Words wrapped to `width` (a word longer than the width is cut), each line after the first indented by `indent`.
export function wrap(text: string, width: number, indent: string): string[] {
  const out: string[] = [];
  const lead = /^ */.exec(text)![0];
  let line = lead;
  for (const word of text.slice(lead.length).split(' ')) {
    const next = line === lead ? `${lead}${word}` : `${line} ${word}`;
    if ([...next].length <= width || line === lead) line = next;
    else {
      out.push(line);
      line = `${indent}${word}`;
    }
  }
  out.push(line);
  return out.map((l) => fit(l, width));
}

// One reason, short: "FAIL fec-window spark-b lane 2 soak-loaded: 0.84 decades (fail < 1) at 13:36". A PASS of
// fec-margin is the statement of the headline soak: its value is the loaded-soak FEC margin and says so. Without a figure
// (a set-up or integrity reason) its sentence stands in for it, cut to the width.
export function reasonLine(r: Reason, outcome: RunRecord['outcome']): string {
  const where = [
    r.grade ?? outcome,
    printable(r.rule),
    r.node ? printable(r.node) : null,
    r.lane !== undefined ? `lane ${r.lane}` : null,
    r.phase ? printable(r.phase) : null,
  ]
    .filter((x) => x !== null)
    .join(' ');
  const value = valueText(r.value, r.unit);
  const named = value !== null && r.rule === 'fec-margin' && r.grade === 'PASS' ? `loaded-soak FEC margin ${value}` : value;
  const limit = r.grade && r.grade !== 'PASS' ? limitText(r.limit, r.grade) : null;
  const at = r.atS !== undefined ? ` at ${clockText(r.atS)}` : '';
  return `${where}: ${named !== null ? `${named}${limit ? ` (${limit})` : ''}${at}` : printable(r.message)}`;
}

// The final summary's reason lines (indented two spaces), each at most `columns` characters, then the runaway lanes.
export function reasonLines(record: RunRecord, columns: number, indent = '  '): string[] {
  return [...record.reasons.map((r) => `${indent}${reasonLine(r, record.outcome)}`), ...runawayLines(record, indent)].map((l) => fit(l, columns));
}
