// A vitest reporter for CI: a test that did not run is a failure there. Tests that need sshd, Chromium, the OpenSSH
// client or PostgreSQL skip on a bare developer machine (each says why on stderr when its file loads), but .ci/run
// installs all of them and sets CI=1, so a skip in CI means a check silently did not happen.
import type { Reporter, TestModule } from 'vitest/node';

// The skipped (or todo) tests of a finished run, as `file > suite > test` lines.
export function skippedTests(modules: ReadonlyArray<TestModule>, root: string): string[] {
  const out: string[] = [];
  for (const m of modules) {
    for (const t of m.children.allTests()) {
      const r = t.result();
      if (r.state !== 'skipped') continue;
      const note = r.note ? ` (${r.note})` : '';
      out.push(`${m.moduleId.replace(`${root}/`, '')} > ${t.fullName}${note}`);
    }
  }
  return out;
}

// Fails the run (exit code 1) when any test was skipped, listing them.
export class NoSkipsReporter implements Reporter {
  private root = process.cwd();

  onInit(vitest: { config: { root: string } }): void {
    this.root = vitest.config.root;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const skipped = skippedTests(modules, this.root);
    if (skipped.length === 0) return;
    process.stderr.write(
      `\nCI=1: ${skipped.length} test(s) skipped; in CI every test must run (install what they need: see .ci/run and CONTRIBUTING.md):\n` +
        skipped.map((s) => `  - ${s}\n`).join(''),
    );
    process.exitCode = 1;
  }
}
