// The store's schema, one logical schema for SQLite and PostgreSQL, applied by numbered migrations on open.
// Types are those both engines accept with the same meaning: TEXT, INTEGER (0/1 for flags, counts),
// DOUBLE PRECISION; timestamps are ISO-8601 UTC text (sorts and compares as text in both); JSON is TEXT.
import type { SqlDb, SqlTx } from './sql.js';

export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

// Each migration is applied once, in order, inside one transaction with its row in schema_migrations.
export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'runs, cables, parts, batches, stations, procedures, golden cables, live status',
    statements: [
      `CREATE TABLE parts (
        part_number TEXT PRIMARY KEY,
        vendor TEXT,
        family TEXT,
        lanes INTEGER
      )`,
      `CREATE TABLE cables (
        serial TEXT PRIMARY KEY,
        part_number TEXT,
        vendor TEXT,
        vendor_oui TEXT,
        vendor_rev TEXT,
        date_code TEXT,
        lot TEXT,
        length_m DOUBLE PRECISION,
        family TEXT
      )`,
      `CREATE TABLE stations (
        id TEXT PRIMARY KEY,
        controller TEXT,
        node_a TEXT NOT NULL,
        node_b TEXT NOT NULL
      )`,
      `CREATE TABLE procedures (
        sha256 TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        file TEXT,
        regression TEXT
      )`,
      `CREATE TABLE batches (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        dir TEXT,
        controller TEXT,
        manifest TEXT,
        protocol_name TEXT,
        golden_serial TEXT,
        cables INTEGER,
        tested INTEGER,
        drift_ok INTEGER,
        drift_detail TEXT,
        updated_at TEXT
      )`,
      `CREATE TABLE golden_cables (
        serial TEXT NOT NULL,
        batch_id TEXT NOT NULL,
        PRIMARY KEY (serial, batch_id)
      )`,
      `CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        outcome TEXT,
        label TEXT,
        cable_serial TEXT,
        part_number TEXT,
        vendor TEXT,
        lot TEXT,
        simulated INTEGER NOT NULL,
        scenario TEXT,
        procedure_sha256 TEXT,
        protocol_name TEXT,
        station_id TEXT,
        controller TEXT,
        batch_id TEXT,
        batch_role TEXT,
        started_at TEXT,
        ended_at TEXT,
        decided_at_s DOUBLE PRECISION,
        fec_margin_decades DOUBLE PRECISION,
        worst_lane_ber DOUBLE PRECISION,
        worst_lane_ber_ub95 DOUBLE PRECISION,
        max_lane_ratio DOUBLE PRECISION,
        pre_fec_ber_loaded DOUBLE PRECISION,
        crc_errors INTEGER,
        post_fec_errors INTEGER,
        link_down_events INTEGER,
        nic_temp_max_c DOUBLE PRECISION,
        ib_write_bw_gbps DOUBLE PRECISION,
        nccl_busbw_gbs DOUBLE PRECISION,
        main_reason TEXT,
        run_dir TEXT,
        certificate_file TEXT,
        certificate_sha256 TEXT,
        signer_fingerprint TEXT,
        content_sha256 TEXT
      )`,
      // The bulky JSON of a run (reasons, measurements, node facts) apart, so that lists and yield scans read narrow rows.
      `CREATE TABLE run_details (
        run_id TEXT PRIMARY KEY,
        reasons TEXT,
        measurements TEXT,
        nodes TEXT
      )`,
      `CREATE TABLE live (
        run_id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        phase TEXT,
        elapsed_s DOUBLE PRECISION,
        remaining_s DOUBLE PRECISION,
        status TEXT
      )`,
    ],
  },
  {
    version: 2,
    name: 'indexes for the dashboard: run list by start time, filters, a cable history, yield per part and lot',
    statements: [
      'CREATE INDEX runs_started ON runs (started_at, run_id)',
      'CREATE INDEX runs_part ON runs (part_number, started_at)',
      'CREATE INDEX runs_lot ON runs (lot, started_at)',
      // Covering the yield pages (a part's or a vendor's runs per lot): read from the index alone.
      'CREATE INDEX runs_part_yield ON runs (part_number, lot, outcome, state, fec_margin_decades, worst_lane_ber, vendor)',
      'CREATE INDEX runs_vendor_yield ON runs (vendor, lot, outcome, state, fec_margin_decades, worst_lane_ber, part_number)',
      'CREATE INDEX runs_vendor ON runs (vendor, started_at)',
      'CREATE INDEX runs_serial ON runs (cable_serial, started_at)',
      'CREATE INDEX runs_outcome ON runs (outcome, started_at)',
      'CREATE INDEX runs_station ON runs (station_id, started_at)',
      'CREATE INDEX runs_batch ON runs (batch_id, batch_role)',
      'CREATE INDEX runs_state ON runs (state)',
      'CREATE INDEX live_updated ON live (updated_at)',
    ],
  },
  {
    version: 3,
    name: 'the figures a certificate leads with (headline), the deciding reason as a short code, the run page details, yield per cable',
    statements: [
      // The loaded soak per receiver as the certificate states it (record.headline): the worst receiver's FEC margin and
      // the worst lane's BER 95% upper bound. Rows written before version 3 have NULL here until `db import` again.
      'ALTER TABLE runs ADD COLUMN headline_margin_decades DOUBLE PRECISION',
      'ALTER TABLE runs ADD COLUMN headline_ber_ub95 DOUBLE PRECISION',
      // The reason that decided a FAIL or MARGINAL (or why an ERROR could not judge): its rule, value and unit, and the
      // short code lists show ("FAIL fec-window spark-b L2 0.84 dec").
      'ALTER TABLE runs ADD COLUMN deciding_rule TEXT',
      'ALTER TABLE runs ADD COLUMN deciding_value DOUBLE PRECISION',
      'ALTER TABLE runs ADD COLUMN deciding_unit TEXT',
      'ALTER TABLE runs ADD COLUMN main_code TEXT',
      // What the run page shows besides reasons, measurements and nodes.
      'ALTER TABLE run_details ADD COLUMN headline TEXT',
      'ALTER TABLE run_details ADD COLUMN cable_ends TEXT',
      'ALTER TABLE run_details ADD COLUMN phases TEXT',
      'ALTER TABLE run_details ADD COLUMN conditions TEXT',
      'ALTER TABLE run_details ADD COLUMN benchmarks TEXT',
      // Yield per cable: a part's (or vendor's) cables, each by its latest run.
      'CREATE INDEX runs_part_cable ON runs (part_number, cable_serial, started_at)',
      'CREATE INDEX runs_vendor_cable ON runs (vendor, cable_serial, started_at)',
    ],
  },
  {
    version: 4,
    name: "a run's kind: qualification, or set-up check (a protocol short of the burn-in; null for records before they were told apart)",
    statements: ['ALTER TABLE runs ADD COLUMN run_kind TEXT'],
  },
  {
    version: 5,
    name: "a run's result (src/rules/result.ts): whether it counts as a qualified cable, its role, where its FEC margin and deciding reason were seen, the whole run's time left",
    statements: [
      // 1: judged (PASS, MARGINAL, FAIL), a qualification, a cable (not the golden reference): every yield and histogram
      // counts these rows only. Rows before version 5 get it from what they have (`db import` rewrites them through
      // the result): a set-up check, a golden run, a preflight (imported under its label before) or an unfinished run is 0.
      'ALTER TABLE runs ADD COLUMN qualifies INTEGER',
      `UPDATE runs SET qualifies = CASE WHEN state = 'finished' AND outcome IN ('PASS', 'MARGINAL', 'FAIL')
         AND (run_kind IS NULL OR run_kind = 'qualification') AND (batch_role IS NULL OR batch_role = 'cable')
         AND (label IS NULL OR label <> 'preflight') THEN 1 ELSE 0 END`,
      'ALTER TABLE runs ADD COLUMN run_role TEXT',
      'ALTER TABLE runs ADD COLUMN fec_margin_node TEXT',
      'ALTER TABLE runs ADD COLUMN fec_margin_phase TEXT',
      'ALTER TABLE runs ADD COLUMN fec_margin_lane INTEGER',
      'ALTER TABLE runs ADD COLUMN headline_phase TEXT',
      'ALTER TABLE runs ADD COLUMN deciding_node TEXT',
      'ALTER TABLE runs ADD COLUMN deciding_phase TEXT',
      'ALTER TABLE runs ADD COLUMN deciding_lane INTEGER',
      'ALTER TABLE runs ADD COLUMN deciding_at_s DOUBLE PRECISION',
      'ALTER TABLE run_details ADD COLUMN result TEXT',
      // The live row's remaining_s is the whole run's time left; the current phase's beside it.
      'ALTER TABLE live ADD COLUMN phase_remaining_s DOUBLE PRECISION',
      'CREATE INDEX runs_part_qualifies ON runs (part_number, qualifies, cable_serial, started_at)',
    ],
  },
  {
    version: 6,
    name: 'cables in service (cablequal watch): their events, and a sampled history per cable serial and receiver',
    statements: [
      // One row per watch event (alarm, clear, link-down with its snapshot, link-up, counter-reset, status); `detail` is
      // the rest of the event as JSON. Written once as it happens; a resumed watch never writes one twice (event_id).
      `CREATE TABLE service_events (
        event_id TEXT PRIMARY KEY,
        serial TEXT,
        cable TEXT,
        node TEXT,
        cage INTEGER,
        type TEXT NOT NULL,
        rule TEXT,
        grade TEXT,
        lane INTEGER,
        value DOUBLE PRECISION,
        unit TEXT,
        limit_value DOUBLE PRECISION,
        at TEXT NOT NULL,
        message TEXT,
        detail TEXT
      )`,
      'CREATE INDEX service_events_serial ON service_events (serial, at)',
      'CREATE INDEX service_events_at ON service_events (at)',
      // What each receiver counted per bucket of watching (5 minutes): seconds counted, errors per lane (JSON), the
      // rest as counts, the NIC temperature's mean and maximum, the smallest FEC margin of the bucket's windows.
      `CREATE TABLE service_samples (
        serial TEXT NOT NULL,
        node TEXT NOT NULL,
        cage INTEGER NOT NULL,
        at TEXT NOT NULL,
        seconds DOUBLE PRECISION NOT NULL,
        lane_errors TEXT NOT NULL,
        corrected_bits DOUBLE PRECISION,
        crc_errors INTEGER NOT NULL,
        post_fec_errors INTEGER NOT NULL,
        link_down_events INTEGER NOT NULL,
        nic_temp_c DOUBLE PRECISION,
        nic_temp_max_c DOUBLE PRECISION,
        margin_decades DOUBLE PRECISION,
        PRIMARY KEY (serial, node, cage, at)
      )`,
    ],
  },
  {
    version: 7,
    name: "what a run's row was checked against: its own run, a re-graded journal and its signatures, or a record alone (unchecked)",
    statements: ['ALTER TABLE runs ADD COLUMN journal_check TEXT'],
  },
];

