import fc from 'fast-check';
import { expect } from 'vitest';
import { ParseError } from '../../src/domain/errors.js';
import { parseErrorOf } from './parse-error.js';

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

// A parse result without what the launcher prefix adds (`launcher`, each NCCL process's `launcherRank`).
function withoutLauncher(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutLauncher);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== 'launcher' && k !== 'launcherRank')
      .map(([k, v]) => [k, withoutLauncher(v)]),
  );
}

// The prefix srun --label (task id right-aligned to `width`) or OpenMPI --tag-output (job 1) writes for `rank`.
const PREFIXES = {
  'srun --label': (rank: number, width: number) => `${String(rank).padStart(width)}: `,
  'mpirun --tag-output': (rank: number) => `[1,${rank}]<stdout>:`,
} as const;
type PrefixKind = keyof typeof PREFIXES;

// Job output as a cluster launcher would hand it back: real samples (parseable, 2 lines or more) with one launcher's
// prefix before every line. The parse must equal the unprefixed parse and name the launcher and rank; one line (not
// the first) carrying the other launcher's prefix, or for --tag-output another job id, is refused naming that line.
export function fuzzLauncherPrefixes(parse: (text: string) => unknown, realSamples: string[], numRuns = 100): void {
  expect(realSamples.length).toBeGreaterThan(0);
  const kinds = Object.keys(PREFIXES) as PrefixKind[];
  fc.assert(
    fc.property(fc.constantFrom(...realSamples), fc.constantFrom(...kinds), fc.integer({ min: 0, max: 15 }), fc.nat(), (text, kind, rank, pick) => {
      const lines = text.split('\n');
      expect(lines.length).toBeGreaterThan(1);
      const width = rank > 9 ? 2 : 1 + (pick % 2);
      const prefix = (k: PrefixKind) => PREFIXES[k](rank, width);
      const prefixed = lines.map((l) => prefix(kind) + l);
      const got = parse(prefixed.join('\n')) as { launcher?: unknown };
      expect(withoutLauncher(got)).toEqual(withoutLauncher(parse(text)));
      expect(got.launcher).toMatchObject({ kind, ranks: [rank] });
      expect([rank, null]).toContain((got.launcher as { resultRank: unknown }).resultRank); // null: the text has no result lines

      const k = 1 + (pick % (lines.length - 1));
      const other = kinds.find((x) => x !== kind)!;
      const mixed = prefixed.map((l, i) => (i === k ? prefix(other) + lines[i] : l));
      const e = parseErrorOf(() => parse(mixed.join('\n')));
      expect(e.line).toBe(k + 1);
      expect(e.reason).toMatch(
        new RegExp(`^${other.replace(/[-.]/g, '\\$&')} prefix .*, but line 1 started ${kind.replace(/[-.]/g, '\\$&')} prefixes: paste one launcher's output$`),
      );
      if (kind === 'mpirun --tag-output') {
        const twoJobs = prefixed.map((l, i) => (i === k ? `[2,${rank}]<stdout>:${lines[i]}` : l));
        const j = parseErrorOf(() => parse(twoJobs.join('\n')));
        expect(j.line).toBe(k + 1);
        expect(j.reason).toMatch(/^mpirun job 2 in .*, but line 1 was job 1: paste one job's output$/);
      }
      return true;
    }),
    { numRuns },
  );
}
