import { ParseError } from '../domain/errors.js';

// Placeholder until the parser lands: fails loudly rather than returning an empty result.
export function parseRdmaLink(text: string): unknown {
  throw new ParseError('rdma-link', 1, 'parser not implemented yet (' + text.length + ' chars)');
}
