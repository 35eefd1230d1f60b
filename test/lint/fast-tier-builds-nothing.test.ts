// The fast tier (npm test) builds nothing: a test that spawned bin/cablequal.js there would run whatever dist/ was
// last built, not the sources under test. Such tests are named *.system.test.ts: the system tier builds dist/ first.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const SPAWNS_BUILT_CLI = /bin\/cablequal\.js|'bin',\s*'cablequal\.js'/;

function fastTestFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return d.name === 'fixtures' ? [] : fastTestFiles(p);
    return d.name.endsWith('.test.ts') && !d.name.endsWith('.system.test.ts') ? [p] : [];
  });
}

describe('the fast tier builds nothing', () => {
  it('no fast test spawns the built CLI', () => {
    const files = fastTestFiles(join(ROOT, 'test'));
    expect(files.length).toBeGreaterThan(100);
    const offenders = files.filter((f) => f !== import.meta.filename && SPAWNS_BUILT_CLI.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => relative(ROOT, f))).toEqual([]);
  });

  it('the pattern finds a spawn of the built CLI (the test can fail)', () => {
    expect(SPAWNS_BUILT_CLI.test("spawn(process.execPath, [join(process.cwd(), 'bin', 'cablequal.js'), 'dashboard'])")).toBe(true);
    expect(SPAWNS_BUILT_CLI.test('node bin/cablequal.js --help')).toBe(true);
    expect(SPAWNS_BUILT_CLI.test("runCli(['dashboard'])")).toBe(false);
  });
});
