// The journal broke mid-run (issue #32 item 5): the disk filled, the file was deleted, the run directory stopped being
// writable. The writer noticed at the next line or checkpoint (journal.ts); the loads are stopped by the run's exit
// path; here the run ends ERROR with its cause kept. Every complete line the run wrote is read back from the open fd
// (a deleted file keeps its bytes while the fd is open), a setup-error line naming the cause and the run-end are
// chained (and signed) after them, and the journal, record.json are written to the run directory, or when it cannot
// take them, to a fallback directory the result names. A later `cablequal grade` of that journal says the same
// ERROR journal-write, never "controller stopped".
import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Reason } from '../domain/outcome.js';
import { writeFileAtomicSync, writeJsonAtomic } from '../io/atomic-write.js';
import { ensureDir } from '../io/ensure-dir.js';
import type { RunResult } from './qualify.js';
import { readJournal, type JournalWriter } from './journal.js';
import { buildRecord } from './record-builder.js';

// Where a run's journal and record go when its run directory cannot take them.
export function rescueDir(runId: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(env['CABLEQUAL_RESCUE_DIR'] ?? join(tmpdir(), 'cablequal-rescued'), runId);
}

// What to do about each cause.
function adviceFor(errno: string): string {
  if (errno === 'ENOSPC' || errno === 'EDQUOT') return 'free space on the controller (or choose another --out) and run again';
  if (errno === 'ENOENT')
    return 'something deleted the journal while the run wrote it (a cleanup job, a person): keep run directories out of its way and run again';
  return 'make the run directory writable again (or choose another --out) and run again';
}

export function journalFailed(
  journal: JournalWriter,
  at: { runDir: string; runId: string; tS: number; phase: string; endedAt: string },
  log: Logger,
): RunResult {
  const failure = journal.failure!;
  const reason: Reason = { rule: 'journal-write', message: failure.message, value: failure.errno, advice: adviceFor(failure.errno) };
  let content: Buffer | null = null;
  try {
    content = journal.rescue([
      { type: 'setup-error', tS: at.tS, phase: at.phase, reason },
      { type: 'run-end', tS: at.tS, endedAt: at.endedAt },
    ]);
  } catch (e) {
    log.error({ err: e }, 'the journal could not be read back from its fd');
  }
  try {
    journal.close();
  } catch {
    // already failed: the fd is closed by close() either way
  }
  if (!content) throw failure;
  for (const dir of [at.runDir, rescueDir(at.runId)]) {
    try {
      ensureDir(dir, 'run directory');
      const path = join(dir, 'journal.jsonl');
      writeFileAtomicSync(path, content);
      const contents = readJournal(path, { maxBytes: Number.MAX_SAFE_INTEGER }); // its own journal: no size bound
      const record = buildRecord(contents, { journalFile: 'journal.jsonl', journalBytes: statSync(path).size });
      writeJsonAtomic(join(dir, 'record.json'), record);
      log.error({ reason, dir }, 'run ended ERROR: the journal could not be written');
      return { record, runDir: dir, journalContents: contents, ...(dir !== at.runDir ? { rescuedFrom: at.runDir } : {}) };
    } catch (e) {
      log.error({ err: e, dir }, 'journal and record not written here');
    }
  }
  throw failure; // neither the run directory nor the fallback took them: nothing claims to be final
}
