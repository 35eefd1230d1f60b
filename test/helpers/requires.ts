// Tests that need a machine program (sshd, the OpenSSH client, ssh-agent, Chromium, PostgreSQL) skip on a bare
// developer machine and say so; in CI (.ci/run installs them all and sets CI=1) a skip fails the run
// (test/helpers/no-skips-reporter.ts).
import { existsSync } from 'node:fs';

// Whether `path` is missing; if so, print once, at load, which tests skip and the package that provides it.
export function missingProgram(path: string, tests: string, debianPackage: string): boolean {
  if (existsSync(path)) return false;
  console.warn(`\n!!! ${path} is not installed: ${tests} are SKIPPED (apt-get install -y ${debianPackage}) !!!\n`);
  return true;
}
