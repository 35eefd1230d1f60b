import { defineCommand, type CommandGroup } from './define.js';

// `cablequal db import <paths..>`: run directories into the results store.
const dbImportSpec = defineCommand({
  command: 'import <paths..>',
  describe: "index run directories (reports/, a batch, 'reports/*/*') into the store from their records and journals; idempotent",
  examples: [
    ["$0 db import 'reports/*/*'", '(re)build the index of reports/cablequal.db from the run directories'],
    ['$0 db import /lab/reports --out /lab/reports', 'add the runs a busy store missed (as its warning says)'],
    ['$0 db import reports --db postgres://cablequal@dbhost/cablequal', 'into a shared PostgreSQL store'],
  ],
  builder: (y) =>
    y
      .positional('paths', {
        type: 'string',
        array: true,
        default: undefined,
        describe: "run directories, reports directories or quoted globs ('reports/*/*')",
      })
      .option('out', { type: 'string', describe: 'reports directory holding cablequal.db', default: 'reports' })
      .option('db', { type: 'string', describe: 'postgres://... (or $CABLEQUAL_DB) instead of <out>/cablequal.db' }),
  run: async (args, { io }) => {
    const { dbImportCommand } = await import('../../store/db-command.js');
    return dbImportCommand({ paths: (args.paths ?? []).map(String), out: args.out, ...(args.db !== undefined ? { db: args.db } : {}) }, io);
  },
});

// `cablequal db ...`: the results store.
export const dbGroup: CommandGroup = {
  command: 'db',
  describe: "the lab's results store (SQLite file in --out, or PostgreSQL with --db)",
  subcommands: [dbImportSpec],
  demand: 'name a db command: import',
  examples: [
    ["$0 db import 'reports/*/*'", '(re)build the index from run directories; the same runs again change nothing'],
    ['$0 db import --help', "the command's options"],
  ],
};
