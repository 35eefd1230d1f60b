import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { nestingExceeds } from '../domain/json-depth.js';
import type { RunRecord } from '../domain/record.js';
import { problemOf } from '../io/json-schema.js';
import { readInputText } from '../io/read-input.js';
import { runRecordProblem } from './record-schema.js';

export const RECORD_FILE = 'record.json';

// Reads <runDir>/record.json; a missing or foreign file is a UsageError naming the path (callers may skip it), and so
// is one that is not a regular file below 16 MiB (a FIFO is refused at once, never waited on: read-input.ts).
export async function readRunRecord(runDir: string): Promise<RunRecord> {
  const path = join(runDir, RECORD_FILE);
  if (!lstatSync(path, { throwIfNoEntry: false })) throw new UsageError(`${path}: no record.json (not a run directory)`);
  const text = readInputText(path, 'record');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${path}: not valid JSON (${(err as Error).message})`);
  }
  const problem = recordProblem(value);
  if (problem) throw new UsageError(`${path}: ${problem}`);
  return value as RunRecord;
}

// Why a parsed record.json cannot be used (too deep, not a cablequal run record, a field of the wrong type), or null.
// Checked against the record's JSON Schema (record-schema.ts) before anything reads it: what compare, regress and
// db import read from it is what the record builder writes.
export function recordProblem(value: unknown): string | null {
  const r = value as Partial<RunRecord> | null;
  if (!r || typeof r !== 'object' || r.schema !== 'cablequal.run/1') return 'not a cablequal run record (schema cablequal.run/1)';
  if (nestingExceeds(value, 64)) return 'nested deeper than 64 levels: not a run record cablequal wrote';
  const p = runRecordProblem(value);
  return p ? `not a run record cablequal can read: ${problemOf('record', p)}; rebuild it with cablequal grade` : null;
}
