// README is read in five minutes (#34 item 1): at most 150 lines, the two quick-start commands as written, and every
// version, limit and number it states taken from the code (generated between markers, or checked here); every
// command has its line; no link in README, ARCHITECTURE, CONTRIBUTING, BENCHMARKS or docs/ points at a file or a
// heading the repository lacks.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/main.js';
import { EXIT, exitCodeFor } from '../../src/cli/exit-codes.js';
import { signalExitCode } from '../../src/cli/io.js';
import { RULE_DEFINITIONS } from '../../src/rules/definitions.js';
import { RULES_VERSION } from '../../src/rules/versions.js';
import { runCli } from '../helpers/cli.js';

const ROOT = join(import.meta.dirname, '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const protocol = (name: string) =>
  JSON.parse(readFileSync(join(ROOT, 'protocols', `${name}.json`), 'utf8')) as {
    phases: { name: string; kind: string; durationS?: number; gpuLoad?: unknown }[];
  };

// The rows of the markdown table that follows `heading`'s line, as cells.
function tableAfter(text: string, heading: string): string[][] {
  const lines = text.slice(text.indexOf(heading)).split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const l of lines.slice(start + 2)) {
    if (!l.startsWith('|')) break;
    rows.push(
      l
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim()),
    );
  }
  return rows;
}

describe('README', () => {
  it('is at most 150 lines, with the quick start as written', () => {
    expect(README.trimEnd().split('\n').length).toBeLessThanOrEqual(150);
    expect(README).toContain('\nnpm ci && npx cablequal run --sim failing-clone ');
    expect(README).toContain('\nnpm test ');
  });

  it('states the rules version the code has, generated (scripts/rule-docs.ts)', () => {
    expect(README).toContain(`<!-- rules-version -->rules version ${RULES_VERSION}<!-- /rules-version -->`);
  });

  it("states the burn-in's soaks, the set-up check's length and the Node version the package declares", () => {
    const soaks = protocol('spark-burnin').phases.filter((p) => p.kind === 'soak');
    expect(soaks.map((p) => [p.durationS, p.gpuLoad === true])).toEqual([
      [600, false],
      [3600, true],
    ]);
    expect(README).toContain('<!-- soak-minutes -->10 minutes of link load with idle GPUs and 60 with the GPU load\non both nodes<!-- /soak-minutes -->');
    const quickS = protocol('quick').phases.reduce((s, p) => s + (p.durationS ?? 0), 0);
    expect(Math.ceil(quickS / 60)).toBe(5);
    expect(README).toContain('--protocol quick: a 5-minute set-up check');
    const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(engines).toBe('>=20.19');
    expect(README).toContain('Node.js >= 20.19.');
  });

  it("the verdicts' exit codes and the marginal band it quotes are the code's", () => {
    const rows = tableAfter(README, '## Verdicts at a glance');
    expect(rows.map((r) => r[0])).toEqual(['PASS', 'MARGINAL', 'FAIL', 'ERROR', 'ABORTED', 'set-up check']);
    for (const r of rows.slice(0, 5)) expect(Number(r[3]), r[0]).toBe(exitCodeFor(r[0] as 'PASS'));
    const margin = RULE_DEFINITIONS.find((r) => r.id === 'fec-margin')!;
    expect(margin.marginal).toBe(2);
    expect(rows[1]![1]).toContain('FEC margin under 2 decades');
  });

  it('the exit code table is every code the CLI returns', () => {
    const rows = tableAfter(README, '## Exit codes');
    const codes = rows.map((r) => Number(r[0]));
    expect(codes).toEqual([
      EXIT.ok,
      EXIT.fail,
      EXIT.usage,
      EXIT.error,
      EXIT.aborted,
      EXIT.unpinned,
      EXIT.internal,
      signalExitCode('SIGHUP'),
      EXIT.interrupted,
      signalExitCode('SIGTERM'),
    ]);
    expect(signalExitCode('SIGINT')).toBe(EXIT.interrupted);
    const says = Object.fromEntries(rows.map((r) => [Number(r[0]), r[1]!]));
    expect(says[0]).toMatch(/^PASS or MARGINAL/);
    expect(says[1]).toMatch(/^FAIL/);
    expect(says[3]).toMatch(/^ERROR/);
    expect(says[4]).toMatch(/^ABORTED/);
    expect(says[5]).toMatch(/UNPINNED/);
  });

  it("has one line per command (a new command adds its own), and the dashboard's address is its default", async () => {
    const leaves = COMMANDS.flatMap((c) =>
      'subcommands' in c ? c.subcommands.map((s) => `${c.command} ${s.command.split(' ')[0]}`) : [c.command.split(' ')[0]!],
    );
    const listed = tableAfter(README, '<!-- commands -->').map((r) => r[0]!.replace(/^`cablequal (.+)`$/, '$1'));
    expect([...listed].sort()).toEqual([...leaves].sort());
    const help = (await runCli(['dashboard', '--help'], { tty: { columns: 160 } })).out;
    expect(help).toMatch(/--listen +TCP port to listen on \(0 = a free one; default 8080\)/);
    expect(README).toContain('http://127.0.0.1:8080/');
  });
});

// GitHub's anchor of a heading: lower case, punctuation but hyphens dropped, spaces as hyphens.
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

describe('links', () => {
  const pages = [
    'README.md',
    'ARCHITECTURE.md',
    'CONTRIBUTING.md',
    'BENCHMARKS.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];

  it.each(pages)('%s: every relative link and anchor exists', (page) => {
    const text = readFileSync(join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
    const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/.test(l));
    for (const link of links) {
      const [file, anchor] = link.split('#') as [string, string | undefined];
      const target = file === '' ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), file);
      expect(existsSync(target), `${page}: ${link}`).toBe(true);
      if (anchor !== undefined && target.endsWith('.md')) {
        const headings = [...readFileSync(target, 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!));
        expect(headings, `${page}: ${link}`).toContain(anchor);
      }
    }
  });

  it('DOMAIN.md, which the repository does not have, is cited nowhere', () => {
    for (const page of pages) expect(readFileSync(join(ROOT, page), 'utf8'), page).not.toContain('DOMAIN.md');
  });
});
