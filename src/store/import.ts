// `cablequal db import`: rebuild the store's index from run directories (their record.json, else their journal),
// idempotently: the same runs imported twice leave every row as it was (upsert by run id, unchanged content skipped).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { readInputText } from '../io/read-input.js';
import { readJournal } from '../run/journal.js';
import { buildRecord } from '../run/record-builder.js';
import { recordProblem } from '../report/record-io.js';
import { componentRegExp } from '../transport/ssh-config-files.js';
import { certificateOf, regressionOfJournal } from './run-files.js';
import type { RunPlace } from './run-row.js';
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

// A run's record: record.json when it is there and readable, else rebuilt from the journal by the record builder
// (a run killed before its record was written becomes ABORTED, as `cablequal grade` would say).
export function recordOfRunDir(runDir: string): unknown {
  const recordPath = join(runDir, 'record.json');
  if (existsSync(recordPath)) {
    const text = readInputText(recordPath, 'record');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new UsageError(`${recordPath}: not valid JSON (${(e as Error).message}); rebuild it with cablequal grade ${runDir}`);
    }
    const problem = recordProblem(value);
    if (problem) throw new UsageError(`${recordPath}: ${problem}`);
    return value;
  }
  const journal = join(runDir, 'journal.jsonl');
  const contents = readJournal(journal);
  if (!contents.lines.some((l) => l.type === 'run-start')) throw new UsageError(`${journal}: no run-start line; not a cablequal journal`);
  return buildRecord(contents, { journalFile: 'journal.jsonl', journalBytes: statSync(journal).size });
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
  skipped: string[]; // one line per directory that could not be read
}

// Import every run under the given paths (globs expanded), with their batches.
export async function importRuns(store: ResultsStore, args: string[], o: { cwd: string; controller: string; now?: () => string }): Promise<ImportResult> {
  const now = o.now ?? (() => new Date().toISOString());
  const runDirs = findRunDirs(expandPaths(args, o.cwd));
  const skipped: string[] = [];
  const batches = new Map<string, ReturnType<typeof batchRowOf>>();
  const items: { record: unknown; place: RunPlace }[] = [];
  for (const d of runDirs) {
    const bdir = batchDirOf(d);
    if (bdir && !batches.has(bdir)) batches.set(bdir, batchRowOf(bdir, o.controller, now()));
    const batch = bdir ? batches.get(bdir) : null;
    let record: unknown;
    try {
      record = recordOfRunDir(d);
    } catch (e) {
      skipped.push(`${relative(o.cwd, d) || d}: ${(e as Error).message}`);
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
        ...(batch ? { batchId: batch.row.id, batchRole: batch.roles.get(d) ?? 'cable' } : {}),
        ...(regression !== undefined ? { regression } : {}),
      },
    });
  }
  for (const b of batches.values()) if (b) await store.upsertBatch(b.row);
  const counts = await store.runsFinished(items);
  if (counts.inserted + counts.updated >= 1000) await store.optimize();
  return { runDirs: runDirs.length, ...counts, batches: [...batches.values()].filter(Boolean).length, skipped };
}
