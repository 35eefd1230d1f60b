// The lab's results store: an index of every run (and batch), rebuilt from journals by `cablequal db import`, written
// as runs go (start, throttled live status, end). The journal stays the source of truth; the store never decides.
import type { LiveProgress } from '../domain/result.js';
import { contentHash, DETAIL_COLUMNS, RUN_COLUMNS, rowsOfRecord, stationOf, type RowsOfRun, type RunPlace } from './run-row.js';
import { migrate } from './schema.js';
import type { SqlDb, SqlTx, SqlValue } from './sql.js';

// What is known when a run starts (the cable is not: the EEPROM is read by the run).
export interface RunStart {
  runId: string;
  label: string | null;
  startedAt: string;
  simulated: boolean;
  scenario: string | null;
  protocol: { name: string; sha256: string; file: string | null; regression?: unknown };
  nodes: { name: string; host: string }[];
  controller: string | null;
  runDir: string | null;
  batchId?: string | null;
  batchRole?: RunPlace['batchRole'];
}

// A batch as its state file says it: cables, tested, golden serial and drift.
export interface BatchRow {
  id: string;
  name: string;
  dir: string | null;
  controller: string | null;
  manifest: string | null;
  protocol_name: string | null;
  golden_serial: string | null;
  cables: number;
  tested: number;
  drift_ok: number | null;
  drift_detail: string | null;
  updated_at: string;
}

const BATCH_COLUMNS = [
  'id',
  'name',
  'dir',
  'controller',
  'manifest',
  'protocol_name',
  'golden_serial',
  'cables',
  'tested',
  'drift_ok',
  'drift_detail',
  'updated_at',
] as const;

// The store over one engine (see sql.ts); open it with openStore (open-store.ts).
export class ResultsStore {
  constructor(
    readonly db: SqlDb,
    readonly where: string, // the file, or the redacted URL
  ) {}

  // Bring the schema up to date (migrations run on every open; a no-op when current).
  async migrate(): Promise<number[]> {
    return migrate(this.db);
  }

  // A run started: its row (state running, no outcome), its procedure and station. A row already there is kept.
  async runStarted(s: RunStart): Promise<void> {
    await this.db.transaction(async (tx) => {
      await upsertProcedure(tx, {
        sha256: s.protocol.sha256,
        name: s.protocol.name,
        file: s.protocol.file,
        regression: s.protocol.regression === undefined ? null : JSON.stringify(s.protocol.regression),
      });
      const station = stationOf(s.controller, s.nodes);
      if (station) await upsertStation(tx, station);
      await tx.run(
        `INSERT INTO runs (run_id, state, label, simulated, scenario, procedure_sha256, protocol_name, station_id, controller, batch_id, batch_role, started_at, run_dir)
         VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING`,
        [
          s.runId,
          s.label,
          s.simulated ? 1 : 0,
          s.scenario,
          s.protocol.sha256,
          s.protocol.name,
          station?.id ?? null,
          s.controller,
          s.batchId ?? null,
          s.batchRole ?? null,
          s.startedAt,
          s.runDir,
        ],
      );
      await tx.run('INSERT INTO run_details (run_id, nodes) VALUES (?, ?) ON CONFLICT (run_id) DO NOTHING', [s.runId, JSON.stringify(s.nodes)]);
    });
  }

  // The latest live status of a running run (phase, remaining, per-lane rates, temperatures), one row per run.
  // remaining_s is the whole procedure's time left, phase_remaining_s the current phase's (the run's LiveProgress).
  async runLive(runId: string, seq: number, atIso: string, status: LiveProgress): Promise<void> {
    await this.db.run(
      `INSERT INTO live (run_id, seq, updated_at, phase, elapsed_s, remaining_s, phase_remaining_s, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at, phase = excluded.phase,
         elapsed_s = excluded.elapsed_s, remaining_s = excluded.remaining_s, phase_remaining_s = excluded.phase_remaining_s, status = excluded.status
       WHERE live.seq < excluded.seq`,
      [runId, seq, atIso, status.phase, status.elapsedS, status.runRemainingS, status.phaseRemainingS, JSON.stringify(status)],
    );
  }

