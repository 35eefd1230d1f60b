import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { bigintReplacer } from '../domain/u64.js';

// Temp file beside the target, so the final rename stays on one file system.
function tempPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

// A reader (or a crash) sees the old file or the new one, never half of it: write a temp file, fsync, rename over.
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644): Promise<string> {
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
