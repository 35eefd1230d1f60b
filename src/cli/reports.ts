import { statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { RunRecord } from '../domain/record.js';
import { renderAll, type LabKey } from '../report/index.js';
import { labKeyPath } from '../report/sign.js';
import { readJournal, type JournalContents } from '../run/journal.js';
import { buildTimeseries } from '../run/journal-series.js';
import { protocolDerivation } from '../protocol/derivation.js';
import type { CliIo } from './io.js';
import { printable } from '../domain/text.js';

// Hand the finished record and its series to the output writers (certificate or run report, CSVs).
// A writer failure is reported but never loses the run: record.json and the journal are already on disk. `read`: the
// journal as the run just read it back for the record (a finished run's journal is not read a second time).
// `signing`: the key to sign with, or null and why not (`report` of a journal the lab key cannot vouch for); absent:
// the lab key as configured (a finished run).
export async function writeReports(
  record: RunRecord,
  runDir: string,
  io: CliIo,
  signing?: { labKey?: LabKey | null; unsignedReason?: string },
  read?: JournalContents,
): Promise<string[]> {
  try {
    const journal = join(runDir, 'journal.jsonl');
    const contents = read ?? (statSync(journal, { throwIfNoEntry: false }) ? readJournal(journal) : null);
    const series = contents ? buildTimeseries(contents) : { points: [], throughput: [] };
    // A protocol that is not a built-in is named on the certificate with what it changes from the built-in.
    const text = contents?.lines.find((l) => l.type === 'run-start')?.['protocolText'];
    const protocolDerived = typeof text === 'string' ? protocolDerivation(text) : null;
    // An unsigned document is said where the person is, with the commands that fix it (the run itself is kept).
    const onUnsigned = (file: string) =>
      io.stderr(
        `cablequal: UNSIGNED: ${basename(file)} is not signed: no lab key at ${labKeyPath(undefined, io.env)}; \`cablequal keygen\` creates it, then \`cablequal report ${runDir}\` signs this run\n`,
      );
    return await renderAll(record, runDir, series, { env: io.env, onUnsigned, ...(signing ?? {}), protocolDerived });
  } catch (e) {
    io.stderr(
      `cablequal: could not write the reports of ${runDir}: ${printable((e as Error).message)} (record.json and journal.jsonl are kept; retry with cablequal report ${runDir})\n`,
    );
    return [];
  }
}
