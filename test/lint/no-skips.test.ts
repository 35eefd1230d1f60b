// In CI a skipped test fails the run, in either tier: vitest with the project's tiers and CI reporter over a suite
// where one test of each tier skips.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { execNode } from '../helpers/exec-node.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const config = 'test/fixtures/no-skips/vitest.config.ts';

// vitest run over the fixture suite (the tiers given, else both) with CI set or unset: its exit code and stderr.
async function runFixture(ci: boolean, projects: string[] = []): Promise<{ code: number; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env['CI'];
  delete env['VITEST'];
  if (ci) env['CI'] = '1';
  const args = ['node_modules/vitest/vitest.mjs', 'run', '--config', config, ...projects.flatMap((p) => ['--project', p])];
  const r = await execNode(args, { cwd: root, env });
  return { code: r.code, stderr: r.stderr };
}

describe('no test skips silently in CI', { timeout: 60_000 }, () => {
  it('with CI=1 a skip in either tier fails the run and is named', async () => {
    const r = await runFixture(true);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CI=1: 2 test(s) skipped; in CI every test must run');
    expect(r.stderr).toContain('  - skipping.fixture.ts > needs a tool this machine lacks');
    expect(r.stderr).toContain('  - skipping.system.fixture.ts > needs a server this machine lacks');
  });

  it('each tier alone (npm test, npm run test:system) fails on its own skip', async () => {
    const fast = await runFixture(true, ['fast']);
    expect(fast.code).toBe(1);
    expect(fast.stderr).toContain('CI=1: 1 test(s) skipped');
    expect(fast.stderr).toContain('  - skipping.fixture.ts > needs a tool this machine lacks');
    const system = await runFixture(true, ['system']);
    expect(system.code).toBe(1);
    expect(system.stderr).toContain('CI=1: 1 test(s) skipped');
    expect(system.stderr).toContain('  - skipping.system.fixture.ts > needs a server this machine lacks');
  });

  it('without CI the same suite passes with its skips', async () => {
    const r = await runFixture(false);
    expect(r).toEqual({ code: 0, stderr: expect.not.stringContaining('skipped; in CI') });
  });
});
