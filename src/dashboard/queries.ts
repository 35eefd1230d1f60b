// What the dashboard asks the store, each query bounded (filters validated, pages of at most MAX_LIMIT rows).
// Read-only: nothing here writes. Verdicts are the records' own (the outcome column), never recomputed.
import type { SqlDb } from '../store/sql.js';

export const OUTCOMES = ['PASS', 'MARGINAL', 'FAIL', 'ERROR', 'ABORTED'] as const;
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;
const MAX_FACETS = 500;

export interface RunFilter {
  outcome?: string;
  part?: string;
  vendor?: string;
  lot?: string;
  station?: string;
  serial?: string;
  from?: string; // YYYY-MM-DD, inclusive (UTC)
  to?: string; // YYYY-MM-DD, inclusive (UTC)
}

// One run in lists (the API's /api/runs items).
export interface RunItem {
  runId: string;
  state: string;
  outcome: string | null;
  label: string | null;
  serial: string | null;
  partNumber: string | null;
  vendor: string | null;
  lot: string | null;
  station: string | null;
  batchId: string | null;
  batchRole: string | null;
  startedAt: string | null;
  endedAt: string | null;
  simulated: boolean;
  protocol: string | null;
  fecMarginDecades: number | null;
  worstLaneBer: number | null;
  ibWriteBwGbps: number | null;
  ncclBusbwGBs: number | null;
  nicTempMaxC: number | null;
  mainReason: string | null;
  runDir: string | null;
  certificateFile: string | null;
  certificateSha256: string | null;
  runKind: string | null; // qualification or setup-check; null for records before they were told apart
}

const LIST_COLUMNS = `run_id, state, outcome, label, cable_serial, part_number, vendor, lot, station_id, batch_id, batch_role, started_at, ended_at,
  simulated, protocol_name, fec_margin_decades, worst_lane_ber, ib_write_bw_gbps, nccl_busbw_gbs, nic_temp_max_c, main_reason, run_dir,
  certificate_file, certificate_sha256, run_kind`;

const n = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const s = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function item(r: Record<string, unknown>): RunItem {
  return {
    runId: String(r['run_id']),
    state: String(r['state']),
    outcome: s(r['outcome']),
    label: s(r['label']),
    serial: s(r['cable_serial']),
    partNumber: s(r['part_number']),
    vendor: s(r['vendor']),
    lot: s(r['lot']),
    station: s(r['station_id']),
    batchId: s(r['batch_id']),
    batchRole: s(r['batch_role']),
    startedAt: s(r['started_at']),
    endedAt: s(r['ended_at']),
    simulated: Number(r['simulated']) === 1,
    protocol: s(r['protocol_name']),
    fecMarginDecades: n(r['fec_margin_decades']),
    worstLaneBer: n(r['worst_lane_ber']),
    ibWriteBwGbps: n(r['ib_write_bw_gbps']),
    ncclBusbwGBs: n(r['nccl_busbw_gbs']),
    nicTempMaxC: n(r['nic_temp_max_c']),
    mainReason: s(r['main_reason']),
    runDir: s(r['run_dir']),
    certificateFile: s(r['certificate_file']),
    certificateSha256: s(r['certificate_sha256']),
    runKind: s(r['run_kind']),
  };
}

// A filter value the dashboard refuses (too long, not an outcome, not a date): the API answers 400 with this.
export class BadQuery extends Error {}

// Validate a filter from query parameters; unknown outcome or a malformed date is a BadQuery naming it.
export function parseFilter(q: URLSearchParams): RunFilter {
  const f: RunFilter = {};
  for (const key of ['outcome', 'part', 'vendor', 'lot', 'station', 'serial', 'from', 'to'] as const) {
    const v = q.get(key);
    if (v === null || v === '') continue;
    if (v.length > 200) throw new BadQuery(`${key}: at most 200 characters`);
    f[key] = v;
  }
  if (f.outcome && !(OUTCOMES as readonly string[]).includes(f.outcome) && f.outcome !== 'running')
    throw new BadQuery(`outcome: one of ${OUTCOMES.join(', ')} or running`);
  for (const key of ['from', 'to'] as const) if (f[key] && !/^\d{4}-\d{2}-\d{2}$/.test(f[key]!)) throw new BadQuery(`${key}: a date YYYY-MM-DD`);
  return f;
}

