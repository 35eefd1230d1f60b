// `ib_write_bw --version`: perftest prints `Version: <x>` and exits (perftest_parameters.c, option V).
import { ParseError } from '../domain/errors.js';
import { clip } from './read.js';

// The perftest version, e.g. "6.22"; a ParseError when the text is not that line.
export function parsePerftestVersion(text: string): string {
  const m = /^Version:\s*([A-Za-z0-9][A-Za-z0-9._+-]{0,31})\s*$/m.exec(text);
  if (!m) throw new ParseError('perftest-version', 1, `no "Version: <x>" line: ${clip(text.split('\n')[0] ?? '')}`);
  return m[1]!;
}
