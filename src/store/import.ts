// `cablequal db import`: rebuild the store's index from run directories (their record.json, else their journal),
// idempotently: the same runs imported twice leave every row as it was (upsert by run id, unchanged content skipped).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { readInputText } from '../io/read-input.js';
import { readJournal } from '../run/journal.js';
import { buildRecord } from '../run/record-builder.js';
import { chainOfLines } from '../run/journal-chain.js';
import { journalTrust, journalTrustLine } from '../run/journal-signing.js';
import { KNOWN_RULES_VERSIONS } from '../rules/versions.js';
import { recordProblem } from '../report/record-io.js';
import type { RunRecord } from '../domain/record.js';
import { resultOfRecord } from '../rules/result.js';
import { componentRegExp } from '../transport/ssh-config-files.js';
import { certificateOf, regressionOfJournal } from './run-files.js';
import type { JournalCheck, RunPlace } from './run-row.js';
import type { BatchRow, ResultsStore } from './store.js';

const BATCH_STATE = 'batch-state.json';
const MAX_DEPTH = 6;

// Expand the arguments as a shell would (cablequal does it itself, so quoted globs like 'reports/*/*' work);
// a literal path that does not exist, or a glob that matches nothing, is a usage error naming it.
export function expandPaths(args: string[], cwd: string): string[] {
  const out: string[] = [];
  for (const a of args) {
    const abs = isAbsolute(a) ? a : resolve(cwd, a);
    const parts = abs.split(sep).filter((p, i) => p !== '' || i === 0);
    if (!parts.some((p) => componentRegExp(p))) {
      if (!existsSync(abs)) throw new UsageError(`${a}: no such file or directory`);
      out.push(abs);
      continue;
    }
    let found = [parts[0] === '' ? sep : parts[0]!];
    for (const part of parts.slice(1)) {
      const re = componentRegExp(part);
      const next: string[] = [];
      for (const base of found) {
        if (!re) {
          if (existsSync(join(base, part))) next.push(join(base, part));
          continue;
        }
        let names: string[];
        try {
          names = readdirSync(base);
        } catch {
          continue;
        }
        for (const n of names.sort()) if (re.test(n) && (n[0] !== '.' || part[0] === '.')) next.push(join(base, n));
      }
      found = next;
    }
    if (!found.length) throw new UsageError(`${a}: matches nothing`);
    out.push(...found);
  }
  return [...new Set(out)];
}

function isRunDir(d: string): boolean {
  return existsSync(join(d, 'record.json')) || existsSync(join(d, 'journal.jsonl'));
}

// Run directories at or below each path (reports/, reports/<cable>, a batch directory, a run directory).
export function findRunDirs(paths: string[]): string[] {
  const out: string[] = [];
  const walk = (d: string, depth: number) => {
    if (isRunDir(d)) {
      out.push(d);
      return;
    }
    if (depth >= MAX_DEPTH) return;
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1)))
      if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules') walk(join(d, e.name), depth + 1);
  };
  for (const p of paths) if (statSync(p).isDirectory()) walk(p, 0);
  return [...new Set(out)];
}

