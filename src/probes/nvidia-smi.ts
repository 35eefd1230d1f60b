import { ParseError } from '../domain/errors.js';

// Placeholder until the parser lands: fails loudly rather than returning an empty result.
export function parseNvidiaSmi(text: string): unknown {
  throw new ParseError('nvidia-smi', 1, 'parser not implemented yet (' + text.length + ' chars)');
}
