import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { RunRecord } from '../domain/record.js';
import { renderAll, type LabKey } from '../report/index.js';
import { readJournal } from '../run/journal.js';
import { buildTimeseries } from '../run/timeseries.js';
import type { CliIo } from './io.js';
import { printable } from '../domain/text.js';

// Hand the finished record and its series to the output writers (certificate or run report, CSVs).
// A writer failure is reported but never loses the run: record.json and the journal are already on disk.
export async function writeReports(record: RunRecord, runDir: string, io: CliIo, labKey?: LabKey): Promise<string[]> {
  try {
    const journal = join(runDir, 'journal.jsonl');
    const series = statSync(journal, { throwIfNoEntry: false }) ? buildTimeseries(readJournal(journal)) : { points: [], throughput: [] };
    return await renderAll(record, runDir, series, { env: io.env, ...(labKey ? { labKey } : {}) });
  } catch (e) {
    io.stderr(
      `cablequal: could not write the reports of ${runDir}: ${printable((e as Error).message)} (record.json and journal.jsonl are kept; retry with cablequal report ${runDir})\n`,
    );
    return [];
  }
}