// A run's record, from its journal (issue #32 item 2): the journal is re-graded (with the rules version record.json
// names, when it is one this cablequal knows) and that is what the store takes; a record.json that disagrees is
// named in a warning, never imported over it. A journal whose signatures do not hold (journal-signing.ts) is refused.
// A directory without a cablequal journal is taken from its record.json as it stands, with a warning saying so.
export function recordOfRunDir(runDir: string, trustedPem: string | null = null): { record: unknown; warnings: string[]; check: JournalCheck } {
  const recordPath = join(runDir, 'record.json');
  let stated: unknown = null;
  if (existsSync(recordPath)) {
    const text = readInputText(recordPath, 'record');
    try {
      stated = JSON.parse(text);
    } catch (e) {
      throw new UsageError(`${recordPath}: not valid JSON (${(e as Error).message}); rebuild it with cablequal grade ${runDir}`);
    }
    const problem = recordProblem(stated);
    if (problem) throw new UsageError(`${recordPath}: ${problem}`);
  }
  const journal = join(runDir, 'journal.jsonl');
  const contents = existsSync(journal) ? readJournal(journal) : null;
  if (!contents?.lines.some((l) => l.type === 'run-start')) {
    if (stated !== null)
      return {
        record: stated,
        check: 'record-only',
        warnings: [
          `${runDir}: no cablequal journal beside record.json: taken from the record alone, unchecked (stored as journal_check record-only, counted as no qualified cable)`,
        ],
      };
    throw new UsageError(`${journal}: no run-start line; not a cablequal journal`);
  }
  const trust = journalTrust(contents, contents.chain ?? chainOfLines(contents.lines, contents.lineNos), trustedPem);
  if (trust.status === 'invalid') throw new UsageError(`not imported: ${journalTrustLine(journal, trust)!}`);
  const version = (stated as { rules?: { version?: unknown } } | null)?.rules?.version;
  const built = buildRecord(contents, {
    journalFile: 'journal.jsonl',
    journalBytes: statSync(journal).size,
    ...(typeof version === 'number' && KNOWN_RULES_VERSIONS.includes(version) ? { rulesVersion: version } : {}),
  });
  const warnings: string[] = [];
  const s = stated as { runId?: unknown; outcome?: unknown } | null;
  if (s && (s.outcome !== built.outcome || s.runId !== built.runId))
    warnings.push(
      `${recordPath} says ${String(s.outcome)} for run ${String(s.runId)}, its journal grades ${built.outcome} for run ${built.runId}: the journal's is imported (rebuild record.json with cablequal grade ${runDir})`,
    );
  if (trust.status === 'unverifiable' || trust.status === 'partial') warnings.push(journalTrustLine(journal, trust)!);
  return { record: built, warnings, check: trust.status };
}

// The id of a batch: its directory on its controller (a batch directory is one batch).
export function batchIdOf(controller: string, dir: string): string {
  return `${controller}:${dir}`;
}

// The batch row from a batch directory's state file.
export function batchRowOf(dir: string, controller: string, now: string): { row: BatchRow; roles: Map<string, RunPlace['batchRole']> } | null {
  const path = join(dir, BATCH_STATE);
  if (!existsSync(path)) return null;
  let s: {
    schema?: string;
    manifest?: string;
    protocol?: string;
    golden?: string | null;
    cables?: { runDir?: string | null; golden?: string; status?: string }[];
    goldenDrift?: { ok: boolean; detail: string } | null;
  };
  try {
    s = JSON.parse(readInputText(path, 'batchState')) as typeof s;
  } catch {
    return null; // not a batch state cablequal can read (or not a regular file): the runs are imported without it
  }
  if (s.schema !== 'cablequal.batch/1' || !Array.isArray(s.cables)) return null;
  const roles = new Map<string, RunPlace['batchRole']>();
  for (const c of s.cables)
    if (c.runDir) roles.set(resolve(dir, c.runDir), c.golden === 'first' ? 'golden-first' : c.golden === 'last' ? 'golden-last' : 'cable');
  return {
    row: {
      id: batchIdOf(controller, dir),
      name: basename(dir),
      dir,
      controller,
      manifest: s.manifest ?? null,
      protocol_name: s.protocol ?? null,
      golden_serial: s.golden ?? null,
      cables: s.cables.filter((c) => !c.golden).length,
      tested: s.cables.filter((c) => !c.golden && c.status === 'done').length,
      drift_ok: s.goldenDrift ? (s.goldenDrift.ok ? 1 : 0) : null,
      drift_detail: s.goldenDrift?.detail ?? null,
      updated_at: now,
    },
    roles,
  };
}

