import { ParseError } from '../domain/errors.js';

// Placeholder until the parser lands: fails loudly rather than returning an empty result.
export function parseIbdev2netdev(text: string): unknown {
  throw new ParseError('ibdev2netdev', 1, 'parser not implemented yet (' + text.length + ' chars)');
}