// Page bounds from ?limit=&offset= (limit 1..MAX_LIMIT, default DEFAULT_LIMIT).
export function parsePage(q: URLSearchParams): { limit: number; offset: number } {
  const limit = q.get('limit') === null ? DEFAULT_LIMIT : Number(q.get('limit'));
  const offset = q.get('offset') === null ? 0 : Number(q.get('offset'));
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new BadQuery(`limit: an integer 1..${MAX_LIMIT}`);
  if (!Number.isInteger(offset) || offset < 0 || offset > 10_000_000) throw new BadQuery('offset: a non-negative integer');
  return { limit, offset };
}

function where(f: RunFilter): { sql: string; params: (string | number)[] } {
  const c: string[] = [];
  const p: (string | number)[] = [];
  const add = (sql: string, v: string | number) => {
    c.push(sql);
    p.push(v);
  };
  if (f.outcome === 'running') c.push("state = 'running'");
  else if (f.outcome) add('outcome = ?', f.outcome);
  if (f.part) add('part_number = ?', f.part);
  if (f.vendor) add('vendor = ?', f.vendor);
  if (f.lot) add('lot = ?', f.lot);
  if (f.station) add('station_id = ?', f.station);
  if (f.serial) add('cable_serial = ?', f.serial);
  // ISO-8601 UTC text compares in time order: from the day's start, up to (not including) the next day.
  if (f.from) add('started_at >= ?', `${f.from}T00:00:00`);
  if (f.to) add('started_at < ?', nextDay(f.to));
  return { sql: c.length ? `WHERE ${c.join(' AND ')}` : '', params: p };
}

function nextDay(d: string): string {
  const t = new Date(`${d}T00:00:00Z`);
  if (Number.isNaN(t.getTime())) throw new BadQuery(`to: ${d} is not a date`);
  return new Date(t.getTime() + 86_400_000).toISOString().slice(0, 10) + 'T00:00:00';
}

