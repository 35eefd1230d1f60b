import yargs from 'yargs';
import { UsageError } from '../domain/errors.js';
import { PARSERS } from '../probes/registry.js';
import { EXIT } from './exit-codes.js';
import { processIo, type CliIo } from './io.js';
import { parseCommand } from './parse-command.js';

// The composition root: the only place that wires real dependencies; returns the exit code.
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  let code: number = EXIT.ok;
  let usageProblem: string | null = null;
  const parser = yargs(argv)
    .scriptName('cablequal')
    .usage('$0 <command> [options]\n\nBurn-in qualification of 200G cables between DGX Spark nodes.')
    .strict()
    .demandCommand(1, 'name a command (see --help)')
    .command(
      'parse <kind> <file>',
      'parse one recorded command output and print what cablequal reads from it (JSON)',
      (y) =>
        y
          .positional('kind', { type: 'string', choices: Object.keys(PARSERS), demandOption: true })
          .positional('file', { type: 'string', describe: 'file, or - for stdin', demandOption: true }),
      async (args) => {
        code = await parseCommand(args.kind, args.file, io);
      },
    )
    .fail((msg, err) => {
      if (err && !(err instanceof UsageError)) throw err;
      usageProblem = msg ?? err?.message ?? 'bad usage';
    })
    .help()
    .version(false)
    .wrap(Math.min(110, process.stdout.columns ?? 100));
  try {
    await parser.parseAsync();
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`cablequal: ${e.message}\n`);
      return EXIT.usage;
    }
    throw e;
  }
  if (usageProblem !== null) {
    io.stderr(`cablequal: ${usageProblem}\nRun "cablequal --help" for usage.\n`);
    return EXIT.usage;
  }
  return code;
}
