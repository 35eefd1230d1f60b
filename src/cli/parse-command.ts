import { resolve } from 'node:path';
import { ParseError, UsageError } from '../domain/errors.js';
import { didYouMean } from '../domain/suggest.js';
import { bigintReplacer } from '../domain/u64.js';
import { clip, printable, quoteInput } from '../domain/text.js';
import { readInputText } from '../io/read-input.js';
import { PARSERS } from '../probes/parse-kinds.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';

// A leading `# source:` line (how samples/ files record their origin) is not part of the command output.
export function stripSourceHeader(text: string): string {
  return text.startsWith('# source:') ? text.slice(text.indexOf('\n') + 1) : text;
}

// `cablequal parse <kind> <file|->`: what the harness makes of one command output, as JSON.
export async function parseCommand(kind: string, file: string, io: CliIo): Promise<number> {
  const parser = PARSERS[kind];
  if (!parser) {
    io.stderr(`cablequal parse: unknown kind ${quoteInput(kind)}${didYouMean(kind, Object.keys(PARSERS)) || ' (cablequal parse --help lists them)'}\n`);
    return EXIT.usage;
  }
  let text: string;
  try {
    // A file is read as every input file is: a regular file below a size limit (/dev/zero is refused, never read).
    text = file === '-' ? await io.readStdin() : readInputText(resolve(io.cwd, file), 'output', file);
  } catch (e) {
    const why = e instanceof UsageError ? e.message : `${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
    io.stderr(`cablequal parse: ${printable(why)}\n`);
    return EXIT.usage;
  }
  try {
    const result = parser.parse(stripSourceHeader(text));
    io.stdout(`${JSON.stringify(result, bigintReplacer, 2)}\n`);
    return EXIT.ok;
  } catch (e) {
    if (e instanceof ParseError) {
      // The line quoted in a parse error is the node's text: shown escaped, never sent raw to the terminal.
      io.stderr(`${file === '-' ? '<stdin>' : printable(file)}: ${clip(printable(e.message), 1000)}\n`);
      return EXIT.usage;
    }
    throw e;
  }
}
