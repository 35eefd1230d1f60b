import { ParseError } from '../../src/domain/errors.js';

// The ParseError a parser throws for bad input; any other outcome (success, another error) fails the test.
export function parseErrorOf(f: () => unknown): ParseError {
  try {
    f();
  } catch (e) {
    if (e instanceof ParseError) return e;
    throw e;
  }
  throw new Error('expected a ParseError');
}
