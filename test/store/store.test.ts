// The results store on SQLite (a temp file): test/store/store-suite.ts, through the connection `db import` and the
// dashboard use and through the one a run writes with (a worker thread); on PostgreSQL: store.system.test.ts.
import { chooseStore } from '../../src/store/open-store.js';
import { tempRoot } from '../fixtures/records/run-dir.js';
import { storeSuite } from './store-suite.js';

storeSuite({ name: 'sqlite', choice: async () => chooseStore({ out: tempRoot('cq-store-sqlite-') }) });
storeSuite({ name: 'sqlite', choice: async () => chooseStore({ out: tempRoot('cq-store-writer-') }), writer: true });
