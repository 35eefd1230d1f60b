import { dirname, join, basename } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { median } from 'simple-statistics';
import { UsageError } from '../domain/errors.js';
import type { RunRecord } from '../domain/record.js';
import { writeFileAtomic } from '../io/atomic-write.js';
import { resultOfRecord } from '../rules/result.js';
import { CSV_COLUMNS } from './csv-columns.js';
import { runRow, toCsv, type CsvCell } from './csv.js';
import { readRunRecord } from './record-io.js';

export interface CompareResult {
  paths: string[]; // compare CSV, then the per-part-number CSV
  records: RunRecord[];
  warnings: string[]; // one line per skipped directory
}

// Per part number: how often its qualifications pass and how the loaded soak's BER bound spreads over them; set-up
// checks and golden runs are counted apart (they qualify no cable of the part), preflights are never read.
export function partSummaryRows(records: RunRecord[]): CsvCell[][] {
  const groups = new Map<string, RunRecord[]>();
  for (const r of records) {
    if (resultOfRecord(r).kind === 'preflight') continue;
    const key = r.cable.partNumber ?? '';
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([pn, rs]) => {
      const results = rs.map(resultOfRecord);
      const judged = results.filter((x) => x.qualifies);
      const count = (o: string) => judged.filter((x) => x.outcome === o).length;
      const bounds = judged.map((x) => x.loadedSoak?.preFecBerUb95 ?? null).filter((b): b is number => b !== null);
      const vendors = [...new Set(rs.map((r) => r.cable.vendor).filter((v): v is string => !!v))].sort();
      return [
        pn,
        vendors.join('; '),
        rs.length,
        judged.length,
        count('PASS'),
        count('MARGINAL'),
        count('FAIL'),
        results.filter((x) => !x.judged).length,
        judged.length ? count('PASS') / judged.length : null,
        bounds.length ? median(bounds) : null,
        bounds.length ? Math.max(...bounds) : null,
        results.filter((x) => x.kind === 'setup-check').length,
        results.filter((x) => x.role === 'golden').length,
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
      const record = await read(dir);
      // A preflight checks the nodes: it is not a run of a cable, never compared.
      if (resultOfRecord(record).kind === 'preflight') warnings.push(`skipped ${dir}: a preflight (checks the nodes, qualifies no cable)`);
      else records.push(record);
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
