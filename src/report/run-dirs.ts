// Finding run directories: what `compare`, `regress` and `status` are given is a run directory, a reports
// directory (runs two levels down, batch runs four), or a glob the shell did not expand because it was quoted
// (`compare 'reports/*/*'` as the README writes it). Globs are expanded here with tinyglobby, as the shell would.
import { readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { globSync } from 'tinyglobby';
import { UsageError } from '../domain/errors.js';

// A run directory holds its journal or its record.
export function isRunDir(dir: string): boolean {
  return ['journal.jsonl', 'record.json'].some((f) => statSync(join(dir, f), { throwIfNoEntry: false })?.isFile());
}

const GLOB = /[*?[\]{}]/;
// Runs sit at reports/<cable>/<run id> or reports/batch-x/runs/<label>/<run id>; this leaves room for trees of labs.
const MAX_DEPTH = 8;

// Directories under `root` (itself included) that are run directories, nearest first, not looking inside a run
// directory, hidden directories or symbolic links.
export function findRunDirs(root: string, maxDepth = MAX_DEPTH): string[] {
  const out: string[] = [];
  let level = [root];
  for (let depth = 0; depth <= maxDepth && level.length; depth++) {
    const next: string[] = [];
    for (const dir of level.sort()) {
      if (isRunDir(dir)) {
        out.push(dir);
        continue;
      }
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        continue; // unreadable: nothing found there
      }
      for (const e of entries) if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules') next.push(join(dir, e.name));
    }
    level = next;
  }
  return out;
}

// Expand one glob pattern to directories: the literal leading part is the base, the rest is matched under it.
function expandGlob(pattern: string, cwd: string): string[] {
  const parts = pattern.split(/[/\\]+/);
  const first = parts.findIndex((p) => GLOB.test(p));
  const base = resolve(cwd, isAbsolute(pattern) ? sep : '.', ...parts.slice(0, first).filter((p) => p !== ''));
  const rest = parts.slice(first).join('/');
  return globSync(rest, { cwd: base, onlyDirectories: true, absolute: true, expandDirectories: false, dot: false })
    .map((p) => p.replace(/[/\\]+$/, ''))
    .sort();
}

// Run directories for the given paths (directories, or globs the shell left quoted), without duplicates, in the
// order given; `warnings` says which paths were passed over. `skip`: files passed over without a word (the results
// store's file, which `reports/*` names too).
export function expandRunDirs(paths: string[], cwd: string, opts: { skip?: (path: string) => boolean } = {}): { dirs: string[]; warnings: string[] } {
  const dirs: string[] = [];
  const warnings: string[] = [];
  for (const p of paths) {
    const abs = resolve(cwd, p);
    const st = statSync(abs, { throwIfNoEntry: false });
    const candidates = st ? [abs] : GLOB.test(p) ? expandGlob(p, cwd) : null;
    if (candidates === null) throw new UsageError(`${p}: no such file or directory`);
    if (candidates.length === 0) warnings.push(`${p}: matches no directory`);
    for (const c of candidates) {
      if (opts.skip?.(c)) continue;
      if (!statSync(c, { throwIfNoEntry: false })?.isDirectory()) {
        warnings.push(`skipped ${c}: not a directory`);
        continue;
      }
      const found = findRunDirs(c);
      if (found.length === 0) warnings.push(`${c}: no run directory (journal.jsonl or record.json) in it or below`);
      dirs.push(...found);
    }
  }
  return { dirs: [...new Set(dirs)], warnings };
}
