// What the CLI says when it is used wrong or asked for help: a mistyped command gets a "did you mean", a protocol
// name that is not built in lists the built-in ones, every option and positional in every command's help says what
// it is (array positionals without a misleading [default: []]), and the manifest format the batch help points to is
// documented, its example parsing as written.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../src/batch/manifest.js';
import { runCli } from '../helpers/cli.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('usage mistakes', () => {
  it.each([
    [['runn'], 'unknown command "runn": did you mean run?', 'cablequal --help'],
    [['verfy', 'cert.json'], 'unknown command "verfy": did you mean verify?', 'cablequal --help'],
    [['sim', 'scenario'], 'unknown command "scenario": did you mean scenarios?', 'cablequal sim --help'],
    [['db', 'imprt'], 'unknown command "imprt": did you mean import?', 'cablequal db --help'],
    [['frobnicate'], 'unknown command "frobnicate"', 'cablequal --help'],
  ])('%j', async (argv, first, help) => {
    const r = await runCli(argv);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`cablequal: ${first}\nRun "${help}" for usage.\n`);
  });

  it('a --protocol name that is not built in: the nearest built-in one, else the list of them (run and batch)', async () => {
    const builtIn = readdirSync(join(ROOT, 'protocols'))
      .filter((f) => f.endsWith('.json') && !f.endsWith('.schema.json'))
      .map((f) => f.replace(/\.json$/, ''))
      .sort();
    expect(builtIn).toEqual(['quick', 'spark-burnin']);
    const line = "cablequal: --protocol quik: no built-in protocol of that name: did you mean quick? (or give a protocol file's path)\n";
    const run = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quik']);
    expect(run.code).toBe(2);
    expect(run.err).toBe(line);
    expect((await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'soak'])).err).toBe(
      `cablequal: --protocol soak: no built-in protocol of that name (built in: ${builtIn.join(', ')}) (or give a protocol file's path)\n`,
    );
    const batch = await runCli(['batch', '--manifest', join(ROOT, 'test', 'fixtures', 'batch', 'two-cables.csv'), '--sim', 'manifest', '--protocol', 'quik']);
    expect(batch.code).toBe(2);
    expect(batch.err).toBe(line);
  });
});

// The help of every command and subcommand.
const COMMANDS = [
  ['parse'],
  ['run'],
  ['preflight'],
  ['grade'],
  ['status'],
  ['cleanup'],
  ['report'],
  ['keygen'],
  ['verify'],
  ['compare'],
  ['regress'],
  ['batch'],
  ['db', 'import'],
  ['dashboard'],
  ['sim', 'scenarios'],
  ['sim', 'serve'],
];

describe('help', () => {
  it.each(COMMANDS)('%s: every option and positional is described', async (...command) => {
    const r = await runCli([...command, '--help']);
    expect(r.code).toBe(0);
    // An entry's name (the Examples that end the help are command lines: test/cli/help.test.ts), then two spaces and its description before the [type] notes (or at the end of the line).
    const entries = r.out
      .split('\nExamples:\n')[0]!
      .split('\n')
      .filter((l) => /^ {2}(--)?[a-zA-Z][\w-]*( |$)/.test(l));
    expect(entries.length).toBeGreaterThan(0);
    for (const l of entries) expect(l, `${command.join(' ')}: ${l}`).toMatch(/^ {2}\S+ {2,}[^\s[]/);
    expect(r.out).not.toContain('[default: []]');
  });

  it('batch --help says what --protocol and --accept-new-host-keys are and where the manifest format is', async () => {
    const r = await runCli(['batch', '--help'], { tty: { columns: 200 } });
    expect(r.out).toMatch(/--protocol +built-in protocol name \(spark-burnin, quick\) or a protocol file/);
    expect(r.out).toMatch(/--accept-new-host-keys +trust unknown SSH host keys on first use/);
    expect(r.out).toMatch(/--manifest +CSV: label\[,pn\]\[,serial\]\[,scenario\] \(docs\/operator-guide\.md §7\)/);
  });
});

describe('the manifest format in the guides', () => {
  it("docs/operator-guide.md §7 shows it with an example that parses as written; README's and docs/batch.md's batch sections point there", () => {
    const guide = readFileSync(join(ROOT, 'docs', 'operator-guide.md'), 'utf8');
    const section = guide.slice(guide.indexOf('## 7. '), guide.indexOf('## 8. '));
    const example = /```csv\n([\s\S]*?)```/.exec(section)![1]!;
    expect(parseManifest(example, 'example.csv')).toEqual([
      { label: 'box17-01', line: 3, expectedPn: 'NJAAKK0006', expectedSerial: 'APF24150032K7N' },
      { label: 'box17-02', line: 4, expectedPn: 'NJAAKK0006' },
      { label: 'box17-03', line: 5 },
    ]);
    for (const column of ['`label`', '`pn` (or `part_number`)', '`serial`', '`scenario`']) expect(section).toContain(`| ${column} |`);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(
      'The manifest is a CSV with a `label` column\n([operator guide §7](docs/operator-guide.md#7-batches-and-cable-swaps-the-hot-plug-trap)).',
    );
    const batch = readFileSync(join(ROOT, 'docs', 'batch.md'), 'utf8');
    expect(batch).toContain('The format, with an example, is in [docs/operator-guide.md](operator-guide.md) §7.');
  });
});
