// Reading a protocol file: the only I/O of protocol/, kept apart from the pure validation.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { UsageError } from '../domain/errors.js';
import type { Protocol } from './types.js';
import { validateProtocol, type ValidateOptions } from './validate.js';
import { nestingExceeds } from '../domain/json-depth.js';

// Parse protocol text; the sha256 is of the UTF-8 bytes so a run record pins exactly what was run.
export function parseProtocol(text: string | Uint8Array, fileLabel: string, opts: ValidateOptions = {}): Protocol {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : Buffer.from(text);
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    const msg = (e instanceof Error ? e.message : String(e)).split('\n')[0];
    throw new UsageError(`${fileLabel}: not valid JSON: ${msg}`);
  }
  // A protocol nests four levels; 100,000 would overflow the validator's recursion: refuse it in one line.
  if (nestingExceeds(json, 32)) throw new UsageError(`${fileLabel}: nested deeper than 32 levels: not a protocol`);
  const body = validateProtocol(json, fileLabel, opts);
  return { ...body, file: fileLabel, sha256: createHash('sha256').update(bytes).digest('hex') };
}

// Load a protocol from disk; a missing or unreadable file is a usage error too, not a stack trace.
export function loadProtocol(path: string): Protocol {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new UsageError(`${path}: cannot read protocol file (${code})`);
  }
  return parseProtocol(bytes, path);
}
