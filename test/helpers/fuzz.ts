import fc from 'fast-check';
import { expect } from 'vitest';
import { ParseError } from '../../src/domain/errors.js';

// Run a parser on text; anything thrown other than ParseError fails the property.
function onlyParseErrors(parse: (text: string) => unknown, text: string): boolean {
  try {
    parse(text);
  } catch (e) {
    if (e instanceof ParseError) {
      expect(e.line).toBeGreaterThanOrEqual(1);
      expect(e.message).not.toContain('\n');
      return true;
    }
    throw e;
  }
  return true;
}

// Feed a parser random text, truncated and line-mutated real samples: the only failure allowed is ParseError.
export function fuzzParser(parse: (text: string) => unknown, realSamples: string[], numRuns = 300): void {
  expect(realSamples.length).toBeGreaterThan(0);
  const sampleArb = fc.constantFrom(...realSamples);
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (s) => onlyParseErrors(parse, s)),
    { numRuns },
  );
  fc.assert(
    fc.property(sampleArb, fc.nat(), (s, cut) => onlyParseErrors(parse, s.slice(0, cut % (s.length + 1)))),
    { numRuns },
  );
  fc.assert(
    fc.property(
      sampleArb,
      fc.array(fc.tuple(fc.nat(), fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', '-1', 'N/A', '18446744073709551616', ':', '\t', '0x', '[N/A]'))), {
        maxLength: 5,
      }),
      (s, edits) => {
        const lines = s.split('\n');
        for (const [i, repl] of edits) {
          const k = i % (lines.length + 1);
          if (k < lines.length) {
            const line = lines[k]!;
            const pos = line.length ? i % line.length : 0;
            lines[k] = line.slice(0, pos) + repl + line.slice(pos + (i % 3));
          } else lines.push(repl);
        }
        return onlyParseErrors(parse, lines.join('\n'));
      },
    ),
    { numRuns },
  );
}
