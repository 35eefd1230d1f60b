// Old verdicts are guarded by their journals, not by copied code: every compat journal graded with every rules version
// this cablequal knows must give exactly what that version concluded when it shipped (outcome, reasons and their
// sentences, measurements, decision time, headline, analysis), as written in test/fixtures/golden-grades/rules-<N>.json.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KNOWN_RULES_VERSIONS } from '../../src/rules/versions.js';
import { compatRuns, goldenFile, goldenGradeOf, type GoldenGrade } from './golden.js';

const RUNS = compatRuns();

describe.each(KNOWN_RULES_VERSIONS.map((v) => [v]))('rules version %i', (version) => {
  it('has its golden grades (npx tsx scripts/golden-grades.ts writes those of a new version)', () => {
    expect(existsSync(goldenFile(version))).toBe(true);
  });
  const golden = existsSync(goldenFile(version)) ? (JSON.parse(readFileSync(goldenFile(version), 'utf8')) as Record<string, GoldenGrade>) : {};

  it('covers every compat journal', () => {
    expect(Object.keys(golden).sort()).toEqual(RUNS);
  });

  it.each(RUNS)('%s grades exactly as it did when this version shipped', (run) => {
    const now = JSON.parse(JSON.stringify(goldenGradeOf(run, version))) as GoldenGrade;
    const then = golden[run]!;
    expect(now.outcome).toBe(then.outcome);
    expect(now.reasons).toEqual(then.reasons);
    expect(now.measurements).toEqual(then.measurements);
    expect(now.decidedAtS).toBe(then.decidedAtS);
    expect(now.headline).toEqual(then.headline);
    expect(now.rules).toEqual(then.rules);
    expect(now.phases).toEqual(then.phases);
    expect(now.analysis).toEqual(then.analysis);
  });
});
