import { defineCommand } from './define.js';

// `cablequal status`: runs going on, or that died without ending.
export const statusSpec = defineCommand({
  command: 'status',
  describe: 'list the runs under a reports directory that are going on, or that died without ending (phase, time, nodes, pid)',
  examples: [
    ['$0 status', 'the runs going on under reports/ (after the terminal that started them closed)'],
    ['$0 status --out /lab/reports --json', 'one JSON array, an object per run'],
  ],
  builder: (y) =>
    y.option('out', { type: 'string', default: 'reports', describe: 'reports directory to look in' }).option('json', {
      type: 'boolean',
      default: false,
      describe:
        'one JSON array on stdout, an object per run (runId, verdict, why, phase, elapsedS, remainingS, nodes, pid, controller, runDir, updatedAt, outcome); [] when there is none',
    }),
  run: async (args, { io }) => {
    const { statusCommand } = await import('../status-command.js');
    return statusCommand({ out: args.out, json: args.json }, io);
  },
});
