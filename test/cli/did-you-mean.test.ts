// A person who mistypes gets the word they meant (#34 item 4): a misspelled option, command, scenario, protocol,
// parse kind, choice or cage, each guessed by the one helper (src/domain/suggest.ts), never a list of everything
// instead; a missing argument is named, with the command's usage line, in at most three lines.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closestWord, editDistance } from '../../src/domain/suggest.js';
import { runCli } from '../helpers/cli.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('the edit distance behind every guess', () => {
  it.each([
    ['sim', 'sim', 0],
    ['simm', 'sim', 1],
    ['smi', 'sim', 1], // two neighbours swapped
    ['good-qsf56', 'good-qsfp56', 1],
    ['manifst', 'manifest', 1],
    ['quik', 'quick', 1],
    ['', 'abc', 3],
    ['kitten', 'sitting', 3],
  ])('%s -> %s: %d', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
    expect(editDistance(b, a)).toBe(d);
  });

  it('guesses only what is close, the first listed on a tie, whatever the case; never what was typed', () => {
    expect(closestWord('good-qsf56', ['good-qsfp112', 'good-qsfp56'])).toBe('good-qsfp56');
    expect(closestWord('xyz', ['good-qsfp56', 'failing-clone'])).toBeNull();
    expect(closestWord('ab', ['ac', 'ad'])).toBe('ac');
    expect(closestWord('QUICK', ['quick'])).toBe('quick');
    expect(closestWord('quick', ['quick'])).toBeNull();
    expect(closestWord('x'.repeat(5000), ['x'])).toBeNull();
  });
});

describe('did you mean', () => {
  it.each([
    [['run', '--simm', 'good-qsfp56'], 'cablequal: run: unknown option "--simm": did you mean --sim?', 'cablequal run --help'],
    [['batch', '--manifst', 'x.csv'], 'cablequal: batch: unknown option "--manifst": did you mean --manifest?', 'cablequal batch --help'],
    [['run', '--sim', 'good-qsfp56', '--dry-rn'], 'cablequal: run: unknown option "--dry-rn": did you mean --dry-run?', 'cablequal run --help'],
    [['db', 'import', '--dbb', 'x'], 'cablequal: db import: unknown option "--dbb": did you mean --db?', 'cablequal db import --help'],
    [['run', '--sim', 'good-qsfp56', '--frobnicate'], 'cablequal: run: unknown option "--frobnicate"', 'cablequal run --help'],
    [['batch', '--manifest', 'x.csv', '--reboot', 'atuo'], 'cablequal: --reboot "atuo": did you mean auto?', 'cablequal batch --help'],
    [['parse', 'ethtool-fce', '-'], 'cablequal: parse: unknown kind "ethtool-fce": did you mean ethtool-fec?', 'cablequal parse --help'],
  ])('%j', async (argv, first, help) => {
    const r = await runCli(argv);
    expect(r).toEqual({ code: 2, out: '', err: `${first}\nRun "${help}" for usage.\n` });
  });

  it.each([
    [['run', '--sim', 'good-qsf56'], 'cablequal: unknown scenario "good-qsf56": did you mean good-qsfp56?'],
    [['run', '--sim', 'nonsense'], 'cablequal: unknown scenario "nonsense" (`cablequal sim scenarios` lists them)'],
    [
      ['run', '--sim', 'good-qsfp56', '--protocol', 'quik'],
      "cablequal: --protocol quik: no built-in protocol of that name: did you mean quick? (or give a protocol file's path)",
    ],
    [['run', '--sim', 'good-qsfp56', '--port', 'bth'], 'cablequal: --port: cage must be 0, 1 or auto, got "bth": did you mean both?'],
    [['run', '--sim', 'good-qsfp56', '--port', '2'], 'cablequal: --port: cage must be 0, 1 or auto, got "2"'],
  ])('%j', async (argv, line) => {
    const r = await runCli(argv);
    expect(r).toEqual({ code: 2, out: '', err: `${line}\n` });
  });

  it('every shipped scenario one letter off is guessed as itself', async () => {
    const names = readdirSync(join(ROOT, 'samples', 'scenarios'))
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -5));
    for (const n of names) expect(closestWord(n.slice(0, -1), names), n).toBe(n);
  });

  it('there is one "did you mean" in the source: the helper (yargs recommendCommands is not used)', () => {
    const files = (readdirSync(join(ROOT, 'src'), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
    const saying = files.filter((f) => /did you mean|recommendCommands/i.test(readFileSync(join(ROOT, 'src', f), 'utf8').replace(/^\s*\/\/.*$/gm, '')));
    expect(saying).toEqual(['domain/suggest.ts']);
  });
});

describe('a missing argument says which, with the usage line', () => {
  it('verify: at most three lines', async () => {
    const r = await runCli(['verify']);
    expect(r.code).toBe(2);
    expect(r.err.trimEnd().split('\n')).toEqual([
      'cablequal: verify: missing <certificate> (the certificate.json to check)',
      'usage: cablequal verify <certificate> [options]',
      'Run "cablequal verify --help" for usage.',
    ]);
  });

  it.each([
    [['grade'], 'cablequal: grade: missing <runDirs> (run directories)', 'usage: cablequal grade <runDirs..> [options]'],
    [['parse', 'nccl'], 'cablequal: parse: missing <file> (file, or - for stdin)', 'usage: cablequal parse <kind> <file> [options]'],
    [
      ['batch', '--sim', 'good-qsfp56'],
      'cablequal: batch: missing --manifest (CSV: label[,pn][,serial][,scenario] (docs/operator-guide.md §7))',
      'usage: cablequal batch [options]',
    ],
  ])('%j', async (argv, first, usage) => {
    const r = await runCli(argv);
    expect(r.code).toBe(2);
    expect(r.err.trimEnd().split('\n')).toEqual([first, usage, `Run "cablequal ${argv[0]} --help" for usage.`]);
  });
});
