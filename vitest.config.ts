import { defineConfig } from 'vitest/config';
import { NoSkipsReporter } from './test/helpers/no-skips-reporter.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/live/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Builds dist/ once for the tests that spawn bin/cablequal.js (SIGKILL/SIGINT proofs).
    globalSetup: ['test/faults/global-setup.ts'],
    // fast-check runs with a fixed seed (FC_SEED overrides): a property test fails the same way every time.
    setupFiles: ['test/helpers/fast-check-seed.ts'],
    // In CI (.ci/run sets CI=1) a skipped test fails the run: the sshd, Chromium and PostgreSQL tests must run there.
    reporters: process.env['CI'] ? ['default', new NoSkipsReporter()] : ['default'],
  },
});
