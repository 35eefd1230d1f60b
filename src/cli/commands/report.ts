import { defineCommand } from './define.js';

// `cablequal report <runDir>`: the certificate (or run report) and CSVs written again from the journal.
export const reportSpec = defineCommand({
  command: 'report <runDir>',
  describe: 're-render the certificate (or run report) and CSVs of a run from its journal',
  examples: [
    ['$0 report reports/<serial>/<run id>', 'write the certificate and CSVs again (signed, once a lab key exists)'],
    ['$0 report <run dir> --protocol my-limits.json', 'with those limits (the document names both protocols)'],
  ],
  builder: (y) =>
    y
      .positional('runDir', { type: 'string', describe: 'the run directory' })
      .option('protocol', { type: 'string', describe: 'grade with the limits of this protocol file' }),
  run: async (args, { io }) => {
    const { reportCommand } = await import('../report-commands.js');
    return reportCommand({ runDir: args.runDir!, ...(args.protocol ? { protocol: args.protocol } : {}) }, io);
  },
});