// Runs, newest first, one page, with the total that match.
export async function listRuns(
  db: SqlDb,
  f: RunFilter,
  page: { limit: number; offset: number },
): Promise<{ total: number; limit: number; offset: number; runs: RunItem[] }> {
  const w = where(f);
  const [rows, count] = await Promise.all([
    db.all(`SELECT ${LIST_COLUMNS} FROM runs ${w.sql} ORDER BY started_at DESC, run_id DESC LIMIT ? OFFSET ?`, [...w.params, page.limit, page.offset]),
    db.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM runs ${w.sql}`, w.params),
  ]);
  return { total: Number(count[0]?.n ?? 0), ...page, runs: rows.map(item) };
}

// One run with its reasons, measurements and nodes.
export async function getRun(db: SqlDb, runId: string): Promise<(RunItem & { reasons: unknown; measurements: unknown; nodes: unknown }) | null> {
  const [r] = await db.all(
    `SELECT ${LIST_COLUMNS.replace(/\b(\w+)\b/g, 'r.$1')}, d.reasons, d.measurements, d.nodes FROM runs r LEFT JOIN run_details d ON d.run_id = r.run_id WHERE r.run_id = ?`,
    [runId],
  );
  if (!r) return null;
  const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : null);
  return { ...item(r), reasons: parse(r['reasons']), measurements: parse(r['measurements']), nodes: parse(r['nodes']) };
}

// A cable and every run of it, oldest first.
export async function cableHistory(db: SqlDb, serial: string): Promise<{ cable: Record<string, unknown> | null; runs: RunItem[] }> {
  const [cable] = await db.all('SELECT serial, part_number, vendor, vendor_oui, vendor_rev, date_code, lot, length_m, family FROM cables WHERE serial = ?', [
    serial,
  ]);
  const rows = await db.all(`SELECT ${LIST_COLUMNS} FROM runs WHERE cable_serial = ? ORDER BY started_at, run_id LIMIT ?`, [serial, 5000]);
  return { cable: cable ?? null, runs: rows.map(item) };
}

export type Counts = Record<(typeof OUTCOMES)[number] | 'running', number>;
const zero = (): Counts => ({ PASS: 0, MARGINAL: 0, FAIL: 0, ERROR: 0, ABORTED: 0, running: 0 });

// Yield: PASS / MARGINAL / FAIL among judged runs; ERROR and ABORTED counted apart (they did not judge the cable).
export function yieldOf(c: Counts): { judged: number; passRate: number | null; unjudged: number } {
  const judged = c.PASS + c.MARGINAL + c.FAIL;
  return { judged, passRate: judged ? c.PASS / judged : null, unjudged: c.ERROR + c.ABORTED };
}

// Runs per part number and per vendor, by outcome.
export async function partsAndVendors(
  db: SqlDb,
): Promise<{ parts: { partNumber: string; vendor: string | null; counts: Counts }[]; vendors: { vendor: string; counts: Counts }[] }> {
  const rows = await db.all<{ part_number: string | null; vendor: string | null; outcome: string | null; state: string; n: number | string }>(
    'SELECT part_number, vendor, outcome, state, COUNT(*) AS n FROM runs WHERE part_number IS NOT NULL GROUP BY part_number, vendor, outcome, state',
  );
  const parts = new Map<string, { partNumber: string; vendor: string | null; counts: Counts }>();
  const vendors = new Map<string, { vendor: string; counts: Counts }>();
  for (const r of rows) {
    const key = r.state === 'running' ? 'running' : (r.outcome as keyof Counts | null);
    if (!key || !(key in zero())) continue;
    const p = parts.get(r.part_number!) ?? { partNumber: r.part_number!, vendor: r.vendor, counts: zero() };
    p.counts[key] += Number(r.n);
    parts.set(r.part_number!, p);
    const vname = r.vendor ?? '';
    const v = vendors.get(vname) ?? { vendor: vname, counts: zero() };
    v.counts[key] += Number(r.n);
    vendors.set(vname, v);
  }
  const byName =
    <T>(k: (x: T) => string) =>
    (a: T, b: T) =>
      k(a).localeCompare(k(b));
  return { parts: [...parts.values()].sort(byName((x) => x.partNumber)), vendors: [...vendors.values()].sort(byName((x) => x.vendor)) };
}

// Histogram bins: FEC margin in half decades; worst-lane BER per decade (log10), zero errors in a bin of its own.
export const MARGIN_BIN = 0.5;

export interface Distribution {
  bins: number[]; // left edges (margin in decades; BER as log10)
  counts: Record<string, number[]>; // per lot: count per bin
  zeroBer: Record<string, number>; // per lot: runs whose worst lane counted no error
}

// Yield and distributions of one part number or one vendor, per lot (date code), over finished runs.
export async function yieldPage(
  db: SqlDb,
  by: 'part' | 'vendor',
  key: string,
): Promise<{
  key: string;
  by: 'part' | 'vendor';
  lots: { lot: string; counts: Counts; yield: ReturnType<typeof yieldOf> }[];
  total: Counts;
  fecMargin: Distribution;
  worstLaneBer: Distribution;
  vendors: string[];
  parts: string[];
}> {
  const col = by === 'part' ? 'part_number' : 'vendor';
  const rows = await db.all<{
    lot: string | null;
    outcome: string | null;
    state: string;
    fec: number | null;
    ber: number | null;
    vendor: string | null;
    part_number: string | null;
  }>(`SELECT lot, outcome, state, fec_margin_decades AS fec, worst_lane_ber AS ber, vendor, part_number FROM runs WHERE ${col} = ?`, [key]);
  const lots = new Map<string, Counts>();
  const total = zero();
  const fecByLot = new Map<string, number[]>();
  const berByLot = new Map<string, number[]>();
  const zeroBer: Record<string, number> = {};
  for (const r of rows) {
    const lot = r.lot ?? '(none)';
    const k = r.state === 'running' ? 'running' : (r.outcome as keyof Counts | null);
    if (!k || !(k in total)) continue;
    const c = lots.get(lot) ?? zero();
    c[k]++;
    total[k]++;
    lots.set(lot, c);
    if (r.state !== 'finished' || (k !== 'PASS' && k !== 'MARGINAL' && k !== 'FAIL')) continue; // distributions of judged runs
    if (r.fec !== null) push(fecByLot, lot, Number(r.fec));
    if (r.ber !== null) {
      const b = Number(r.ber);
      if (b > 0) push(berByLot, lot, Math.log10(b));
      else zeroBer[lot] = (zeroBer[lot] ?? 0) + 1;
    }
  }
  return {
    key,
    by,
    lots: [...lots.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([lot, counts]) => ({ lot, counts, yield: yieldOf(counts) })),
    total,
    fecMargin: histogram(fecByLot, MARGIN_BIN, {}),
    worstLaneBer: histogram(berByLot, 1, zeroBer),
    vendors: [...new Set(rows.map((r) => r.vendor).filter((v): v is string => v !== null))].sort(),
    parts: [...new Set(rows.map((r) => r.part_number).filter((v): v is string => v !== null))].sort(),
  };
}

function push(m: Map<string, number[]>, k: string, v: number): void {
  const xs = m.get(k);
  if (xs) xs.push(v);
  else m.set(k, [v]);
}

function histogram(byLot: Map<string, number[]>, width: number, zeroBer: Record<string, number>): Distribution {
  const all = [...byLot.values()].flat();
  if (!all.length) return { bins: [], counts: {}, zeroBer };
  const lo = Math.floor(all.reduce((a, b) => Math.min(a, b)) / width) * width;
  const hi = Math.floor(all.reduce((a, b) => Math.max(a, b)) / width) * width;
  const nBins = Math.min(200, Math.round((hi - lo) / width) + 1);
  const bins = [...Array(nBins).keys()].map((i) => +(lo + i * width).toFixed(6));
  const counts: Record<string, number[]> = {};
  for (const [lot, xs] of byLot) {
    const c = new Array<number>(nBins).fill(0);
    for (const x of xs) c[Math.min(nBins - 1, Math.floor((x - lo) / width + 1e-9))]!++;
    counts[lot] = c;
  }
  return { bins, counts, zeroBer };
}

// The golden cables and their runs across batches, with their procedure's regression tolerances (the drift limits).
export async function goldenRuns(
  db: SqlDb,
): Promise<{ serial: string; runs: (RunItem & { batchName: string | null })[]; tolerances: Record<string, number> | null }[]> {
  const serials = (await db.all<{ serial: string }>('SELECT DISTINCT serial FROM golden_cables ORDER BY serial LIMIT ?', [MAX_FACETS])).map((r) => r.serial);
  const out = [];
  for (const serial of serials) {
    const rows = await db.all(
      `SELECT ${LIST_COLUMNS.replace(/\b(\w+)\b/g, 'r.$1')}, b.name AS batch_name, p.regression
       FROM runs r LEFT JOIN batches b ON b.id = r.batch_id LEFT JOIN procedures p ON p.sha256 = r.procedure_sha256
       WHERE r.cable_serial = ? AND r.batch_role IN ('golden-first', 'golden-last') AND r.state = 'finished'
       ORDER BY r.started_at, r.run_id LIMIT ?`,
      [serial, 5000],
    );
    const reg = rows.map((r) => r['regression']).find((x) => typeof x === 'string');
    out.push({
      serial,
      runs: rows.map((r) => ({ ...item(r), batchName: s(r['batch_name']) })),
      tolerances: reg ? (JSON.parse(String(reg)) as Record<string, number>) : null,
    });
  }
  return out;
}

// Runs in progress with their latest live status (newest update first).
export async function liveRuns(db: SqlDb): Promise<
  {
    runId: string;
    label: string | null;
    station: string | null;
    simulated: boolean;
    startedAt: string | null;
    batchId: string | null;
    updatedAt: string | null;
    phase: string | null;
    elapsedS: number | null;
    remainingS: number | null;
    status: unknown;
  }[]
> {
  const rows = await db.all(
    `SELECT r.run_id, r.label, r.station_id, r.simulated, r.started_at, r.batch_id, l.updated_at, l.phase, l.elapsed_s, l.remaining_s, l.status
     FROM runs r LEFT JOIN live l ON l.run_id = r.run_id WHERE r.state = 'running' ORDER BY r.started_at DESC LIMIT ?`,
    [200],
  );
  return rows.map((r) => ({
    runId: String(r['run_id']),
    label: s(r['label']),
    station: s(r['station_id']),
    simulated: Number(r['simulated']) === 1,
    startedAt: s(r['started_at']),
    batchId: s(r['batch_id']),
    updatedAt: s(r['updated_at']),
    phase: s(r['phase']),
    elapsedS: n(r['elapsed_s']),
    remainingS: n(r['remaining_s']),
    status: typeof r['status'] === 'string' ? JSON.parse(r['status']) : null,
  }));
}

// The values the run filters offer (at most MAX_FACETS each).
export async function facets(db: SqlDb): Promise<Record<'parts' | 'vendors' | 'lots' | 'stations', string[]>> {
  const distinct = async (col: string) =>
    (await db.all<{ v: string }>(`SELECT DISTINCT ${col} AS v FROM runs WHERE ${col} IS NOT NULL ORDER BY ${col} LIMIT ?`, [MAX_FACETS])).map((r) =>
      String(r.v),
    );
  const [parts, vendors, lots, stations] = await Promise.all([distinct('part_number'), distinct('vendor'), distinct('lot'), distinct('station_id')]);
  return { parts, vendors, lots, stations };
}
