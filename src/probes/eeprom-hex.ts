import { ParseError } from '../domain/errors.js';

// Placeholder until the parser lands: fails loudly rather than returning an empty result.
export function parseEepromHex(text: string): unknown {
  throw new ParseError('eeprom-hex', 1, 'parser not implemented yet (' + text.length + ' chars)');
}