// The batch directory a run directory sits in (<batch>/runs/<label>/<run id>), if any.
export function batchDirOf(runDir: string): string | null {
  const up3 = dirname(dirname(dirname(runDir)));
  return basename(dirname(dirname(runDir))) === 'runs' && existsSync(join(up3, BATCH_STATE)) ? up3 : null;
}

export interface ImportResult {
  runDirs: number;
  inserted: number;
  updated: number;
  unchanged: number;
  batches: number;
  skipped: string[]; // one line per directory that could not be read (or was refused)
  warnings: string[]; // one line per record.json its journal disagrees with, or run taken without a journal
}

// Import every run under the given paths (globs expanded), with their batches.
export async function importRuns(
  store: ResultsStore,
  args: string[],
  o: { cwd: string; controller: string; now?: () => string; trustedPem?: string | null },
): Promise<ImportResult> {
  const now = o.now ?? (() => new Date().toISOString());
  const runDirs = findRunDirs(expandPaths(args, o.cwd));
  const skipped: string[] = [];
  const warnings: string[] = [];
  const claimed = new Map<string, string>(); // run id -> the run directory of this import that carries it
  const batches = new Map<string, ReturnType<typeof batchRowOf>>();
  const items: { record: unknown; place: RunPlace }[] = [];
  for (const d of runDirs) {
    const bdir = batchDirOf(d);
    if (bdir && !batches.has(bdir)) batches.set(bdir, batchRowOf(bdir, o.controller, now()));
    const batch = bdir ? batches.get(bdir) : null;
    let record: unknown;
    let check: JournalCheck;
    const name = relative(o.cwd, d) || d;
    try {
      const r = recordOfRunDir(d, o.trustedPem ?? null);
      record = r.record;
      check = r.check;
      warnings.push(...r.warnings);
      // A run id belongs to one run directory: a second claimant (in this import, or against the store's) is refused.
      const runId = String((record as { runId?: unknown }).runId);
      const other = claimed.get(runId) ?? (await storedRunDir(store, runId));
      if (other !== null && other !== undefined && resolve(other) !== resolve(d) && isRunDir(other))
        throw new UsageError(`run ${runId} belongs to ${other}; ${d} claims it too: not imported (a run id is one run directory)`);
      claimed.set(runId, d);
    } catch (e) {
      skipped.push(`${name}: ${(e as Error).message}`);
      continue;
    }
    // A preflight checks the nodes: it is not a run of a cable, never imported (src/rules/result.ts).
    if (resultOfRecord(record as RunRecord).kind === 'preflight') {
      skipped.push(`${relative(o.cwd, d) || d}: a preflight (checks the nodes, qualifies no cable): not imported`);
      continue;
    }
    const journal = join(d, 'journal.jsonl');
    const regression = existsSync(journal) ? regressionOfJournal(journal) : undefined;
    items.push({
      record,
      place: {
        runDir: d,
        controller: o.controller,
        certificate: certificateOf(d),
        journalCheck: check,
        ...(batch ? { batchId: batch.row.id, batchRole: batch.roles.get(d) ?? 'cable' } : {}),
        ...(regression !== undefined ? { regression } : {}),
      },
    });
  }
  for (const b of batches.values()) if (b) await store.upsertBatch(b.row);
  const counts = await store.runsFinished(items);
  if (counts.inserted + counts.updated >= 1000) await store.optimize();
  return { runDirs: runDirs.length, ...counts, batches: [...batches.values()].filter(Boolean).length, skipped, warnings };
}

// The run directory the store has for a run id (null: none recorded, or not in the store). One that is no longer a
// run directory (a run's directory renamed by its cable's serial after the row was started) claims nothing.
async function storedRunDir(store: ResultsStore, runId: string): Promise<string | null> {
  const rows = await store.db.all<{ run_dir: string | null }>('SELECT run_dir FROM runs WHERE run_id = ?', [runId]);
  return rows[0]?.run_dir ?? null;
}
