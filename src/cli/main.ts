import yargs, { type Argv } from 'yargs';
import { EXIT } from './exit-codes.js';
import { ArgvError, describeFailure } from './failure.js';
import { processIo, type CliIo } from './io.js';
import { refuseRepeated } from './options.js';
import { quoteInput } from '../domain/text.js';
import { registerCommand, type CommandContext, type CommandGroup, type SomeCommand } from './commands/define.js';
import { parseSpec } from './commands/parse.js';
import { runSpec } from './commands/run.js';
import { preflightSpec } from './commands/preflight.js';
import { cablingSpec } from './commands/cabling.js';
import { gradeSpec } from './commands/grade.js';
import { statusSpec } from './commands/status.js';
import { cleanupSpec } from './commands/cleanup.js';
import { reportSpec } from './commands/report.js';
import { keygenSpec } from './commands/keygen.js';
import { verifySpec } from './commands/verify.js';
import { compareSpec } from './commands/compare.js';
import { regressSpec } from './commands/regress.js';
import { batchSpec } from './commands/batch.js';
import { dbGroup } from './commands/db.js';
import { dashboardSpec } from './commands/dashboard.js';
import { simGroup } from './commands/sim.js';

// Every command, in the order `--help` lists them. Each module holds its options; its handler loads the rest.
const COMMANDS: readonly (SomeCommand | CommandGroup)[] = [
  parseSpec,
  runSpec,
  preflightSpec,
  cablingSpec,
  gradeSpec,
  statusSpec,
  cleanupSpec,
  reportSpec,
  keygenSpec,
  verifySpec,
  compareSpec,
  regressSpec,
  batchSpec,
  dbGroup,
  dashboardSpec,
  simGroup,
];

// Every command's first word, at every level (`run`, `db`, `import`, `sim`, `serve`, ...).
const COMMAND_WORDS = new Set(
  COMMANDS.flatMap((c) => [c.command, ...('subcommands' in c ? c.subcommands.map((s) => s.command) : [])].map((w) => w.split(' ')[0]!)),
);

// yargs' recommendation ("Did you mean run?") as a sentence naming what was typed.
function unknownCommand(msg: string | undefined, argv: string[]): string | null {
  const m = /^Did you mean (\S+)\?$/.exec(msg ?? '');
  if (!m) return null;
  const typed = argv.find((a) => !a.startsWith('-') && !COMMAND_WORDS.has(a));
  return `unknown command ${quoteInput(typed ?? '', 40)}: did you mean ${m[1]}?`;
}

// The composition root: parses the arguments, runs the command they name; returns the exit code.
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  let code: number = EXIT.ok;
  const ctx: CommandContext = { io, signal: io.signal ?? new AbortController().signal };
  const base = yargs(argv);
  const parser = COMMANDS.reduce(
    (y: Argv, spec) => registerCommand(y, spec, ctx, (c) => (code = c)),
    base
      .scriptName('cablequal')
      .usage('$0 <command> [options]\n\nBurn-in qualification of 200G cables between DGX Spark nodes.')
      .strict()
      .middleware((args) => refuseRepeated(args, (base as unknown as { getOptions(): { key: Record<string, unknown>; array: string[] } }).getOptions()), true)
      .demandCommand(1, 'name a command (see --help)')
      .recommendCommands(),
  )
    // Stop at the first problem: a command never runs with arguments yargs found wrong.
    .fail((msg, err) => {
      // yargs wraps what a coerce function throws in its own YError: that is a usage problem too.
      if (err && err.name !== 'YError') throw err;
      throw new ArgvError(unknownCommand(msg, argv) ?? err?.message ?? msg ?? 'bad usage');
    })
    .help()
    .version(false)
    .wrap(Math.min(110, process.stdout.columns ?? 100));
  try {
    // With a callback yargs hands --help over as text instead of printing it and exiting the process.
    let help = '';
    await parser.parseAsync(argv, {}, (_err, _args, output) => {
      help = output;
    });
    if (help) io.stdout(`${help}\n`);
  } catch (e) {
    // Bad input and a full disk are one line and an exit code; anything else is a bug (exit 70, with its stack).
    const failure = describeFailure(e);
    if (!failure) throw e;
    io.stderr(`cablequal: ${failure.text}\n`);
    return failure.code;
  }
  return code;
}
