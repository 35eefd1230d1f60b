import yargs, { type Argv } from 'yargs';
import { didYouMean } from '../domain/suggest.js';
import { quoteInput } from '../domain/text.js';
import type { CommandGroup, SomeCommand } from './commands/define.js';
import { ArgvError } from './failure.js';

// What the CLI says when yargs finds the arguments wrong, in the person's words: the mistyped command or option with
// a guess (src/domain/suggest.ts, the one "did you mean"), the missing argument by name with the command's usage
// line, a value outside an option's choices with the nearest choice. The command is found from argv itself.

type Entry = SomeCommand | CommandGroup;

const wordOf = (c: Entry) => c.command.split(' ')[0]!;

// The commands argv names, from the top down (`db import`), and the first word that names no command where one was
// expected (`runn`), if any. Words after a command that takes no subcommand are its positionals.
function commandPath(argv: readonly string[], commands: readonly Entry[]): { path: Entry[]; unknown: { word: string; level: readonly Entry[] } | null } {
  const path: Entry[] = [];
  let level: readonly Entry[] | null = commands;
  for (const a of argv) {
    if (a.startsWith('-') || level === null) break;
    const found: Entry | undefined = level.find((c) => wordOf(c) === a);
    if (!found) return { path, unknown: { word: a, level } };
    path.push(found);
    level = 'subcommands' in found ? found.subcommands : null;
  }
  return { path, unknown: null };
}

// The options a command declares (its builder run on a throwaway parser), with their aliases and descriptions.
function declared(spec: Entry | undefined, top: boolean): { names: Set<string>; describe: Record<string, string>; usage: string | null } {
  const names = new Set(['help']);
  if (top) for (const n of ['version', 'V']) names.add(n);
  if (!spec || 'subcommands' in spec) return { names, describe: {}, usage: null };
  const y = spec.builder(yargs([]).version(false) as Argv) as unknown as {
    getOptions(): { key: Record<string, unknown>; alias: Record<string, string[]> };
    getInternalMethods?(): { getUsageInstance?(): { getDescriptions?(): Record<string, string> } };
  };
  const o = y.getOptions();
  for (const k of Object.keys(o.key)) names.add(k);
  for (const list of Object.values(o.alias)) for (const a of list) names.add(a);
  names.delete('version');
  // yargs keeps what each option says in its usage instance (yargs 18); without it a message names no description.
  const describe = y.getInternalMethods?.().getUsageInstance?.().getDescriptions?.() ?? {};
  return { names, describe, usage: spec.command };
}

// The options typed that the command does not declare, as typed (`--simm`, `-x`).
function unknownOptions(argv: readonly string[], names: Set<string>): { typed: string; name: string }[] {
  const out: { typed: string; name: string }[] = [];
  for (const a of argv) {
    if (a === '--') break;
    if (a.startsWith('--')) {
      const name = a.slice(2).split('=')[0]!;
      // yargs takes `--dryRun` for `--dry-run`, and `--no-<flag>` for a boolean flag's false.
      const kebab = name.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`);
      const known = names.has(kebab) || (kebab.startsWith('no-') && names.has(kebab.slice(3)));
      if (!known) out.push({ typed: `--${name}`, name });
    } else if (/^-[a-zA-Z]/.test(a)) {
      for (const ch of a.slice(1).split('=')[0]!) if (!names.has(ch)) out.push({ typed: `-${ch}`, name: ch });
    }
  }
  return out;
}

// The text typed after `--name` (or in `--name=text`), the last time it was given; undefined when not found.
function typedValue(argv: readonly string[], name: string): string | undefined {
  for (let i = argv.length - 1; i >= 0; i--) {
    const a = argv[i]!;
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3);
    if (a === `--${name}`) return argv[i + 1];
  }
  return undefined;
}

// The ArgvError for what yargs reported (`msg`, or the message of what a coerce function threw).
export function usageProblem(msg: string, argv: readonly string[], commands: readonly Entry[]): ArgvError {
  const { path, unknown } = commandPath(argv, commands);
  const words = path.map(wordOf).join(' ');
  const helpFor = words ? `cablequal ${words} --help` : 'cablequal --help';
  if (unknown) {
    const guess = didYouMean(unknown.word, unknown.level.map(wordOf));
    return new ArgvError(`unknown command ${quoteInput(unknown.word, 40)}${guess}`, { helpFor });
  }
  const leaf = path.at(-1);
  const { names, describe, usage } = declared(leaf, path.length === 0);
  const usageLine = usage ? `usage: cablequal ${[...path.slice(0, -1).map(wordOf), usage].join(' ')} [options]` : undefined;
  const wrong = unknownOptions(argv, names);
  if (wrong.length) {
    const candidates = [...names].filter((n) => n.length > 1);
    const said = wrong.map((w) => {
      const guess = didYouMean(w.name, candidates, '--');
      return `unknown option ${quoteInput(w.typed, 40)}${guess}`;
    });
    return new ArgvError(`${words ? `${words}: ` : ''}${said.join('; ')}`, { helpFor });
  }
  const described = (name: string) => (describe[name] ? ` (${describe[name]!.replace(/^__yargsString__:/, '')})` : '');
  const positional = /^Not enough non-option arguments: got (\d+), need at least (\d+)$/.exec(msg);
  if (positional && usage) {
    const wanted = [...usage.matchAll(/<([^>.]+)(\.\.)?>/g)].map((m) => m[1]!).slice(Number(positional[1]));
    const missing = wanted.map((w) => `<${w}>${described(w)}`).join(', ');
    return new ArgvError(`${words}: missing ${missing || 'an argument'}`, { helpFor, ...(usageLine ? { usage: usageLine } : {}) });
  }
  const required = /^Missing required arguments?: (.+)$/.exec(msg);
  if (required) {
    const missing = required[1]!.split(', ').map((n) => `--${n}${described(n)}`);
    return new ArgvError(`${words ? `${words}: ` : ''}missing ${missing.join(', ')}`, { helpFor, ...(usageLine ? { usage: usageLine } : {}) });
  }
  // Invalid values:\n  Argument: port, Given: "bth", Choices: "0", "1", "auto", "both"
  const choice = /Argument: (\S+), Given: "(.*)", Choices: (.+)$/m.exec(msg);
  if (choice) {
    const [, name, given] = choice as unknown as [string, string, string];
    const choices = [...choice[3]!.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
    // A cage number is not guessed from another number (`--port 2` is not a typo of 1).
    const guess = /^\d+$/.test(given) ? '' : didYouMean(given, choices);
    const what = usage?.includes(`<${name}>`) ? `${words}: unknown ${name} ${quoteInput(given, 40)}` : `--${name} ${quoteInput(given, 40)}`;
    const list = choices.length <= 6 ? `: expected one of ${choices.join(', ')}` : '';
    return new ArgvError(`${what}${guess || list}`, { helpFor });
  }
  // A number option's coerce names the number yargs read (NaN for text): say what was typed instead.
  const value = /^--([\w-]+): (.*), got ([^"]*)$/.exec(msg);
  const typed = value ? typedValue(argv, value[1]!) : undefined;
  if (value && typed !== undefined) return new ArgvError(`--${value[1]}: ${value[2]}, got ${quoteInput(typed, 40)}`, { helpFor });
  return new ArgvError(msg, { helpFor });
}
