import { ParseError } from '../domain/errors.js';

// Placeholder until the parser lands: fails loudly rather than returning an empty result.
export function parseNccl(text: string): unknown {
  throw new ParseError('nccl', 1, 'parser not implemented yet (' + text.length + ' chars)');
}
