// A cablequal.db written before schema 3 keeps working: it is migrated on open, its rows list with the figures they
// have (the worst over every soak), and `db import` again fills the certificate's figures.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listRuns, marginFigure } from '../../src/dashboard/queries.js';
import { openStore } from '../../src/store/open-store.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/store/schema.js';
import { openSqlite } from '../../src/store/sql.js';
import { failingCloneRecord } from '../fixtures/records/build.js';
import { tempRoot } from '../fixtures/records/run-dir.js';

const root = tempRoot('cq-migrate-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('schema 2 to 3', () => {
  it('an existing store is migrated on open and keeps its runs; an import adds the headline figures and the short code', async () => {
    const file = join(root, 'cablequal.db');
    const old = openSqlite(file);
    await old.run('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    for (const m of MIGRATIONS.filter((x) => x.version <= 2)) {
      for (const st of m.statements) await old.run(st);
      await old.run('INSERT INTO schema_migrations VALUES (?, ?, ?)', [m.version, m.name, '2026-01-01T00:00:00Z']);
    }
    const rec = failingCloneRecord();
    await old.run(
      "INSERT INTO runs (run_id, state, outcome, cable_serial, simulated, started_at, fec_margin_decades, worst_lane_ber, main_reason) VALUES (?, 'finished', 'FAIL', 'OLD-1', 0, '2026-01-02T00:00:00Z', 1.08, 0, 'a sentence')",
      [rec.runId],
    );
    await old.close();

    const store = await openStore({ engine: 'sqlite', target: file });
    try {
      const versions = await store.db.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
      expect(versions.map((v) => Number(v.version))).toEqual(MIGRATIONS.map((m) => m.version));
      expect(SCHEMA_VERSION).toBe(MIGRATIONS.at(-1)!.version);
      const before = (await listRuns(store.db, {}, { limit: 10, offset: 0 })).runs[0]!;
      expect(before).toMatchObject({ runId: rec.runId, headlineMarginDecades: null, mainCode: null, mainReason: 'a sentence' });
      expect(marginFigure(before)).toBe(1.08);
      expect(await store.runFinished(rec, { runDir: null, controller: 'ctl' })).toBe('updated');
      const after = (await listRuns(store.db, {}, { limit: 10, offset: 0 })).runs[0]!;
      const deciding = rec.reasons.find((r) => r.grade === 'FAIL')!;
      expect(after.decidingRule).toBe(deciding.rule);
      expect(after.mainCode).toMatch(new RegExp(`^FAIL ${deciding.rule} `));
      // This generated record has no headline (as records of rules version 1): none is shown. The list shows the one FEC
      // margin (#31 item 2), as the record stated it; the deciding value is in the short code, under its rule.
      expect(after.headlineMarginDecades).toBeNull();
      expect(marginFigure(after)).toBe(rec.analysis!.fecMarginDecades);
    } finally {
      await store.close();
    }
  });
});
