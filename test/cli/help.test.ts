// Help that teaches (#34 item 3): every command's --help ends with 2 to 4 examples of itself, the operator's options
// come first and the simulated lab's apart, numbers say [number], choices are listed. The commands are read from the
// CLI's own list, so a new command without examples fails here.
import { describe, expect, it } from 'vitest';
import type { CommandGroup, SomeCommand } from '../../src/cli/commands/define.js';
import { COMMANDS } from '../../src/cli/main.js';
import { usageProblem } from '../../src/cli/usage-errors.js';
import { runCli } from '../helpers/cli.js';

// Every command and group as the words that name it, with its declaration.
const ALL: [string[], SomeCommand | CommandGroup][] = COMMANDS.flatMap((c) => {
  const word = c.command.split(' ')[0]!;
  const here: [string[], SomeCommand | CommandGroup] = [[word], c];
  return 'subcommands' in c ? [here, ...c.subcommands.map((s) => [[word, s.command.split(' ')[0]!], s] as [string[], SomeCommand])] : [here];
});

// The help's Examples section with its wrapping undone (yargs wraps both columns), or null when it has none.
function examplesOf(help: string): string | null {
  const at = help.indexOf('\nExamples:\n');
  return at < 0
    ? null
    : help
        .slice(at + '\nExamples:\n'.length)
        .replace(/\s+/g, ' ')
        .trim();
}

// One option's entry in a help text (its lines until the next entry), wrapping undone.
function entryOf(help: string, option: string): string {
  const at = help.search(new RegExp(`\n {2}${option} `));
  if (at < 0) return '';
  const rest = help.slice(at + 1);
  const end = rest.slice(1).search(/\n {2}-|\n\n/);
  return (end < 0 ? rest : rest.slice(0, end + 1)).replace(/\s+/g, ' ').trim();
}

describe('every command teaches by example', () => {
  it('the list covers every command', () => {
    expect(ALL.map(([w]) => w.join(' '))).toEqual([
      'parse',
      'run',
      'preflight',
      'cabling',
      'grade',
      'status',
      'cleanup',
      'report',
      'keygen',
      'verify',
      'compare',
      'regress',
      'batch',
      'watch',
      'db',
      'db import',
      'dashboard',
      'sim',
      'sim scenarios',
      'sim serve',
    ]);
  });

  it.each(ALL)('%j: --help ends with 2 to 4 examples, each a cablequal command line', async (words, spec) => {
    expect(spec.examples.length).toBeGreaterThanOrEqual(2);
    expect(spec.examples.length).toBeLessThanOrEqual(4);
    const r = await runCli([...words, '--help'], { tty: { columns: 160 } });
    expect(r.code).toBe(0);
    // The examples in order, each its command line then what it does, and nothing after the last.
    const expected = spec.examples.map(([cmd, what]) => `${cmd.replaceAll('$0', 'cablequal')} ${what}`).join(' ');
    expect(examplesOf(r.out)).toBe(expected);
    for (const [cmd, what] of spec.examples) {
      expect(cmd).toMatch(/(^|\| )\$0 [a-z]/);
      expect(what.length).toBeGreaterThan(10);
    }
  });
});

describe('the examples are command lines the CLI takes', () => {
  it('cablequal --help ends with examples too', async () => {
    const r = await runCli(['--help'], { tty: { columns: 160 } });
    expect(examplesOf(r.out)).toMatch(/^cablequal run --sim failing-clone the whole procedure on the simulated lab/);
  });

  it.each(ALL)('%j: every example names known commands and options', (_words, spec) => {
    for (const [cmd] of spec.examples) {
      // The cablequal part of a pipeline, its placeholders (<run dir>) as one word each.
      const line = cmd.slice(cmd.indexOf('$0 ') + 3).replace(/<[^>]+>/g, 'X');
      const argv = line.split(' ').filter(Boolean);
      // Nothing unknown: the message yargs gave (here 'none') comes back as it was.
      expect(usageProblem('none', argv, COMMANDS).message, cmd).toBe('none');
    }
  });
});

describe('options in the order a person needs them', () => {
  it.each([
    [['run'], ['--nodes', '--port', '--protocol'], ['--sim', '--sim-fault', '--seed', '--speed']],
    [['batch'], ['--manifest', '--nodes', '--pair'], ['--sim', '--seed', '--sim-swap', '--sim-reboot']],
    [['preflight'], ['--nodes', '--port'], ['--sim']],
  ])('%j: the operator first, the simulated lab in its own group after', async (words, operator, sim) => {
    const out = (await runCli([...words, '--help'])).out;
    const options = out.indexOf('\nOptions:\n');
    const lab = out.indexOf('\nSimulated lab:\n');
    expect(options).toBeGreaterThan(0);
    expect(lab).toBeGreaterThan(options);
    const section = (name: string) => new RegExp(`^ {2}${name} `, 'm');
    for (const o of operator) expect(out.slice(options, lab)).toMatch(section(o));
    for (const o of sim) {
      expect(out.slice(lab)).toMatch(section(o));
      expect(out.slice(options, lab)).not.toMatch(section(o));
    }
  });

  it.each([
    [['run'], ['--seed', '--speed', '--metrics-port', '--metrics-linger']],
    [['batch'], ['--seed', '--sim-swap', '--sim-reboot', '--metrics-port']],
    [['dashboard'], ['--listen']],
    [
      ['sim', 'serve'],
      ['--listen', '--speed', '--seed'],
    ],
    [['grade'], ['--rules']],
  ])('%j: numbers are [number]', async (words, numbers) => {
    const out = (await runCli([...words, '--help'])).out;
    for (const n of numbers) {
      expect(entryOf(out, n), n).toMatch(/\[number\]/);
      expect(entryOf(out, n), n).not.toMatch(/\[string\]/);
    }
  });

  it('choices are listed', async () => {
    expect(entryOf((await runCli(['run', '--help'])).out, '--on-hangup')).toMatch(/\[choices: "continue", "abort"\]/);
    expect(entryOf((await runCli(['batch', '--help'])).out, '--reboot')).toMatch(/\[choices: "auto", "manual"\]/);
  });

  it('--port is the cage wherever it is an option; a TCP port is --listen or --metrics-port', async () => {
    for (const words of [['run'], ['batch'], ['preflight']])
      expect(entryOf((await runCli([...words, '--help'])).out, '--port')).toMatch(/^--port cage \(QSFP port\)/);
    for (const words of [['dashboard'], ['sim', 'serve']]) {
      const out = (await runCli([...words, '--help'])).out;
      expect(entryOf(out, '--listen')).toMatch(/TCP port/);
      expect(out).not.toMatch(/--port/);
    }
  });
});
