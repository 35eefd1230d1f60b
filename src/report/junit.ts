import { escapeXml } from './escape.js';

// One check, as CI tools (Jenkins, GitLab, GitHub test reporters) expect it.
export interface JunitCase {
  name: string;
  classname: string;
  timeS?: number;
  failure?: { message: string; type?: string; details?: string };
  skipped?: string;
}

export interface JunitSuite {
  name: string;
  cases: JunitCase[];
}

// JUnit XML (the de-facto Ant schema): <testsuites> of <testsuite> of <testcase>, failures carry a message attribute.
export function junitXml(name: string, suites: JunitSuite[]): string {
  const count = (s: JunitSuite[], f: (c: JunitCase) => boolean) => s.reduce((a, x) => a + x.cases.filter(f).length, 0);
  const tests = count(suites, () => true);
  const failures = count(suites, (c) => !!c.failure);
  const skipped = count(suites, (c) => !c.failure && !!c.skipped);
  const out: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${escapeXml(name)}" tests="${tests}" failures="${failures}" errors="0" skipped="${skipped}">`,
  ];
  for (const s of suites) {
    out.push(
      `  <testsuite name="${escapeXml(s.name)}" tests="${s.cases.length}" failures="${count([s], (c) => !!c.failure)}" errors="0" skipped="${count([s], (c) => !c.failure && !!c.skipped)}">`,
    );
    for (const c of s.cases) {
      const head = `    <testcase classname="${escapeXml(c.classname)}" name="${escapeXml(c.name)}" time="${(c.timeS ?? 0).toFixed(3)}"`;
      if (c.failure) {
        out.push(
          `${head}>`,
          `      <failure message="${escapeXml(c.failure.message)}" type="${escapeXml(c.failure.type ?? 'failure')}">${escapeXml(c.failure.details ?? c.failure.message)}</failure>`,
          '    </testcase>',
        );
      } else if (c.skipped) {
        out.push(`${head}>`, `      <skipped message="${escapeXml(c.skipped)}"/>`, '    </testcase>');
      } else out.push(`${head}/>`);
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}
