// Cables in service in the results store (migration 6): `cablequal watch`'s events and a sampled history per cable
// serial, written as the watch goes through the run's recorder (never waited on, given up after its first failure:
// recorder.ts; the journal under --out holds everything), and read by the dashboard's cable and fleet pages.
import type { WatchEvent } from '../watch/events.js';
import type { ReceiverFigures, WatchSinks } from '../watch/watcher.js';
import type { StoreRecorder } from './recorder.js';
import type { SqlDb, SqlValue } from './sql.js';

// Seconds of ticks one history row adds up (a day is 288 rows per receiver).
export const SERVICE_BUCKET_S = 300;

export interface ServiceEventRow {
  event_id: string;
  serial: string | null;
  cable: string | null;
  node: string | null;
  cage: number | null;
  type: string;
  rule: string | null;
  grade: string | null;
  lane: number | null;
  value: number | null;
  unit: string | null;
  limit_value: number | null;
  at: string;
  message: string | null;
  detail: string | null;
}

export interface ServiceSampleRow {
  serial: string;
  node: string;
  cage: number;
  at: string;
  seconds: number;
  lane_errors: string;
  corrected_bits: number | null;
  crc_errors: number;
  post_fec_errors: number;
  link_down_events: number;
  nic_temp_c: number | null;
  nic_temp_max_c: number | null;
  margin_decades: number | null;
}

const EVENT_COLUMNS = [
  'event_id',
  'serial',
  'cable',
  'node',
  'cage',
  'type',
  'rule',
  'grade',
  'lane',
  'value',
  'unit',
  'limit_value',
  'at',
  'message',
  'detail',
] as const;
const SAMPLE_COLUMNS = [
  'serial',
  'node',
  'cage',
  'at',
  'seconds',
  'lane_errors',
  'corrected_bits',
  'crc_errors',
  'post_fec_errors',
  'link_down_events',
  'nic_temp_c',
  'nic_temp_max_c',
  'margin_decades',
] as const;

const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);

// One event as its row: the fields every event may have in columns, the rest as JSON.
export function serviceEventRow(e: WatchEvent): ServiceEventRow | null {
  if (e.type === 'start' || e.type === 'end') return null;
  const o = e as unknown as Record<string, unknown>;
  const { type, at, message, serial, cable, node, cage, rule, grade, lane, value, unit, limit, ...rest } = o;
  const detail = Object.fromEntries(Object.entries(rest).filter(([k]) => k !== 'atS'));
  return {
    event_id: [at, cable ?? '', node ?? '', cage ?? '', type, rule ?? '', lane ?? ''].join('|'),
    serial: (serial as string | null | undefined) ?? null,
    cable: (cable as string | undefined) ?? null,
    node: (node as string | undefined) ?? null,
    cage: num(cage),
    type: type as string,
    rule: (rule as string | undefined) ?? null,
    grade: (grade as string | undefined) ?? null,
    lane: num(lane),
    value: num(value),
    unit: (unit as string | undefined) ?? null,
    limit_value: num(limit),
    at: at as string,
    message: (message as string | undefined) ?? null,
    detail: Object.keys(detail).length ? JSON.stringify(detail) : null,
  };
}

export async function insertServiceEvent(db: Pick<SqlDb, 'run'>, r: ServiceEventRow): Promise<void> {
  await db.run(
    `INSERT INTO service_events (${EVENT_COLUMNS.join(', ')}) VALUES (${EVENT_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (event_id) DO NOTHING`,
    EVENT_COLUMNS.map((c) => r[c] as SqlValue),
  );
}

export async function insertServiceSample(db: Pick<SqlDb, 'run'>, r: ServiceSampleRow): Promise<void> {
  await db.run(
    `INSERT INTO service_samples (${SAMPLE_COLUMNS.join(', ')}) VALUES (${SAMPLE_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (serial, node, cage, at) DO NOTHING`,
    SAMPLE_COLUMNS.map((c) => r[c] as SqlValue),
  );
}

interface Bucket {
  serial: string;
  node: string;
  cage: number;
  seconds: number;
  lanes: number[];
  correctedBits: number | null;
  crc: number;
  postFec: number;
  linkDown: number;
  tempSum: number;
  tempSeconds: number;
  tempMax: number | null;
  margin: number | null;
}

