import { defineCommand } from './define.js';

// `cablequal compare <runs..>`: one CSV row per run.
export const compareSpec = defineCommand({
  command: 'compare <runs..>',
  describe: 'one CSV row per run (and a per part-number summary) for run directories or reports/*/*',
  examples: [
    ["$0 compare 'reports/*/*' --out compare.csv", 'one row per run, and compare-by-part.csv'],
    ['$0 compare reports', 'every run below reports/, batch runs included'],
  ],
  builder: (y) =>
    y
      .positional('runs', { type: 'string', array: true, default: undefined, describe: 'run directories, or quoted globs such as "reports/*/*"' })
      .option('out', { type: 'string', default: 'compare.csv', describe: 'the CSV to write' }),
  run: async (args, { io }) => {
    const { compareCommand } = await import('../report-commands.js');
    return compareCommand({ runs: (args.runs ?? []).map(String), out: args.out }, io);
  },
});
