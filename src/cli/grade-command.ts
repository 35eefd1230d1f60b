import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import type { RunRecord } from '../domain/record.js';
import { parseProtocol } from '../protocol/index.js';
import { readJournal } from '../run/journal.js';
import { buildRecord } from '../run/record-builder.js';
import { writeJsonAtomic } from '../io/atomic-write.js';
import { exitCodeFor } from './exit-codes.js';
import type { CliIo } from './io.js';

// Re-grade a run directory from its journal (also how a SIGKILLed run becomes an ABORTED record).
export function gradeRunDir(runDir: string, protocolPath?: string): RunRecord {
  const journalPath = join(runDir, 'journal.jsonl');
  if (!existsSync(journalPath)) throw new UsageError(`${runDir}: no journal.jsonl here; give a run directory (reports/<cable>/<run id>)`);
  const contents = readJournal(journalPath);
  if (!contents.lines.some((l) => l.type === 'run-start')) throw new UsageError(`${journalPath}: no run-start line; not a cablequal journal`);
  let protocol;
  if (protocolPath) {
    let text: string;
    try {
      text = readFileSync(protocolPath, 'utf8');
    } catch (e) {
      throw new UsageError(`${protocolPath}: cannot read protocol file (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    protocol = parseProtocol(text, protocolPath);
  }
  return buildRecord(contents, { journalFile: 'journal.jsonl', journalBytes: statSync(journalPath).size, ...(protocol ? { protocol } : {}) });
}

// `cablequal grade <run dir>`: rebuild record.json from the journal and print the verdict.
export async function gradeCommand(args: { runDir: string; protocol?: string; json: boolean }, io: CliIo): Promise<number> {
  const runDir = resolve(io.cwd, args.runDir);
  const record = gradeRunDir(runDir, args.protocol ? resolve(io.cwd, args.protocol) : undefined);
  writeJsonAtomic(join(runDir, 'record.json'), record);
  if (args.json) {
    io.stdout(`${JSON.stringify({ outcome: record.outcome, reasons: record.reasons.map((r) => ({ rule: r.rule, message: r.message })), runDir, decidedAtS: record.decidedAtS, simulated: record.simulated })}\n`);
  } else {
    io.stdout(`${record.outcome}: ${record.cable.serial ?? 'unidentified cable'} (${runDir})\n`);
    for (const r of record.reasons) io.stdout(`  - [${r.rule}] ${r.message}\n`);
  }
  return exitCodeFor(record.outcome);
}
