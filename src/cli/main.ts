import yargs, { type Argv } from 'yargs';
import { EXIT } from './exit-codes.js';
import { describeFailure } from './failure.js';
import { usageProblem } from './usage-errors.js';
import { processIo, type CliIo } from './io.js';
import { refuseRepeated } from './options.js';
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
import { watchSpec } from './commands/watch.js';

// Every command, in the order `--help` lists them. Each module holds its options, help examples and handler (which
// loads the rest); a new command is one module added here (test/cli/help.test.ts holds its help and README line).
/** @internal */
export const COMMANDS: readonly (SomeCommand | CommandGroup)[] = [
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
  watchSpec,
  dbGroup,
  dashboardSpec,
  simGroup,
];

// The composition root: parses the arguments, runs the command they name; returns the exit code.
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  // `cablequal --version` (-V): which cablequal, which grading rules and which journal format (loaded only then).
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    const { versionText } = await import('./version.js');
    io.stdout(versionText());
    return EXIT.ok;
  }
  let code: number = EXIT.ok;
  const ctx: CommandContext = { io, signal: io.signal ?? new AbortController().signal };
  const base = yargs(argv);
  const parser = COMMANDS.reduce(
    (y: Argv, spec) => registerCommand(y, spec, ctx, (c) => (code = c)),
    base
      .scriptName('cablequal')
      .version(false)
      .option('version', { alias: 'V', type: 'boolean', global: false, describe: 'print the package, rules and journal format versions' })
      .usage('$0 <command> [options]\n\nBurn-in qualification of 200G cables between DGX Spark nodes.')
      .strict()
      .middleware((args) => refuseRepeated(args, (base as unknown as { getOptions(): { key: Record<string, unknown>; array: string[] } }).getOptions()), true)
      .demandCommand(1, 'name a command (see --help)')
      .example('$0 run --sim failing-clone', 'the whole procedure on the simulated lab, in seconds (the clone FAILs: exit 1)')
      .example('$0 run --nodes spark-a,spark-b', 'qualify the cable between two Sparks')
      .example('$0 batch --manifest box17.csv --nodes spark-a:1,spark-b:1', 'qualify a box of cables, one after another')
      .example('$0 <command> --help', "a command's options and examples"),
  )
    // Stop at the first problem: a command never runs with arguments yargs found wrong.
    .fail((msg, err) => {
      // yargs wraps what a coerce function throws in its own YError: that is a usage problem too.
      if (err && err.name !== 'YError') throw err;
      throw usageProblem(err?.message ?? msg ?? 'bad usage', argv, COMMANDS);
    })
    .help()
    // As wide as the terminal, up to 160 columns (examples are two columns of command line and what it does).
    .wrap(Math.min(160, io.columns?.() ?? process.stdout.columns ?? 100));
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
