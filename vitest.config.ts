import { defineConfig } from 'vitest/config';
import { NoSkipsReporter } from './test/helpers/no-skips-reporter.js';
import { tierProjects } from './test/helpers/tiers.js';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // fast-check runs with a fixed seed (FC_SEED overrides): a property test fails the same way every time.
    setupFiles: ['test/helpers/fast-check-seed.ts'],
    // Two tiers (test/helpers/tiers.ts): `npm test` runs the fast one, `npm run test:system` the other, .ci/run both.
    // Only the system tier builds dist/, once, for the tests that spawn bin/cablequal.js (SIGKILL/SIGINT proofs).
    projects: tierProjects('test', 'test.ts', ['test/helpers/build-dist.ts']),
    // In CI (.ci/run sets CI=1) a skipped test fails the run, in either tier: the sshd, Chromium and PostgreSQL tests must run there.
    reporters: process.env['CI'] ? ['default', new NoSkipsReporter()] : ['default'],
  },
});
