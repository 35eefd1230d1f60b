import { dirname, join, basename } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { median } from 'simple-statistics';
import { UsageError } from '../domain/errors.js';
import type { RunRecord } from '../domain/record.js';
import { CABLE_VERDICTS } from '../domain/outcome.js';
import { writeFileAtomic } from '../io/atomic-write.js';
import { summarise } from './certificate-content.js';
import { CSV_COLUMNS } from './csv-columns.js';
import { runRow, toCsv, type CsvCell } from './csv.js';
import { readRunRecord } from './record-io.js';

export interface CompareResult {
  paths: string[]; // compare CSV, then the per-part-number CSV
  records: RunRecord[];
  warnings: string[]; // one line per skipped directory
}

// Per part number: how often it passes and how its loaded BER spreads (judged runs only).
export function partSummaryRows(records: RunRecord[]): CsvCell[][] {
  const groups = new Map<string, RunRecord[]>();
  for (const r of records) {
    const key = r.cable.partNumber ?? '';
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([pn, rs]) => {
      const judged = rs.filter((r) => CABLE_VERDICTS.includes(r.outcome));
      const count = (o: string) => rs.filter((r) => r.outcome === o).length;
      const bers = judged.map((r) => summarise(r).preFecBerLoaded).filter((b): b is number => b !== null);
      const vendors = [...new Set(rs.map((r) => r.cable.vendor).filter((v): v is string => !!v))].sort();
      return [
        pn,
        vendors.join('; '),
        rs.length,
        judged.length,
        count('PASS'),
        count('MARGINAL'),
        count('FAIL'),
        rs.length - judged.length,
        judged.length ? count('PASS') / judged.length : null,
        bers.length ? median(bers) : null,
        bers.length ? Math.max(...bers) : null,
      ];
    });
}

// The by-part file sits beside `out`: compare.csv -> compare-by-part.csv.
export function byPartPath(out: string): string {
  const base = basename(out).replace(/\.csv$/i, '');
  return join(dirname(out), `${base}-by-part.csv`);
}

// One row per run (oldest first) plus a per-part-number summary; directories without a readable record are skipped with a warning.
// `read`: how a run's record is had (the CLI's rebuilds it from the journal, as db import does: record.json alone is
// not trusted).
export async function compareRuns(runDirs: string[], out: string, read: (runDir: string) => Promise<RunRecord> = readRunRecord): Promise<CompareResult> {
  const warnings: string[] = [];
  const records: RunRecord[] = [];
  for (const dir of runDirs) {
    try {
      records.push(await read(dir));
    } catch (err) {
      if (err instanceof UsageError) warnings.push(`skipped ${dir}: ${err.message}`);
      else throw err;
    }
  }
  records.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.runId.localeCompare(b.runId));
  await mkdir(dirname(out), { recursive: true });
  const main = await writeFileAtomic(
    out,
    toCsv(
      CSV_COLUMNS['compare.csv'].map((c) => c.name),
      records.map(runRow),
    ),
  );
  const parts = await writeFileAtomic(
    byPartPath(out),
    toCsv(
      CSV_COLUMNS['compare-by-part.csv'].map((c) => c.name),
      partSummaryRows(records),
    ),
  );
  return { paths: [main, parts], records, warnings };
}
