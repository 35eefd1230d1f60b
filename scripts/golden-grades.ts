// Writes the golden grades of a rules version that has none yet: every compat journal graded with it
// (test/compat/golden.ts). An existing file is never rewritten: it is what that version concluded when it shipped.
import { existsSync, writeFileSync } from 'node:fs';
import { compatRuns, goldenFile, goldenGradeOf } from '../test/compat/golden.js';
import { KNOWN_RULES_VERSIONS } from '../src/rules/versions.js';

for (const version of KNOWN_RULES_VERSIONS) {
  const file = goldenFile(version);
  if (existsSync(file)) {
    console.log(`${file}: exists, kept`);
    continue;
  }
  const out: Record<string, unknown> = {};
  for (const run of compatRuns()) out[run] = goldenGradeOf(run, version);
  writeFileSync(file, `${JSON.stringify(out, null, 1)}\n`);
  console.log(`${file}: ${Object.keys(out).length} runs`);
}
