// The results store's tests, the same on both engines: migrations, rows of a record, idempotent upserts, live status,
// two concurrent writers. store.test.ts runs them on SQLite (a temp file), store.system.test.ts on a real PostgreSQL.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type StoreChoice } from '../../src/store/open-store.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/store/schema.js';
import type { ResultsStore } from '../../src/store/store.js';
import { insertServiceEvent, insertServiceSample, serviceEventRow, serviceOfCable, watchedCables } from '../../src/store/service.js';
import { errorRecord, failingCloneRecord, passRecord } from '../fixtures/records/build.js';
import { tempRoot } from '../fixtures/records/run-dir.js';

const run = promisify(execFile);

// An engine under test: its name and how to reach a fresh store on it; `writer`: through the connection a run
// writes with (openStore's writer: SQLite from a worker thread, every wait bounded).
export type Engine = { name: 'sqlite' | 'postgres'; choice: () => Promise<StoreChoice>; writer?: boolean };

// The store's tests on `engine` (skipped when `skip`: a PostgreSQL missing outside CI).
export function storeSuite(engine: Engine, skip = false): void {
  describe.skipIf(skip)(`results store on ${engine.name}${engine.writer ? " (a run's writer)" : ''}`, () => {
    let choice: StoreChoice;
    let store: ResultsStore;
    beforeAll(async () => {
      choice = await engine.choice();
      store = await openStore(choice, { writer: engine.writer === true });
    });
    afterAll(async () => {
      await store?.close();
    });

    it('applies every migration once, in order, and none on the next open', async () => {
      const rows = await store.db.all<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => Number(r.version))).toEqual(MIGRATIONS.map((m) => m.version));
      expect(Number(rows.at(-1)!.version)).toBe(SCHEMA_VERSION);
      const again = await openStore(choice, { writer: engine.writer === true });
      expect(await again.migrate()).toEqual([]);
      await again.close();
    });

    it('a record becomes a run, its cable, part, procedure and station, with the headline figures', async () => {
      const rec = failingCloneRecord();
      expect(
        await store.runFinished(rec, {
          runDir: '/r/clone',
          controller: 'ctl-1',
          certificate: { file: 'certificate.html', sha256: 'ab'.repeat(32), signer: null },
        }),
      ).toBe('inserted');
      const [row] = await store.db.all<Record<string, unknown>>('SELECT * FROM runs WHERE run_id = ?', [rec.runId]);
      expect(row).toMatchObject({
        outcome: 'FAIL',
        state: 'finished',
        cable_serial: 'GEN-CLONE-0042',
        part_number: 'ONT-DAC-QS56-0.5',
        vendor: 'OEM <clone> & "co"',
        lot: '240611',
        station_id: 'ctl-1 spark-a.lab+spark-b.lab',
        certificate_file: 'certificate.html',
        procedure_sha256: rec.protocol.sha256,
      });
      expect(Number(row!['simulated'])).toBe(rec.simulated ? 1 : 0);
      expect(row!['fec_margin_decades']).toBeCloseTo(rec.analysis!.fecMarginDecades!, 9);
      const worst = Math.max(...rec.analysis!.perNodePhase.flatMap((p) => p.laneStats.map((l) => l.ber)));
      expect(row!['worst_lane_ber']).toBeCloseTo(worst, 15);
      const [details] = await store.db.all<{ reasons: string; measurements: string }>('SELECT reasons, measurements FROM run_details WHERE run_id = ?', [
        rec.runId,
      ]);
      expect(JSON.parse(details!.reasons)).toEqual(rec.reasons);
      expect(JSON.parse(details!.measurements)).toEqual(rec.measurements);
      const cable = await store.db.all('SELECT serial, part_number, vendor, date_code FROM cables WHERE serial = ?', ['GEN-CLONE-0042']);
      expect(cable).toEqual([{ serial: 'GEN-CLONE-0042', part_number: 'ONT-DAC-QS56-0.5', vendor: 'OEM <clone> & "co"', date_code: '240611' }]);
      expect(await store.db.all('SELECT node_a, node_b, controller FROM stations')).toEqual([
        { node_a: 'spark-a.lab', node_b: 'spark-b.lab', controller: 'ctl-1' },
      ]);
    });

    it('writing the same record twice changes nothing; a changed record updates its row, keeping the first controller', async () => {
      const rec = passRecord();
      expect(await store.runFinished(rec, { runDir: '/r/pass', controller: 'ctl-1' })).toBe('inserted');
      const snapshot = async () => [await store.db.all('SELECT * FROM runs ORDER BY run_id'), await store.db.all('SELECT * FROM run_details ORDER BY run_id')];
      const before = await snapshot();
      expect(await store.runFinished(rec, { runDir: '/r/pass', controller: 'ctl-2' })).toBe('unchanged');
      expect(await snapshot()).toEqual(before);
      const regraded = { ...rec, outcome: 'MARGINAL' as const };
      expect(await store.runFinished(regraded, { runDir: '/r/pass', controller: 'ctl-2' })).toBe('updated');
      const [row] = await store.db.all<{ outcome: string; controller: string }>('SELECT outcome, controller FROM runs WHERE run_id = ?', [rec.runId]);
      expect(row).toEqual({ outcome: 'MARGINAL', controller: 'ctl-1' });
    });

    it('a run that could not identify its cable is kept with no cable row', async () => {
      const rec = errorRecord();
      await store.runFinished(rec, { runDir: null, controller: null });
      const [row] = await store.db.all<{ outcome: string; cable_serial: string | null }>('SELECT outcome, cable_serial FROM runs WHERE run_id = ?', [
        rec.runId,
      ]);
      expect(row).toEqual({ outcome: 'ERROR', cable_serial: null });
    });

    it('a live run: started row, the newest status wins, the finished record removes the live row', async () => {
      const rec = { ...passRecord(), runId: 'live-0001' };
      await store.runStarted({
        runId: rec.runId,
        label: 'box-1',
        startedAt: rec.startedAt,
        simulated: true,
        scenario: null,
        protocol: { ...rec.protocol, regression: { tempC: 5 } },
        nodes: [
          { name: 'spark-a', host: 'spark-a' },
          { name: 'spark-b', host: 'spark-b' },
        ],
        controller: 'ctl-1',
        runDir: '/r/live',
      });
      await store.runLive(rec.runId, 2, '2026-01-01T00:00:02.000Z', { phase: 'soak-idle', elapsedS: 120, phaseRemainingS: 60, runRemainingS: 480 });
      await store.runLive(rec.runId, 1, '2026-01-01T00:00:01.000Z', { phase: 'nccl', elapsedS: 60, phaseRemainingS: null, runRemainingS: 540 });
      const [running] = await store.db.all<{ state: string; outcome: string | null }>('SELECT state, outcome FROM runs WHERE run_id = ?', [rec.runId]);
      expect(running).toEqual({ state: 'running', outcome: null });
      const [live] = await store.db.all<{ phase: string; elapsed_s: number; remaining_s: number }>(
        'SELECT phase, elapsed_s, remaining_s, phase_remaining_s FROM live WHERE run_id = ?',
        [rec.runId],
      );
      // remaining_s is the whole procedure's time left, phase_remaining_s the phase's (#31 item 4).
      expect(live).toEqual({ phase: 'soak-idle', elapsed_s: 120, remaining_s: 480, phase_remaining_s: 60 });
      const [proc] = await store.db.all<{ regression: string }>('SELECT regression FROM procedures WHERE sha256 = ?', [rec.protocol.sha256]);
      expect(JSON.parse(proc!.regression)).toEqual({ tempC: 5 });
      await store.runFinished(rec, { runDir: '/r/live', controller: 'ctl-1' });
      expect(await store.db.all('SELECT run_id FROM live WHERE run_id = ?', [rec.runId])).toEqual([]);
      const [done] = await store.db.all<{ state: string; outcome: string; label: string | null }>('SELECT state, outcome, label FROM runs WHERE run_id = ?', [
        rec.runId,
      ]);
      expect(done).toEqual({ state: 'finished', outcome: 'PASS', label: rec.label });
    });

    it('a run that never got a journal is removed; a finished run is never removed that way', async () => {
      const nodes = [
        { name: 'a', host: 'a' },
        { name: 'b', host: 'b' },
      ];
      const protocol = { name: 'quick', sha256: 'd'.repeat(64), file: 'protocols/quick.json' };
      await store.runStarted({
        runId: 'gone-0001',
        label: null,
        startedAt: '2026-01-01T00:00:00.000Z',
        simulated: false,
        scenario: null,
        protocol,
        nodes,
        controller: 'ctl-1',
        runDir: null,
      });
      await store.runLive('gone-0001', 1, '2026-01-01T00:00:01.000Z', { phase: 'preflight', elapsedS: 1, phaseRemainingS: null, runRemainingS: null });
      await store.runAbandoned('gone-0001');
      await store.runAbandoned(passRecord().runId);
      expect(await store.db.all("SELECT run_id FROM runs WHERE run_id IN ('gone-0001', ?)", [passRecord().runId])).toEqual([{ run_id: passRecord().runId }]);
      expect(await store.db.all("SELECT run_id FROM live WHERE run_id = 'gone-0001'")).toEqual([]);
      expect(await store.db.all("SELECT run_id FROM run_details WHERE run_id = 'gone-0001'")).toEqual([]);
    });

    it('cables in service: an event written once (a second write of it kept once), a history row, read back per serial and as the fleet', async () => {
      const row = serviceEventRow({
        type: 'alarm',
        cable: 'spark-a:1--spark-b:1',
        serial: 'SVC-0001',
        node: 'spark-b',
        cage: 1,
        atS: 10,
        at: '2026-02-01T00:00:10.000Z',
        rule: 'lane-ratio',
        grade: 'MARGINAL',
        lane: 2,
        value: 101.5,
        unit: 'x',
        limit: 100,
        message: 'spark-b cage 1 lane 2: 102x',
      })!;
      await insertServiceEvent(store.db, row);
      await insertServiceEvent(store.db, row);
      await insertServiceSample(store.db, {
        serial: 'SVC-0001',
        node: 'spark-b',
        cage: 1,
        at: '2026-02-01T00:05:00.000Z',
        seconds: 300,
        lane_errors: '[12000,11000,1500000,13000]',
        corrected_bits: 1536000,
        crc_errors: 0,
        post_fec_errors: 0,
        link_down_events: 0,
        nic_temp_c: 70.25,
        nic_temp_max_c: 70.5,
        margin_decades: 1.9,
      });
      const got = await serviceOfCable(store.db, 'SVC-0001');
      expect(got.events.map((e) => [e.type, e.rule, e.grade, Number(e.lane), Number(e.value), Number(e.limit_value)])).toEqual([
        ['alarm', 'lane-ratio', 'MARGINAL', 2, 101.5, 100],
      ]);
      expect(got.samples.map((x) => [Number(x.seconds), x.lane_errors, Number(x.nic_temp_c)])).toEqual([[300, '[12000,11000,1500000,13000]', 70.25]]);
      const fleet = (await watchedCables(store.db)).filter((f) => f.serial === 'SVC-0001');
      expect(fleet.map((f) => [f.cable, Number(f.alarms), Number(f.link_downs)])).toEqual([['spark-a:1--spark-b:1', 1, 0]]);
    });

    it('two controllers writing at once lose nothing (separate processes; shared run ids kept once)', async () => {
      const target = engine.name === 'postgres' ? await (await engine.choice()).target : join(tempRoot('cq-store-conc-'), 'shared.db');
      const tsx = ['--import', 'tsx', join(import.meta.dirname, 'concurrent-writer.ts'), target];
      const [a, b] = await Promise.all([run(process.execPath, [...tsx, 'ctl-a', '60', '30']), run(process.execPath, [...tsx, 'ctl-b', '60', '30'])]);
      expect(a.stdout.trim()).toBe('90');
      expect(b.stdout.trim()).toBe('90');
      const s = await openStore(engine.name === 'postgres' ? { engine: 'postgres', target } : { engine: 'sqlite', target });
      try {
        const ids = (await s.db.all<{ run_id: string }>('SELECT run_id FROM runs')).map((r) => r.run_id).sort();
        const want = [...[...Array(60).keys()].flatMap((i) => [`ctl-a-${i}`, `ctl-b-${i}`]), ...[...Array(30).keys()].map((i) => `shared-${i}`)].sort();
        expect(ids).toEqual(want);
        expect((await s.counts())['cables']).toBe(150);
        expect(await s.db.all('SELECT COUNT(*) AS n FROM schema_migrations')).toEqual([
          { n: engine.name === 'postgres' ? String(MIGRATIONS.length) : MIGRATIONS.length },
        ]);
      } finally {
        await s.close();
      }
    }, 60_000);
  });
}
