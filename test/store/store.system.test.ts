// The results store on a real PostgreSQL server (test/helpers/postgres.ts): test/store/store-suite.ts.
import { afterAll } from 'vitest';
import { pgSkip, startPostgres, type TestPg } from '../helpers/postgres.js';
import { storeSuite } from './store-suite.js';

let pgServer: TestPg | null = null;
afterAll(async () => {
  await pgServer?.stop();
});

storeSuite(
  {
    name: 'postgres',
    choice: async () => {
      pgServer ??= await startPostgres();
      return { engine: 'postgres', target: await pgServer.newDatabase() };
    },
  },
  pgSkip,
);
