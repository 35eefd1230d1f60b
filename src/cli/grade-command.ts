import { cableJson } from '../report/run-json.js';
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import type { RunRecord } from '../domain/record.js';
import { printable } from '../domain/text.js';
import { readJournal, type JournalContents } from '../run/journal.js';
import { screenJournal } from '../run/journal-shape.js';
import { buildRecord } from '../run/record-builder.js';
import { writeJsonAtomic } from '../io/atomic-write.js';
import { readInputText } from '../io/read-input.js';
import { exitCodeFor } from './exit-codes.js';
import { asOneLine } from './failure.js';
import type { CliIo } from './io.js';

// A run directory's journal, checked to be a readable file before anything reads it.
function journalOf(runDir: string): string {
  const dir = statSync(runDir, { throwIfNoEntry: false });
  if (!dir) throw new UsageError(`${runDir}: no such run directory`);
  if (!dir.isDirectory()) throw new UsageError(`${runDir}: not a directory; give a run directory (reports/<cable>/<run id>)`);
  const journalPath = join(runDir, 'journal.jsonl');
  const st = statSync(journalPath, { throwIfNoEntry: false });
  if (!st) throw new UsageError(`${runDir}: no journal.jsonl here; give a run directory (reports/<cable>/<run id>)`);
  if (!st.isFile()) throw new UsageError(`${journalPath}: not a file (a journal is a file of JSON lines)`);
  return journalPath;
}

// A run directory's journal, read (once: `report` checks its signatures and grades the same lines).
export function readRunJournal(runDir: string): JournalContents {
  return readJournal(journalOf(runDir));
}

// Re-grade a run directory from its journal (also how a SIGKILLed run becomes an ABORTED record), with today's rules
// or the version given (`verify` re-grades a certificate with the rules that signed it). Lines that cannot be read are
// left out and listed in record.journal.problems.
export function gradeRunDir(runDir: string, protocolPath?: string, rulesVersion?: number, read?: JournalContents): RunRecord {
  const journalPath = journalOf(runDir);
  const contents = screenJournal(read ?? readJournal(journalPath));
  if (!contents.lines.some((l) => l.type === 'run-start')) {
    const why = contents.problems?.find((p) => p.reason.startsWith('run-start'));
    throw new UsageError(
      `${journalPath}: no readable run-start line${why ? ` (line ${why.line}: ${why.reason})` : ''}; not a cablequal journal, or its first line is damaged: nothing to grade`,
    );
  }
  const protocol = protocolPath ? { text: readInputText(protocolPath, 'protocol'), file: protocolPath } : undefined;
  return buildRecord(contents, {
    journalFile: 'journal.jsonl',
    journalBytes: statSync(journalPath).size,
    ...(protocol ? { protocol } : {}),
    ...(rulesVersion !== undefined ? { rulesVersion } : {}),
  });
}

// The journal lines a record was built without, as warning lines (what `grade`, `report` and `verify` print).
export function journalWarnings(record: RunRecord, runDir: string): string[] {
  const j = record.journal;
  if (!j.badLines) return [];
  const shown = (j.problems ?? []).slice(0, 5).map((p) => `line ${p.line}: ${p.reason}`);
  const more = j.badLines > shown.length ? `; and ${j.badLines - shown.length} more (record.json lists up to 50)` : '';
  return [printable(`warning: ${join(runDir, j.file)}: ${j.badLines} line(s) unreadable, left out of the record: ${shown.join('; ')}${more}`)];
}

// Write record.json; a full disk is an ERROR line naming the file (exit 3 by the caller), the journal untouched.
export function writeRecord(runDir: string, record: RunRecord): void {
  try {
    writeJsonAtomic(join(runDir, 'record.json'), record);
  } catch (e) {
    throw asOneLine(e, '; journal.jsonl is untouched: grade again once this is fixed', join(runDir, 'record.json')) ?? e;
  }
}

// `cablequal grade <run dir>...`: rebuild each record.json from its journal and print the verdicts (today's rules
// unless --rules names another version), with what the re-grade had to decide (defaults, conversions, version) as
// notes. The exit code is the most severe of the runs' (4 ABORTED > 3 ERROR > 1 FAIL > 0).
export async function gradeCommand(args: { runDirs: string[]; protocol?: string; rules?: number; json: boolean }, io: CliIo): Promise<number> {
  let worst = 0;
  // The journal's signatures are checked against the lab's trusted key, when this machine has one.
  const { trustedLabPublicKey } = await import('../report/sign.js');
  const { gradeTrustLine, trustOf } = await import('./journal-trust.js');
  const pem = (await trustedLabPublicKey(io.env))?.pem ?? null;
  for (const dir of args.runDirs) {
    const runDir = resolve(io.cwd, dir);
    const contents = readRunJournal(runDir);
    const trust = trustOf(contents, pem);
    const record = gradeRunDir(runDir, args.protocol ? resolve(io.cwd, args.protocol) : undefined, args.rules, contents);
    const said = gradeTrustLine(join(runDir, 'journal.jsonl'), trust);
    if (said) io.stderr(`${printable(said)}\n`);
    for (const w of journalWarnings(record, runDir)) io.stderr(`${w}\n`);
    writeRecord(runDir, record);
    const notes = record.rules?.notes ?? [];
    if (args.json) {
      io.stdout(
        `${JSON.stringify({
          ...cableJson(record, { runDir, certificate: null, document: null }),
          notes,
          journalSignatures: trust.status,
          ...(record.journal.badLines ? { badJournalLines: record.journal.badLines } : {}),
        })}\n`,
      );
    } else {
      io.stdout(
        `${record.outcome}: ${printable(record.cable.serial ?? 'unidentified cable')} (${runDir}; rules version ${record.rules?.version ?? '?'})${record.kind === 'setup-check' ? `; set-up check (protocol ${printable(record.protocol.name)}), not a qualification` : ''}\n`,
      );
      for (const r of record.reasons) io.stdout(`  - [${printable(r.rule)}] ${printable(r.message)}\n`);
      for (const n of notes) io.stdout(`  note: ${printable(n)}\n`);
    }
    worst = Math.max(worst, exitCodeFor(record.outcome));
  }
  return worst;
}