export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

// Apply the migrations this store lacks. Two controllers starting at once: PostgreSQL serialises them on an advisory
// lock, SQLite on its write lock (BEGIN IMMEDIATE); the second finds the versions applied and does nothing.
export async function migrate(db: SqlDb, now: () => string = () => new Date().toISOString()): Promise<number[]> {
  return db.transaction(async (tx) => {
    if (tx.engine === 'postgres') await tx.all('SELECT pg_advisory_xact_lock(4242016)');
    await tx.run('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    const have = new Set((await tx.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => Number(r.version)));
    const newest = Math.max(0, ...have);
    if (newest > SCHEMA_VERSION) throw new StoreTooNew(newest);
    const applied: number[] = [];
    for (const m of MIGRATIONS) {
      if (have.has(m.version)) continue;
      await applyOne(tx, m);
      await tx.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, now()]);
      applied.push(m.version);
    }
    return applied;
  });
}

async function applyOne(tx: SqlTx, m: Migration): Promise<void> {
  for (const s of m.statements) await tx.run(s);
}

// A store written by a newer cablequal: refuse rather than write rows an older schema does not know.
export class StoreTooNew extends Error {
  constructor(readonly version: number) {
    super(`the store's schema is version ${version}, this cablequal knows up to ${SCHEMA_VERSION}: upgrade cablequal`);
  }
}
