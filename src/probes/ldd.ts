// `ldd <program>`: the shared libraries the loader resolves for a program in this session's environment, and the ones
// it cannot find (`<name> => not found`), in glibc's layout (a tab, `<name> => <path> (0x<address>)`; the vDSO and the
// loader itself without `=>`; older glibc prints the vDSO as `<name> =>  (0x<address>)`). docs/formats.md §13.
import { ParseError } from '../domain/errors.js';
import { clip } from './read.js';

const KIND = 'ldd';
const FOUND = /^(\S+) => (\S.*?) \(0x[0-9a-f]+\)$/;
const NOT_FOUND = /^(\S+) => not found$/;
const NO_ARROW = /^(\S+)(?: =>)? +\(0x[0-9a-f]+\)$/;
const STATIC = /^(?:not a dynamic executable|statically linked)$/;

// One library the program needs: where the loader found it, or null when it did not.
export interface LddLibrary {
  name: string;
  path: string | null;
}

export interface LddResult {
  libraries: LddLibrary[];
  missing: string[]; // the names the loader cannot find: the program would not start
  static: boolean; // no shared libraries at all
}

// Parse ldd's output; a line in no ldd layout is a ParseError (an error message, a wrapper's noise).
export function parseLdd(text: string): LddResult {
  const out: LddResult = { libraries: [], missing: [], static: false };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '').trim();
    if (line === '') continue;
    let m: RegExpExecArray | null;
    if ((m = NOT_FOUND.exec(line))) {
      out.libraries.push({ name: m[1]!, path: null });
      out.missing.push(m[1]!);
    } else if ((m = FOUND.exec(line))) out.libraries.push({ name: m[1]!, path: m[2]! });
    else if ((m = NO_ARROW.exec(line))) out.libraries.push({ name: m[1]!, path: m[1]!.startsWith('/') ? m[1]! : '(kernel)' });
    else if (STATIC.test(line)) out.static = true;
    else throw new ParseError(KIND, i + 1, `not an ldd line ("<library> => <path> (0x...)" or "=> not found"): ${clip(line)}`);
  }
  if (out.libraries.length === 0 && !out.static) throw new ParseError(KIND, Math.max(1, lines.length), 'no library listed and not a static program');
  return out;
}
