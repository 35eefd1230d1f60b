import { createHash } from 'node:crypto';
import { createReadStream, lstatSync } from 'node:fs';
import { basename, join } from 'node:path';
import { openInput } from '../io/read-input.js';

// The journal is the evidence the verdict came from; the certificate pins it by SHA-256 (hex) and size. A regular
// file only (a FIFO or a device is a UsageError naming it, never waited on or read for ever); streamed, so of any size.
export async function hashFile(path: string): Promise<{ sha256: string; bytes: number } | null> {
  if (!lstatSync(path, { throwIfNoEntry: false })) return null;
  const { fd } = openInput(path, 'journal', { maxBytes: Number.MAX_SAFE_INTEGER, what: 'journal' });
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    for await (const chunk of createReadStream('', { fd })) {
      hash.update(chunk as Buffer);
      bytes += (chunk as Buffer).length;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return { sha256: hash.digest('hex'), bytes };
}

// The journal always sits beside the record, whatever path the record stored.
export function journalPath(runDir: string, recordedFile: string): string {
  return join(runDir, basename(recordedFile || 'journal.jsonl'));
}
