import { renameSync, writeFileSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { bigintReplacer } from '../domain/u64.js';

// Write a file so that readers see the old or the new content, never half of it (temp file, fsync, rename).
export function writeFileAtomic(path: string, data: string | Buffer): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data);
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

// JSON with u64 counters kept exact.
export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, `${JSON.stringify(value, bigintReplacer, 2)}\n`);
}
