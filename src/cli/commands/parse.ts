import { PARSERS } from '../../probes/parse-kinds.js';
import { defineCommand } from './define.js';

// `cablequal parse <kind> <file>`: one recorded output through its parser.
export const parseSpec = defineCommand({
  command: 'parse <kind> <file>',
  describe: 'parse one recorded command output and print what cablequal reads from it (JSON)',
  examples: [
    ['$0 parse ethtool-stats lane-errors.txt', 'the counters cablequal reads from a saved `ethtool -S` output'],
    ['ssh spark-a ethtool -S enp1s0f1np1 | $0 parse ethtool-stats -', "a node's live output, from standard input"],
    ['$0 parse ib_write_bw bw.txt', 'the throughput rows of an ib_write_bw run'],
  ],
  builder: (y) =>
    y
      .positional('kind', { type: 'string', choices: Object.keys(PARSERS), describe: 'which output it is' })
      .positional('file', { type: 'string', describe: 'file, or - for stdin' }),
  run: async (args, { io }) => {
    const { parseCommand } = await import('../parse-command.js');
    // yargs hands a lone `-` positional over as '' : both mean standard input.
    return parseCommand(args.kind!, args.file === '' || args.file === undefined ? '-' : args.file, io);
  },
});
