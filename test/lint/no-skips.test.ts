// In CI a skipped test fails the run: vitest with the project's CI reporter over a suite where one test skips.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const config = 'test/fixtures/no-skips/vitest.config.ts';

// vitest run over the fixture suite with CI set or unset: its exit code and stderr.
async function runFixture(ci: boolean): Promise<{ code: number; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env['CI'];
  delete env['VITEST'];
  if (ci) env['CI'] = '1';
  try {
    const r = await promisify(execFile)(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--config', config], { cwd: root, env });
    return { code: 0, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, stderr: err.stderr };
  }
}

describe('no test skips silently in CI', () => {
  it('with CI=1 the skip fails the run and is named', { timeout: 60_000 }, async () => {
    const r = await runFixture(true);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CI=1: 1 test(s) skipped; in CI every test must run');
    expect(r.stderr).toContain('  - skipping.fixture.ts > needs a tool this machine lacks');
  });

  it('without CI the same suite passes with its skip', { timeout: 60_000 }, async () => {
    const r = await runFixture(false);
    expect(r).toEqual({ code: 0, stderr: expect.not.stringContaining('skipped; in CI') });
  });
});
