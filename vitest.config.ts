import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/live/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Builds dist/ once for the tests that spawn bin/cablequal.js (SIGKILL/SIGINT proofs).
    globalSetup: ['test/faults/global-setup.ts'],
  },
});
