import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../domain/errors.js';
import type { RunRecord } from '../domain/record.js';

export const RECORD_FILE = 'record.json';

// Reads <runDir>/record.json; a missing or foreign file is a UsageError naming the path (callers may skip it).
export async function readRunRecord(runDir: string): Promise<RunRecord> {
  const path = join(runDir, RECORD_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(`${path}: ${code === 'ENOENT' ? 'no record.json (not a run directory)' : (err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${path}: not valid JSON (${(err as Error).message})`);
  }
  const r = value as Partial<RunRecord> | null;
  if (!r || typeof r !== 'object' || r.schema !== 'cablequal.run/1') throw new UsageError(`${path}: not a cablequal run record (schema cablequal.run/1)`);
  if (typeof r.runId !== 'string' || typeof r.outcome !== 'string' || !r.cable || !r.benchmarks)
    throw new UsageError(`${path}: run record lacks runId, outcome, cable or benchmarks`);
  return r as RunRecord;
}
