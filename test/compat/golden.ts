// The golden grades of the compat journals: every journal of test/fixtures/journals-v* graded with every rules version
// this cablequal knows, reduced to what a verdict says (outcome, reasons with their sentences, measurements, decision,
// headline). test/compat/golden-grades.test.ts compares today's code with the files written when each version shipped;
// `npx tsx scripts/golden-grades.ts` writes the file of a version that has none yet (never rewrites an existing one).
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gradeRunDir } from '../../src/cli/grade-command.js';
import type { RunRecord } from '../../src/domain/record.js';

export const FIXTURES = join(import.meta.dirname, '..', 'fixtures');
export const GOLDEN = join(FIXTURES, 'golden-grades');
const SETS = ['journals-v1', 'journals-v1-regraded', 'journals-v2'];

// Every compat run directory, as `<set>/<run>`.
export function compatRuns(): string[] {
  return SETS.flatMap((set) =>
    readdirSync(join(FIXTURES, set), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `${set}/${d.name}`),
  ).sort();
}

// What a verdict says, without what changes from one grading to the next (times of day, paths).
export interface GoldenGrade {
  outcome: string;
  rules: RunRecord['rules'] | null;
  reasons: RunRecord['reasons'];
  measurements: RunRecord['measurements'];
  decidedAtS: number | null;
  headline: RunRecord['headline'] | null;
  analysis: RunRecord['analysis'];
  phases: RunRecord['phases'];
}

// Grade one compat run (unpacked into a temporary directory) with a rules version.
export function goldenGradeOf(run: string, version: number): GoldenGrade {
  const dir = mkdtempSync(join(tmpdir(), 'cq-golden-'));
  try {
    cpSync(join(FIXTURES, run), dir, { recursive: true });
    writeFileSync(join(dir, 'journal.jsonl'), gunzipSync(readFileSync(join(FIXTURES, run, 'journal.jsonl.gz'))));
    const r: RunRecord = gradeRunDir(dir, undefined, version);
    return {
      outcome: r.outcome,
      rules: r.rules ?? null,
      reasons: r.reasons,
      measurements: r.measurements,
      decidedAtS: r.decidedAtS,
      headline: r.headline ?? null,
      analysis: r.analysis,
      phases: r.phases,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// The golden file of a rules version: run -> grade.
export const goldenFile = (version: number) => join(GOLDEN, `rules-${version}.json`);
