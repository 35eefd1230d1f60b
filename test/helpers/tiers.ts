// The test tiers, as vitest projects selected by file name: `fast` (npm test: in process, quick protocol, no server)
// and `system` (npm run test:system: sshd, Chromium, PostgreSQL, `sim serve`, the spawned CLI, full-length runs).
// A slow file is named `*.system.<suffix>`; everything else is fast. vitest.config.ts and the no-skips fixture share it.
import { availableParallelism } from 'node:os';
import type { TestProjectInlineConfiguration } from 'vitest/config';

// The two projects over `dir` for test files ending in `suffix` (e.g. 'test.ts'); `systemSetup`: the system tier's global setup files.
export function tierProjects(dir: string, suffix: string, systemSetup: string[] = []): TestProjectInlineConfiguration[] {
  const system = `${dir}/**/*.system.${suffix}`;
  return [
    {
      extends: true,
      // vitest's default on 2 cores is one worker: the fast tier's files wait on child processes and sockets as much as
      // on the CPU, so two run at once. The system tier keeps the default (its real-time runs are timed against the lab).
      // Both tiers in one `vitest run` (no --project): the fast one first (groupOrder), each with its own workers.
      test: {
        name: 'fast',
        sequence: { groupOrder: 0 },
        include: [`${dir}/**/*.${suffix}`],
        exclude: [system, '**/node_modules/**'],
        maxWorkers: Math.max(2, availableParallelism()),
      },
    },
    { extends: true, test: { name: 'system', include: [system], exclude: ['**/node_modules/**'], globalSetup: systemSetup, sequence: { groupOrder: 1 } } },
  ];
}
