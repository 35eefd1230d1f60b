import type { ArgumentsCamelCase, Argv } from 'yargs';
import type { CliIo } from '../io.js';

// What a command's handler gets besides its arguments: the streams and the signal that stops a run.
export interface CommandContext {
  io: CliIo;
  signal: AbortSignal;
}

// One command: its yargs builder (options only, cheap to load) and its handler, which imports what the command
// needs when it runs, so `cablequal --help` or `status` never load ssh2, pg, ajv or prom-client.
export interface CommandSpec<T = object> {
  command: string;
  describe: string;
  builder: (y: Argv) => Argv<T>;
  run: (args: ArgumentsCamelCase<T>, ctx: CommandContext) => Promise<number>;
}

// Any command, its options' type forgotten (what a list of commands holds).
export interface SomeCommand {
  command: string;
  describe: string;
  builder: (y: Argv) => Argv<unknown>;
  run: (args: never, ctx: CommandContext) => Promise<number>;
}

// A command with subcommands (`db import`, `sim serve`); `demand` is the message when none is named.
export interface CommandGroup {
  command: string;
  describe: string;
  subcommands: readonly SomeCommand[];
  demand: string;
}

// Type the builder's options into the handler's arguments.
export function defineCommand<T>(spec: CommandSpec<T>): CommandSpec<T> {
  return spec;
}

// Add a command (or a group and its subcommands) to a yargs parser; `done` receives the handler's exit code.
export function registerCommand(y: Argv, spec: SomeCommand | CommandGroup, ctx: CommandContext, done: (code: number) => void): Argv {
  if ('subcommands' in spec) {
    return y.command(spec.command, spec.describe, (yy) =>
      spec.subcommands.reduce((acc: Argv, sub) => registerCommand(acc, sub, ctx, done), yy).demandCommand(1, spec.demand),
    );
  }
  return y.command(spec.command, spec.describe, spec.builder, async (args) => done(await spec.run(args as never, ctx)));
}
