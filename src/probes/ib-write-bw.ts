import { ParseError } from '../domain/errors.js';

// Placeholder until the parser lands: fails loudly rather than returning an empty result.
export function parseIbWriteBw(text: string): unknown {
  throw new ParseError('ib_write_bw', 1, 'parser not implemented yet (' + text.length + ' chars)');
}
