import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import type { RunRecord } from '../domain/record.js';
import { readJournal } from '../run/journal.js';
import { buildRecord } from '../run/record-builder.js';
import { writeJsonAtomic } from '../io/atomic-write.js';
import { exitCodeFor } from './exit-codes.js';
import type { CliIo } from './io.js';

// Re-grade a run directory from its journal (also how a SIGKILLed run becomes an ABORTED record), with today's rules
// or the version given (`verify` re-grades a certificate with the rules that signed it).
export function gradeRunDir(runDir: string, protocolPath?: string, rulesVersion?: number): RunRecord {
  const journalPath = join(runDir, 'journal.jsonl');
  if (!existsSync(journalPath)) throw new UsageError(`${runDir}: no journal.jsonl here; give a run directory (reports/<cable>/<run id>)`);
  const contents = readJournal(journalPath);
  if (!contents.lines.some((l) => l.type === 'run-start')) throw new UsageError(`${journalPath}: no run-start line; not a cablequal journal`);
  let protocol: { text: string; file: string } | undefined;
  if (protocolPath) {
    try {
      protocol = { text: readFileSync(protocolPath, 'utf8'), file: protocolPath };
    } catch (e) {
      throw new UsageError(`${protocolPath}: cannot read protocol file (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return buildRecord(contents, {
    journalFile: 'journal.jsonl',
    journalBytes: statSync(journalPath).size,
    ...(protocol ? { protocol } : {}),
    ...(rulesVersion !== undefined ? { rulesVersion } : {}),
  });
}

// `cablequal grade <run dir>`: rebuild record.json from the journal and print the verdict (today's rules unless
// --rules names another version), with what the re-grade had to decide (defaults, conversions, version) as notes.
export async function gradeCommand(args: { runDir: string; protocol?: string; rules?: number; json: boolean }, io: CliIo): Promise<number> {
  const runDir = resolve(io.cwd, args.runDir);
  const record = gradeRunDir(runDir, args.protocol ? resolve(io.cwd, args.protocol) : undefined, args.rules);
  writeJsonAtomic(join(runDir, 'record.json'), record);
  const notes = record.rules?.notes ?? [];
  if (args.json) {
    io.stdout(
      `${JSON.stringify({
        outcome: record.outcome,
        reasons: record.reasons.map((r) => ({ rule: r.rule, message: r.message, ...(r.node ? { node: r.node } : {}), ...(r.lane !== undefined ? { lane: r.lane } : {}), ...(r.phase ? { phase: r.phase } : {}) })),
        headline: record.headline ?? null,
        rulesVersion: record.rules?.version ?? null,
        notes,
        runDir,
        decidedAtS: record.decidedAtS,
        simulated: record.simulated,
      })}\n`,
    );
  } else {
    io.stdout(`${record.outcome}: ${record.cable.serial ?? 'unidentified cable'} (${runDir}; rules version ${record.rules?.version ?? '?'})\n`);
    for (const r of record.reasons) io.stdout(`  - [${r.rule}] ${r.message}\n`);
    for (const n of notes) io.stdout(`  note: ${n}\n`);
  }
  return exitCodeFor(record.outcome);
}
