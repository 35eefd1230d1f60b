import { defineCommand } from './define.js';

// `cablequal grade <runDirs..>`: records rebuilt from journals.
export const gradeSpec = defineCommand({
  command: 'grade <runDirs..>',
  describe: "rebuild each run's record from its journal (a killed run becomes ABORTED; --protocol re-grades with other limits)",
  examples: [
    ['$0 grade reports/<serial>/<run id>', "rebuild a run's record.json from its journal (a killed run: ABORTED)"],
    ['$0 grade <run dir> --protocol my-limits.json', 're-grade with other limits (the record names both protocols)'],
    ['$0 grade <run dir> --rules 1 --json', 'grade with rules version 1, as cablequal 0.1.0 did'],
  ],
  builder: (y) =>
    y
      .positional('runDirs', { type: 'string', array: true, default: undefined, describe: 'run directories' })
      .option('protocol', { type: 'string', describe: 'grade with the limits of this protocol file instead of the recorded one' })
      .option('rules', { type: 'number', describe: "grade with this version of the grading rules (default: today's; 1 = cablequal 0.1.0)" })
      .option('json', { type: 'boolean', default: false, describe: 'one JSON object per run, one per line' }),
  run: async (args, { io }) => {
    const { gradeCommand } = await import('../grade-command.js');
    return gradeCommand(
      {
        runDirs: (args.runDirs ?? []).map(String),
        ...(args.protocol ? { protocol: args.protocol } : {}),
        ...(args.rules !== undefined ? { rules: args.rules } : {}),
        json: args.json,
      },
      io,
    );
  },
});
