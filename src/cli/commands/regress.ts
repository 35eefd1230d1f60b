import { defineCommand } from './define.js';

// `cablequal regress <runs..> --baseline <run>`: a reference cable against its baseline run.
export const regressSpec = defineCommand({
  command: 'regress <runs..>',
  describe: 'compare runs of a reference cable with its baseline run; non-zero exit on a regression',
  examples: [
    ['$0 regress --baseline <run dir> <run dirs...>', 'exit 0 within tolerance, 1 a regression, 3 an incomplete run'],
    ['$0 regress --baseline <run dir> <run dirs...> --junit regress.xml', 'with a JUnit report for CI'],
  ],
  builder: (y) =>
    y
      .positional('runs', { type: 'string', array: true, default: undefined, describe: 'run directories of the reference cable' })
      .option('baseline', { type: 'string', demandOption: true, describe: 'the baseline run directory' })
      .option('junit', { type: 'string', describe: 'write JUnit XML here (one test case per metric)' })
      .option('protocol', { type: 'string', describe: 'take the regression tolerances from this protocol file' }),
  run: async (args, { io }) => {
    const { regressCommand } = await import('../report-commands.js');
    return regressCommand(
      {
        baseline: args.baseline,
        runs: (args.runs ?? []).map(String),
        ...(args.junit ? { junit: args.junit } : {}),
        ...(args.protocol ? { protocol: args.protocol } : {}),
      },
      io,
    );
  },
});
