import { ParseError } from '../domain/errors.js';

// Placeholder until the parser lands.
export function parseHwmon(text: string): unknown {
  throw new ParseError('hwmon', 1, 'parser not implemented yet (' + text.length + ' chars)');
}

// Placeholder until the parser lands.
export function parseMgetTemp(text: string): unknown {
  throw new ParseError('mget-temp', 1, 'parser not implemented yet (' + text.length + ' chars)');
}
