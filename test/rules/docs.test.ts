import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { limitsSchema, verdictTable, withRulesVersion, withVerdictTable } from '../../src/rules/docs.js';
import { defaultLimit } from '../../src/rules/definitions.js';
import { RULES, RULES_VERSION } from '../../src/rules/versions.js';
import { DEFAULT_PROTOCOL } from './defaults.js';

const ROOT = join(import.meta.dirname, '..', '..');

// What people read about the rules is generated from the registry: these fail when someone edits one side only.
describe('documents generated from the registry', () => {
  it("docs/grading.md's verdict table and the rules version README states are current (npx tsx scripts/rule-docs.ts writes them)", () => {
    const grading = readFileSync(join(ROOT, 'docs', 'grading.md'), 'utf8');
    expect(withVerdictTable(grading, verdictTable())).toBe(grading);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(withRulesVersion(readme)).toBe(readme);
    expect(readme).toContain(`<!-- rules-version -->rules version ${RULES_VERSION}<!-- /rules-version -->`);
  });

  it("protocol.schema.json's limits are current", () => {
    const schema = JSON.parse(readFileSync(join(ROOT, 'protocols', 'protocol.schema.json'), 'utf8'));
    expect(schema.properties.limits).toEqual(limitsSchema());
  });

  it('the shipped default protocol sets every rule to its declared default, so the table shows what a run uses', () => {
    for (const r of RULES) {
      const l = DEFAULT_PROTOCOL.limits.find((x) => x.rule === r.id)!;
      const d = defaultLimit(r);
      expect({ rule: l.rule, direction: l.direction, fail: l.fail, marginal: l.marginal, unit: l.unit, params: l.params ?? {} }).toEqual({
        rule: d.rule,
        direction: d.direction,
        fail: d.fail,
        marginal: d.marginal,
        unit: d.unit,
        params: d.params,
      });
    }
    expect(DEFAULT_PROTOCOL.notes).toEqual([]);
  });

  it('the table has a row per cable rule with its bands and settings', () => {
    const t = verdictTable();
    expect(t).toContain('| `lane-ratio` | >= 1000x | >= 100x |');
    expect(t).toContain('`failFloorBer` 1.00e-6');
    expect(t).toContain('| `fec-window` | < 1 decades | < 2 decades |');
    expect(t).toMatch(/Setup checks \(ERROR, never a cable grade\): `loopback-floor` \(< 90 Gb\/s/);
  });
});