// Add one tick's figures of a receiver to its bucket.
function add(b: Bucket, f: ReceiverFigures): void {
  b.seconds += f.dtS;
  f.laneErrors.forEach((n, i) => (b.lanes[i] = (b.lanes[i] ?? 0) + n));
  if (f.correctedBits !== null) b.correctedBits = (b.correctedBits ?? 0) + f.correctedBits;
  b.crc += f.crcErrors;
  b.postFec += f.postFecErrors;
  b.linkDown += f.linkDownEvents;
  if (f.nicTempC !== null) {
    b.tempSum += f.nicTempC * f.dtS;
    b.tempSeconds += f.dtS;
    b.tempMax = Math.max(b.tempMax ?? -Infinity, f.nicTempC);
  }
  if (f.marginDecades !== null && Number.isFinite(f.marginDecades)) b.margin = Math.min(b.margin ?? Infinity, f.marginDecades);
}

// The watch's store sinks over a recorder: each event as it comes, each receiver's ticks added up per bucket. `close`
// writes the buckets begun and waits for the queue (bounded by the recorder's deadline).
export function serviceStoreSinks(recorder: StoreRecorder, bucketS = SERVICE_BUCKET_S): WatchSinks & { close(at: string): Promise<void> } {
  const buckets = new Map<string, Bucket>();
  const write = (b: Bucket, at: string) => {
    const row: ServiceSampleRow = {
      serial: b.serial,
      node: b.node,
      cage: b.cage,
      at,
      seconds: b.seconds,
      lane_errors: JSON.stringify(b.lanes),
      corrected_bits: b.correctedBits,
      crc_errors: b.crc,
      post_fec_errors: b.postFec,
      link_down_events: b.linkDown,
      nic_temp_c: b.tempSeconds > 0 ? b.tempSum / b.tempSeconds : null,
      nic_temp_max_c: b.tempMax,
      margin_decades: b.margin,
    };
    recorder.write((st) => insertServiceSample(st.db, row));
  };
  return {
    event: (e) => {
      const row = serviceEventRow(e);
      if (row) recorder.write((st) => insertServiceEvent(st.db, row));
    },
    tick: (_atS, at, figures) => {
      for (const f of figures) {
        const serial = f.serial ?? f.cable;
        const key = `${serial}|${f.node}|${f.cage}`;
        let b = buckets.get(key);
        if (!b) {
          b = {
            serial,
            node: f.node,
            cage: f.cage,
            seconds: 0,
            lanes: [],
            correctedBits: null,
            crc: 0,
            postFec: 0,
            linkDown: 0,
            tempSum: 0,
            tempSeconds: 0,
            tempMax: null,
            margin: null,
          };
          buckets.set(key, b);
        }
        add(b, f);
        if (b.seconds >= bucketS) {
          write(b, at);
          buckets.delete(key);
        }
      }
    },
    close: async (at) => {
      for (const b of buckets.values()) if (b.seconds > 0) write(b, at);
      buckets.clear();
      await recorder.flush();
    },
  };
}

// A cable's service as the dashboard shows it: its events (newest first, at most `limit`) and its history.
export async function serviceOfCable(db: SqlDb, serial: string, limit = 500): Promise<{ events: ServiceEventRow[]; samples: ServiceSampleRow[] }> {
  const events = await db.all<ServiceEventRow & Record<string, SqlValue>>('SELECT * FROM service_events WHERE serial = ? ORDER BY at DESC, event_id LIMIT ?', [
    serial,
    limit,
  ]);
  const samples = await db.all<ServiceSampleRow & Record<string, SqlValue>>('SELECT * FROM service_samples WHERE serial = ? ORDER BY at, node, cage', [serial]);
  return { events, samples };
}

// Every cable in service with its latest status, its alarms raised and cleared, and its drops.
export interface FleetRow {
  serial: string;
  cable: string | null;
  last_at: string;
  alarms: number;
  clears: number;
  link_downs: number;
  status: string | null;
}

export async function watchedCables(db: SqlDb): Promise<FleetRow[]> {
  return db.all<FleetRow & Record<string, SqlValue>>(
    `SELECT serial, MAX(cable) AS cable, MAX(at) AS last_at,
       SUM(CASE WHEN type = 'alarm' THEN 1 ELSE 0 END) AS alarms,
       SUM(CASE WHEN type = 'clear' THEN 1 ELSE 0 END) AS clears,
       SUM(CASE WHEN type = 'link-down' THEN 1 ELSE 0 END) AS link_downs,
       (SELECT s.message FROM service_events s WHERE s.serial = e.serial AND s.type = 'status' ORDER BY s.at DESC LIMIT 1) AS status
     FROM service_events e WHERE serial IS NOT NULL GROUP BY serial ORDER BY MAX(at) DESC`,
  );
}
