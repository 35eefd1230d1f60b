// CONTRIBUTING.md's "Adding a grading rule" is code: this test follows it word for word in a scratch copy of the
// repository (the rule from its first block at the end of RULE_DEFINITIONS, the version from its second after V5 and
// at the end of RULES_VERSIONS, then its two scripts), builds it, and checks that every compat journal and certificate
// of the released versions still grades and verifies unchanged, and that the new version grades them too.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, guideBlock as block, run, scratchCopy } from './guide.js';

// The code block that follows a `<!-- guide:<name> -->` marker of CONTRIBUTING.md.
const guideBlock = (name: string) => block('CONTRIBUTING.md', name);

describe('CONTRIBUTING.md: adding a grading rule as a new rules version, exactly as written', () => {
  const dir = scratchCopy();
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the guide`s edits apply, build, and every released version still grades its journals unchanged', { timeout: 900_000 }, () => {
    // Step 1: the rule at the end of RULE_DEFINITIONS.
    const registryPath = join(dir, 'src', 'rules', 'definitions.ts');
    const registry = readFileSync(registryPath, 'utf8');
    const start = registry.indexOf('export const RULE_DEFINITIONS');
    const close = registry.indexOf('\n];\n', start);
    expect(start).toBeGreaterThan(0);
    writeFileSync(registryPath, `${registry.slice(0, close)}\n${guideBlock('registry-entry').trimEnd()}${registry.slice(close)}`);
    // Step 2: V6 after V5, and at the end of RULES_VERSIONS.
    const versionsPath = join(dir, 'src', 'rules', 'versions.ts');
    let versions = readFileSync(versionsPath, 'utf8');
    const v5 = versions.indexOf('const V5: RulesVersion = {');
    expect(v5).toBeGreaterThan(0);
    const v5End = versions.indexOf('};\n', v5) + 3;
    versions = `${versions.slice(0, v5End)}\n${guideBlock('version-entry')}${versions.slice(v5End)}`;
    expect(versions).toContain('= [V1, V2, V3, V4, V5];');
    writeFileSync(versionsPath, versions.replace('= [V1, V2, V3, V4, V5];', '= [V1, V2, V3, V4, V5, V6];'));
    // Step 3: its limit in each shipped protocol.
    for (const name of ['spark-burnin.json', 'quick.json']) {
      const path = join(dir, 'protocols', name);
      const protocol = JSON.parse(readFileSync(path, 'utf8')) as { limits: unknown[] };
      protocol.limits.push(JSON.parse(guideBlock('protocol-limit')));
      writeFileSync(path, `${JSON.stringify(protocol, null, 2)}\n`);
    }
    // Step 4: the two scripts.
    const golden = run(dir, 'npx', ['tsx', 'scripts/golden-grades.ts']);
    expect(golden.out).toContain('rules-6.json: ');
    expect(golden.code).toBe(0);
    expect(run(dir, 'npx', ['tsx', 'scripts/rule-docs.ts']).code).toBe(0);
    // The released versions' golden grades were not rewritten.
    for (const v of [1, 2, 3, 4, 5]) {
      const f = join('test', 'fixtures', 'golden-grades', `rules-${v}.json`);
      expect(readFileSync(join(dir, f), 'utf8')).toBe(readFileSync(join(ROOT, f), 'utf8'));
    }
    const typecheck = run(dir, 'npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']);
    expect(typecheck.out).toBe('');
    expect(typecheck.code).toBe(0);
    // Every compat journal and certificate of the released versions, and the rules' own tests, with version 6 as today's.
    const tests = run(dir, 'npx', ['vitest', 'run', '--project', 'fast', 'test/compat', 'test/rules']);
    expect(tests.out).toMatch(/Tests\s+\d+ passed/);
    expect(tests.out).not.toMatch(/failed/);
    expect(tests.code).toBe(0);
    // Version 6 grades with the new rule; docs/grading.md's table carries it, and README states version 6.
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('<!-- rules-version -->rules version 6<!-- /rules-version -->');
    expect(readFileSync(join(dir, 'docs', 'grading.md'), 'utf8')).toContain('| `nic-temp-max` | >= 105 C | >= 95 C | hottest NIC temperature reading');
    const v6 = JSON.parse(readFileSync(join(dir, 'test', 'fixtures', 'golden-grades', 'rules-6.json'), 'utf8')) as Record<
      string,
      { measurements: { rule: string }[] }
    >;
    expect(v6['journals-v2/good-qsfp56-quick']!.measurements.some((m) => m.rule === 'nic-temp-max')).toBe(true);
  });
});
