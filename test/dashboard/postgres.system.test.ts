// The dashboard over PostgreSQL answers what it answers over SQLite: the lab's rows copied from the embedded store
// into a PostgreSQL store, then every JSON endpoint and page of both dashboards compared (the window function of yield
// per cable, the serial search's LIKE ... ESCAPE, the batches, the run page's details).
import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type Dashboard } from '../../src/dashboard/server.js';
import { openStore } from '../../src/store/open-store.js';
import type { ResultsStore } from '../../src/store/store.js';
import { pgSkip, startPostgres, type TestPg } from '../helpers/postgres.js';
import { makeLabStore, type LabStore } from './lab-store.js';

const TABLES = ['parts', 'cables', 'stations', 'procedures', 'batches', 'golden_cables', 'runs', 'run_details', 'live'];

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => void (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe.skipIf(pgSkip)('the dashboard on PostgreSQL', () => {
  let lab: LabStore;
  let server: TestPg;
  let pgStore: ResultsStore;
  let onSqlite: Dashboard;
  let onPg: Dashboard;
  beforeAll(async () => {
    lab = await makeLabStore();
    server = await startPostgres();
    pgStore = await openStore({ engine: 'postgres', target: await server.newDatabase() });
    for (const t of TABLES) {
      for (const row of await lab.store.db.all(`SELECT * FROM ${t}`)) {
        const cols = Object.keys(row);
        await pgStore.db.run(
          `INSERT INTO ${t} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
          cols.map((c) => row[c] as string | number | null),
        );
      }
    }
    onSqlite = await startDashboard({ store: lab.store, outDir: lab.out, port: 0, host: '127.0.0.1' });
    onPg = await startDashboard({ store: pgStore, outDir: lab.out, port: 0, host: '127.0.0.1' });
  }, 180_000);
  afterAll(async () => {
    await onSqlite?.close();
    await onPg?.close();
    await pgStore?.close();
    await server?.stop();
    await lab?.store.close();
    if (lab) rmSync(lab.out, { recursive: true, force: true });
  });

  it('every endpoint and page answers the same on both engines', async () => {
    const clone = lab.simRuns[0]!;
    const paths = [
      '/api/runs?limit=500',
      '/api/runs?serial=retest-00',
      '/api/runs?serial=%25',
      '/api/runs?outcome=FAIL&lot=250301',
      `/api/runs?batch=${encodeURIComponent(lab.retest.batchId)}`,
      `/api/runs/${clone.runId}`,
      `/api/runs/${clone.runId}/series`,
      '/api/parts',
      '/api/parts?simulated=1',
      '/api/parts/NJAAKK0006',
      '/api/parts/NJAAKK0006?simulated=1',
      `/api/vendors/${encodeURIComponent(clone.vendor)}?simulated=1`,
      '/api/cables/GEN-RETEST-0001',
      '/api/batches',
      `/api/batches/${encodeURIComponent(lab.retest.batchId)}`,
      '/api/golden',
      '/',
      '/?serial=RETEST',
      `/runs/${clone.runId}`,
      '/parts',
      '/parts/NJAAKK0006?simulated=1',
      '/batches',
      `/batches/${encodeURIComponent(lab.retest.batchId)}`,
      '/golden',
      '/cables/GEN-RETEST-0001',
    ];
    for (const p of paths) {
      const [a, b] = await Promise.all([get(onSqlite.port, p), get(onPg.port, p)]);
      expect(a.status, p).toBe(200);
      expect(b.status, p).toBe(200);
      expect(b.body, p).toBe(a.body);
    }
    const parts = JSON.parse((await get(onPg.port, '/api/parts')).body) as { parts: { partNumber: string; cables: Record<string, number> }[] };
    expect(parts.parts.find((x) => x.partNumber === 'NJAAKK0006')!.cables).toEqual({ PASS: 1, MARGINAL: 0, FAIL: 0, unjudged: 0 }); // the golden cable is no cable of the part (#31)
  });
});
