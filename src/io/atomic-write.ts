import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, lstatSync, openSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { bigintReplacer } from '../domain/u64.js';
import { kindOf } from './read-input.js';

// A file is written only to a new path or over an existing regular file: the rename of an atomic write replaces
// whatever is at the path, so a FIFO, a device or a symbolic link named as `--out` (as root, `--out /dev/null`) would
// be replaced by a regular file. Anything else is a UsageError naming it (`label`: how the user named it, e.g.
// "--out compare.csv"; exit 2). Every writer below checks it; commands check their user-named paths first, before
// any work.
export function checkOutputPath(path: string, label: string = path): void {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st || st.isFile()) return;
  throw new UsageError(`${label}: ${kindOf(st)}, not a regular file: cablequal writes only a new file or over a regular one; give another path`);
}

// Temp file beside the target, so the final rename stays on one file system. Hidden (dot) and named after the
// target, the writing process and a random tag, so a temp file left by a SIGKILL can be recognised and swept.
function tempPath(path: string): string {
  sweepStaleTemps(dirname(path));
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

const TEMP = /^\..+\.(\d+)\.[0-9a-f]{8}\.tmp$/;
// A temp file this old was not left by a write in progress (a write takes milliseconds).
const STALE_TEMP_MS = 60_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

// Remove temp files a killed writer left in `dir`: older than a minute and their writer's pid gone. Returns the
// names removed. Best effort: a directory that cannot be listed is left as it is.
export function sweepStaleTemps(dir: string, now = Date.now()): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = TEMP.exec(name);
    if (!m || Number(m[1]) === process.pid) continue;
    const path = join(dir, name);
    try {
      if (now - statSync(path).mtimeMs < STALE_TEMP_MS || alive(Number(m[1]))) continue;
      rmSync(path, { force: true });
      removed.push(name);
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
  return removed;
}

// A reader (or a crash) sees the old file or the new one, never half of it: write a temp file, fsync, rename over.
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644): Promise<string> {
  checkOutputPath(path);
  const tmp = tempPath(path);
  try {
    const fh = await open(tmp, 'wx', mode);
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return path;
}

// The same, synchronously: for the run's state files (record.json, batch state) written on exit paths.
export function writeFileAtomicSync(path: string, data: string | Uint8Array, mode = 0o644): string {
  checkOutputPath(path);
  const tmp = tempPath(path);
  try {
    writeFileSync(tmp, data, { mode, flag: 'wx' });
    const fd = openSync(tmp, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return path;
}

// JSON with u64 counters kept exact (bigints as numbers up to 2^53, decimal strings above).
export function writeJsonAtomic(path: string, value: unknown): string {
  return writeFileAtomicSync(path, `${JSON.stringify(value, bigintReplacer, 2)}\n`);
}
