// Reading a protocol file: the only I/O of protocol/, kept apart from the pure validation.
import { createHash } from 'node:crypto';
import { UsageError } from '../domain/errors.js';
import type { Protocol } from './types.js';
import { validateProtocol, type ValidateOptions } from './validate.js';
import { nestingExceeds } from '../domain/json-depth.js';
import { readInputBytes } from '../io/read-input.js';
import { builtinStatus } from './released.js';

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

// Load a protocol from disk for a new run; a missing, unreadable, irregular (/dev/zero, a pipe) or oversized file is a
// usage error too, not a stack trace or a hang. A built-in protocol's name is kept for the texts cablequal shipped under
// it: a certificate that says "quick" must mean what was shipped as quick, so a lab's edited copy needs a name of its own.
export function loadProtocol(path: string): Protocol {
  return ownOrBuiltin(parseProtocol(readInputBytes(path, 'protocol'), path));
}

// A protocol for a new run: refused when it takes a built-in protocol's name on a text cablequal did not ship.
export function ownOrBuiltin(p: Protocol): Protocol {
  if (builtinStatus(p.name, p.sha256) === 'foreign')
    throw new UsageError(
      `${p.file}: name "${p.name}" is a built-in protocol's, but this text is not one cablequal shipped: give your protocol a name of its own`,
    );
  return p;
}
