import type { ArgumentsCamelCase, Argv } from 'yargs';
import type { CliIo } from '../io.js';

// What a command's handler gets besides its arguments: the streams and the signal that stops a run.
export interface CommandContext {
  io: CliIo;
  signal: AbortSignal;
}

// One command: its yargs builder (options only, cheap to load) and its handler, which imports what the command
// needs when it runs, so `cablequal --help` or `status` never load ssh2, pg, ajv or prom-client. Its help teaches:
// `examples` (2 to 4, `$0` for cablequal, each one line of what it does: test/cli/help.test.ts holds every command
// to it) end its --help; `simOptions` are listed apart, after the operator's, under "Simulated lab:". A new command
// also gets its one line in README.md's command list (the same test checks it is there).
export interface CommandSpec<T = object> {
  command: string;
  describe: string;
  builder: (y: Argv) => Argv<T>;
  examples: readonly Example[];
  simOptions?: readonly string[];
  run: (args: ArgumentsCamelCase<T>, ctx: CommandContext) => Promise<number>;
}

// An example of a command line (`$0 run --sim failing-clone`) and what it does.
export type Example = readonly [command: string, what: string];

// Any command, its options' type forgotten (what a list of commands holds).
export interface SomeCommand {
  command: string;
  describe: string;
  builder: (y: Argv) => Argv<unknown>;
  examples: readonly Example[];
  simOptions?: readonly string[];
  run: (args: never, ctx: CommandContext) => Promise<number>;
}

// A command with subcommands (`db import`, `sim serve`); `demand` is the message when none is named.
export interface CommandGroup {
  command: string;
  describe: string;
  subcommands: readonly SomeCommand[];
  demand: string;
  examples: readonly Example[];
}

// Type the builder's options into the handler's arguments.
export function defineCommand<T>(spec: CommandSpec<T>): CommandSpec<T> {
  return spec;
}

// Add a command (or a group and its subcommands) to a yargs parser; `done` receives the handler's exit code.
export function registerCommand(y: Argv, spec: SomeCommand | CommandGroup, ctx: CommandContext, done: (code: number) => void): Argv {
  if ('subcommands' in spec) {
    return y.command(spec.command, spec.describe, (yy) =>
      withExamples(
        spec.subcommands.reduce((acc: Argv, sub) => registerCommand(acc, sub, ctx, done), yy),
        spec.examples,
      ).demandCommand(1, spec.demand),
    );
  }
  return y.command(
    spec.command,
    spec.describe,
    (yy) => withHelp(spec.builder(yy), spec),
    async (args) => done(await spec.run(args as never, ctx)),
  );
}

function withExamples(y: Argv, examples: readonly Example[]): Argv {
  return examples.reduce((acc, [cmd, what]) => acc.example(cmd, what), y);
}

// The operator's options first ("Options:"), the simulated lab's apart, then the examples.
function withHelp(y: Argv, spec: SomeCommand): Argv {
  const sim = spec.simOptions ?? [];
  if (sim.length) {
    const o = (y as unknown as { getOptions(): { key: Record<string, unknown>; alias: Record<string, string[]> } }).getOptions();
    const aliases = new Set(Object.values(o.alias).flat());
    y.group(
      Object.keys(o.key).filter((k) => !sim.includes(k) && !aliases.has(k) && k !== 'help' && k !== 'version'),
      'Options:',
    ).group([...sim], 'Simulated lab:');
  }
  return withExamples(y, spec.examples);
}