  // A run that started but never wrote a journal: its row (still running) and live status removed.
  async runAbandoned(runId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.run('DELETE FROM live WHERE run_id = ?', [runId]);
      await tx.run("DELETE FROM run_details WHERE run_id = ? AND EXISTS (SELECT 1 FROM runs WHERE run_id = ? AND state = 'running')", [runId, runId]);
      await tx.run("DELETE FROM runs WHERE run_id = ? AND state = 'running'", [runId]);
    });
  }

  // A finished run from its record (live or `db import`): every row, in one transaction; its live status removed.
  // Idempotent: the same record again leaves every row as it was. Returns whether the run's row changed.
  async runFinished(record: unknown, place: RunPlace): Promise<'inserted' | 'updated' | 'unchanged'> {
    const rows = rowsOfRecord(record, place);
    return (await this.db.transaction((tx) => writeRuns(tx, [rows])))[0]!;
  }

  // Many finished runs, one transaction per `chunk` runs (an import of thousands stays fast and restartable): the
  // chunk's parts, cables, procedures and stations written once each, its known runs read in one query.
  async runsFinished(items: { record: unknown; place: RunPlace }[], chunk = 200): Promise<Record<'inserted' | 'updated' | 'unchanged', number>> {
    const counts = { inserted: 0, updated: 0, unchanged: 0 };
    for (let i = 0; i < items.length; i += chunk) {
      const rows = items.slice(i, i + chunk).map((it) => rowsOfRecord(it.record, it.place));
      for (const r of await this.db.transaction((tx) => writeRuns(tx, rows))) counts[r]++;
    }
    return counts;
  }

  // A batch and its golden cable, from its state file (upsert by id; unchanged content writes nothing).
  async upsertBatch(b: BatchRow): Promise<void> {
    await this.db.transaction(async (tx) => {
      const cols = BATCH_COLUMNS.join(', ');
      const changed = BATCH_COLUMNS.filter((c) => c !== 'id' && c !== 'updated_at');
      await tx.run(
        `INSERT INTO batches (${cols}) VALUES (${BATCH_COLUMNS.map(() => '?').join(', ')})
         ON CONFLICT (id) DO UPDATE SET ${BATCH_COLUMNS.filter((c) => c !== 'id')
           .map((c) => `${c} = excluded.${c}`)
           .join(', ')}
         WHERE ${changed.map((c) => `batches.${c} IS DISTINCT FROM excluded.${c}`).join(' OR ')}`,
        BATCH_COLUMNS.map((c) => b[c]),
      );
      if (b.golden_serial)
        await tx.run('INSERT INTO golden_cables (serial, batch_id) VALUES (?, ?) ON CONFLICT (serial, batch_id) DO NOTHING', [b.golden_serial, b.id]);
    });
  }

  // Refresh the query planner's statistics (after a large import; both engines call it ANALYZE).
  async optimize(): Promise<void> {
    await this.db.run('ANALYZE');
  }

  // Counts per table, for `db import`'s summary and the tests.
  async counts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const t of ['runs', 'run_details', 'cables', 'parts', 'batches', 'stations', 'procedures', 'golden_cables', 'live']) {
      out[t] = Number((await this.db.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${t}`))[0]?.n ?? 0);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

// Write finished runs (and their part, cable, procedure, station) in the caller's transaction. A run whose content
// hash is already stored, finished, is left untouched.
async function writeRuns(tx: SqlTx, all: RowsOfRun[]): Promise<('inserted' | 'updated' | 'unchanged')[]> {
  const once = <T>(xs: (T | null)[], key: (x: T) => string): T[] => [...new Map(xs.filter((x): x is T => x !== null).map((x) => [key(x), x])).values()];
  for (const p of once(
    all.map((r) => r.procedure),
    (p) => p.sha256,
  ))
    await upsertProcedure(tx, p);
  for (const st of once(
    all.map((r) => r.station),
    (x) => x.id,
  ))
    await upsertStation(tx, st);
  for (const part of once(
    all.map((r) => r.part),
    (x) => x.part_number,
  )) {
    await tx.run(
      `INSERT INTO parts (part_number, vendor, family, lanes) VALUES (?, ?, ?, ?)
       ON CONFLICT (part_number) DO UPDATE SET vendor = excluded.vendor, family = excluded.family, lanes = COALESCE(excluded.lanes, parts.lanes)
       WHERE parts.vendor IS DISTINCT FROM excluded.vendor OR parts.family IS DISTINCT FROM excluded.family
          OR (excluded.lanes IS NOT NULL AND parts.lanes IS DISTINCT FROM excluded.lanes)`,
      [part.part_number, part.vendor, part.family, part.lanes],
    );
  }
  const cableCols = ['serial', 'part_number', 'vendor', 'vendor_oui', 'vendor_rev', 'date_code', 'lot', 'length_m', 'family'] as const;
  for (const c of once(
    all.map((r) => r.cable),
    (x) => x.serial,
  )) {
    await tx.run(
      `INSERT INTO cables (${cableCols.join(', ')}) VALUES (${cableCols.map(() => '?').join(', ')})
       ON CONFLICT (serial) DO UPDATE SET ${cableCols
         .slice(1)
         .map((k) => `${k} = excluded.${k}`)
         .join(', ')}
       WHERE ${cableCols
         .slice(1)
         .map((k) => `cables.${k} IS DISTINCT FROM excluded.${k}`)
         .join(' OR ')}`,
      cableCols.map((k) => c[k]),
    );
  }
  const ids = all.map((r) => r.run.run_id as string);
  const marks = ids.map(() => '?').join(', ');
  const known = new Map(
    (
      await tx.all<{ run_id: string; content_sha256: string | null; state: string; journal_check: string | null }>(
        `SELECT run_id, content_sha256, state, journal_check FROM runs WHERE run_id IN (${marks})`,
        ids,
      )
    ).map((r) => [r.run_id, r]),
  );
  await tx.run(`DELETE FROM live WHERE run_id IN (${marks})`, ids);
  const set = RUN_COLUMNS.filter((c) => c !== 'run_id').map((c) => {
    // The first writer's controller, station and batch stay (an import on another host does not move a run).
    if (c === 'controller' || c === 'station_id' || c === 'batch_id' || c === 'batch_role') return `${c} = COALESCE(runs.${c}, excluded.${c})`;
    return `${c} = excluded.${c}`;
  });
  const out: ('inserted' | 'updated' | 'unchanged')[] = [];
  for (const { run, details } of all) {
    const had = known.get(run.run_id as string);
    // A row the run wrote from its own journal ('run') stays so when an import re-grades that journal to the same
    // content: a re-import that changes nothing changes nothing (what its signatures showed adds no figure).
    const same =
      had?.content_sha256 === run.content_sha256 ||
      (had?.journal_check === 'run' && had.content_sha256 === contentHash({ ...run, journal_check: 'run' }, details));
    if (same && had?.state === 'finished') {
      out.push('unchanged');
      continue;
    }
    await tx.run(
      `INSERT INTO runs (${RUN_COLUMNS.join(', ')}) VALUES (${RUN_COLUMNS.map(() => '?').join(', ')})
       ON CONFLICT (run_id) DO UPDATE SET ${set.join(', ')}
       WHERE runs.content_sha256 IS DISTINCT FROM excluded.content_sha256 OR runs.state <> 'finished'`,
      RUN_COLUMNS.map((c) => run[c] as SqlValue),
    );
    await tx.run(
      `INSERT INTO run_details (run_id, ${DETAIL_COLUMNS.join(', ')}) VALUES (?, ${DETAIL_COLUMNS.map(() => '?').join(', ')})
       ON CONFLICT (run_id) DO UPDATE SET ${DETAIL_COLUMNS.map((c) => `${c} = excluded.${c}`).join(', ')}`,
      [run.run_id as string, ...DETAIL_COLUMNS.map((c) => details[c])],
    );
    out.push(had ? 'updated' : 'inserted');
  }
  return out;
}

async function upsertProcedure(tx: SqlTx, p: { sha256: string; name: string; file: string | null; regression: string | null }): Promise<void> {
  await tx.run(
    `INSERT INTO procedures (sha256, name, file, regression) VALUES (?, ?, ?, ?)
     ON CONFLICT (sha256) DO UPDATE SET regression = excluded.regression
     WHERE procedures.regression IS NULL AND excluded.regression IS NOT NULL`,
    [p.sha256, p.name, p.file, p.regression],
  );
}

async function upsertStation(tx: SqlTx, s: { id: string; controller: string | null; node_a: string; node_b: string }): Promise<void> {
  await tx.run('INSERT INTO stations (id, controller, node_a, node_b) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING', [
    s.id,
    s.controller,
    s.node_a,
    s.node_b,
  ]);
}
