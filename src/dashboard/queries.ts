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
  serial?: string; // a substring of the cable serial, any case
  batch?: string; // a batch id
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
  fecMarginDecades: number | null; // "FEC margin": the worst lane's 95% bound over the graded soaks (src/rules/result.ts)
  worstLaneBer: number | null;
  worstLaneBerUb95: number | null; // "worst-lane BER": 95% upper bound over the graded soaks (rows before schema 5: every phase until re-imported)
  ibWriteBwGbps: number | null;
  ncclBusbwGBs: number | null;
  nicTempMaxC: number | null;
  mainReason: string | null;
  runDir: string | null;
  certificateFile: string | null;
  certificateSha256: string | null;
  // Schema version 3 on (null for rows imported before: `db import` fills them):
  headlineMarginDecades: number | null; // the certificate's FEC margin: loaded soak, worst receiver
  headlineBerUb95: number | null; // the certificate's worst lane in the loaded soak: BER below this (95% upper bound)
  decidingRule: string | null; // the reason that decided a FAIL/MARGINAL (or why an ERROR could not judge)
  decidingValue: number | null;
  decidingUnit: string | null;
  mainCode: string | null; // "FAIL fec-window spark-b L2 0.84 dec"
  decidedAtS: number | null;
  batchName: string | null;
  runKind: string | null; // qualification or setup-check; null for records before they were told apart
  // Schema version 5 on (null for rows imported before: `db import` fills them):
  qualifies: boolean | null; // counts as a qualified cable: judged, a qualification, not the golden reference
  runRole: string | null; // cable or golden
  fecMarginNode: string | null;
  fecMarginPhase: string | null;
  fecMarginLane: number | null;
  headlinePhase: string | null;
  decidingNode: string | null;
  decidingPhase: string | null;
  decidingLane: number | null;
  decidingAtS: number | null;
  // Schema version 7 on: what the row was checked against (src/store/run-row.ts JournalCheck; null before).
  journalCheck: string | null;
}

// The runs columns a list reads (runs aliased r, batches b).
const LIST_COLUMNS = `r.run_id, r.state, r.outcome, r.label, r.cable_serial, r.part_number, r.vendor, r.lot, r.station_id, r.batch_id, r.batch_role,
  r.started_at, r.ended_at, r.simulated, r.protocol_name, r.fec_margin_decades, r.worst_lane_ber, r.ib_write_bw_gbps, r.nccl_busbw_gbs,
  r.nic_temp_max_c, r.main_reason, r.run_dir, r.certificate_file, r.certificate_sha256, r.headline_margin_decades, r.headline_ber_ub95,
  r.deciding_rule, r.deciding_value, r.deciding_unit, r.main_code, r.decided_at_s, r.worst_lane_ber_ub95, r.run_kind, r.qualifies, r.run_role,
  r.fec_margin_node, r.fec_margin_phase, r.fec_margin_lane, r.headline_phase, r.deciding_node, r.deciding_phase, r.deciding_lane, r.deciding_at_s,
  r.journal_check, b.name AS batch_name`;
const LIST_FROM = 'runs r LEFT JOIN batches b ON b.id = r.batch_id';

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
    worstLaneBerUb95: n(r['worst_lane_ber_ub95']),
    ibWriteBwGbps: n(r['ib_write_bw_gbps']),
    ncclBusbwGBs: n(r['nccl_busbw_gbs']),
    nicTempMaxC: n(r['nic_temp_max_c']),
    mainReason: s(r['main_reason']),
    runDir: s(r['run_dir']),
    certificateFile: s(r['certificate_file']),
    certificateSha256: s(r['certificate_sha256']),
    headlineMarginDecades: n(r['headline_margin_decades']),
    headlineBerUb95: n(r['headline_ber_ub95']),
    decidingRule: s(r['deciding_rule']),
    decidingValue: n(r['deciding_value']),
    decidingUnit: s(r['deciding_unit']),
    mainCode: s(r['main_code']),
    decidedAtS: n(r['decided_at_s']),
    batchName: s(r['batch_name']),
    runKind: s(r['run_kind']),
    qualifies: r['qualifies'] === null || r['qualifies'] === undefined ? null : Number(r['qualifies']) === 1,
    runRole: s(r['run_role']),
    fecMarginNode: s(r['fec_margin_node']),
    fecMarginPhase: s(r['fec_margin_phase']),
    fecMarginLane: n(r['fec_margin_lane']),
    headlinePhase: s(r['headline_phase']),
    decidingNode: s(r['deciding_node']),
    decidingPhase: s(r['deciding_phase']),
    decidingLane: n(r['deciding_lane']),
    decidingAtS: n(r['deciding_at_s']),
    journalCheck: s(r['journal_check']),
  };
}

// A filter value the dashboard refuses (too long, not an outcome, not a date): the API answers 400 with this.
export class BadQuery extends Error {}

// Validate a filter from query parameters; unknown outcome or a malformed date is a BadQuery naming it.
export function parseFilter(q: URLSearchParams): RunFilter {
  const f: RunFilter = {};
  for (const key of ['outcome', 'part', 'vendor', 'lot', 'station', 'serial', 'batch', 'from', 'to'] as const) {
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
  if (f.outcome === 'running') c.push("r.state = 'running'");
  else if (f.outcome) add('r.outcome = ?', f.outcome);
  if (f.part) add('r.part_number = ?', f.part);
  if (f.vendor) add('r.vendor = ?', f.vendor);
  if (f.lot) add('r.lot = ?', f.lot);
  if (f.station) add('r.station_id = ?', f.station);
  // A substring, any case; LIKE's own wildcards in what was typed are taken literally.
  if (f.serial) add("LOWER(r.cable_serial) LIKE ? ESCAPE '\\'", `%${f.serial.toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`);
  if (f.batch) add('r.batch_id = ?', f.batch);
  // ISO-8601 UTC text compares in time order: from the day's start, up to (not including) the next day.
  if (f.from) add('r.started_at >= ?', `${f.from}T00:00:00`);
  if (f.to) add('r.started_at < ?', nextDay(f.to));
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
    db.all(`SELECT ${LIST_COLUMNS} FROM ${LIST_FROM} ${w.sql} ORDER BY r.started_at DESC, r.run_id DESC LIMIT ? OFFSET ?`, [
      ...w.params,
      page.limit,
      page.offset,
    ]),
    db.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM runs r ${w.sql}`, w.params),
  ]);
  return { total: Number(count[0]?.n ?? 0), ...page, runs: rows.map(item) };
}

// A run with everything its page shows: reasons, measurements, nodes, and (schema 3 on) the headline, both EEPROM
// ends, phases, conditions per node and phase, benchmarks; null where the row predates them.
export interface RunDetail extends RunItem {
  reasons: unknown;
  measurements: unknown;
  nodes: unknown;
  headline: unknown;
  cableEnds: unknown;
  phases: unknown;
  conditions: unknown;
  benchmarks: unknown;
  result: unknown; // the run's result as the record computed it (src/domain/result.ts); null before schema 5
}

// One run with everything its page shows, or null when the store has no such run.
export async function getRun(db: SqlDb, runId: string): Promise<RunDetail | null> {
  const [r] = await db.all(
    `SELECT ${LIST_COLUMNS}, d.reasons, d.measurements, d.nodes, d.headline, d.cable_ends, d.phases, d.conditions, d.benchmarks, d.result
     FROM ${LIST_FROM} LEFT JOIN run_details d ON d.run_id = r.run_id WHERE r.run_id = ?`,
    [runId],
  );
  if (!r) return null;
  const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : null);
  return {
    ...item(r),
    reasons: parse(r['reasons']),
    measurements: parse(r['measurements']),
    nodes: parse(r['nodes']),
    headline: parse(r['headline']),
    cableEnds: parse(r['cable_ends']),
    phases: parse(r['phases']),
    conditions: parse(r['conditions']),
    benchmarks: parse(r['benchmarks']),
    result: parse(r['result']),
  };
}

// A cable and every run of it, oldest first.
export async function cableHistory(db: SqlDb, serial: string): Promise<{ cable: Record<string, unknown> | null; runs: RunItem[] }> {
  const [cable] = await db.all('SELECT serial, part_number, vendor, vendor_oui, vendor_rev, date_code, lot, length_m, family FROM cables WHERE serial = ?', [
    serial,
  ]);
  const rows = await db.all(`SELECT ${LIST_COLUMNS} FROM ${LIST_FROM} WHERE r.cable_serial = ? ORDER BY r.started_at, r.run_id LIMIT ?`, [serial, 5000]);
  return { cable: cable ?? null, runs: rows.map(item) };
}

export type Counts = Record<(typeof OUTCOMES)[number] | 'running', number>;
const zero = (): Counts => ({ PASS: 0, MARGINAL: 0, FAIL: 0, ERROR: 0, ABORTED: 0, running: 0 });

// Cables by their latest complete verdict (the newest finished PASS, MARGINAL or FAIL run of the serial); `unjudged`:
// cables whose runs all ended ERROR or ABORTED (or are still running).
export type CableCounts = Record<'PASS' | 'MARGINAL' | 'FAIL' | 'unjudged', number>;
const zeroCables = (): CableCounts => ({ PASS: 0, MARGINAL: 0, FAIL: 0, unjudged: 0 });

// Cable yield: the share of judged cables whose latest complete verdict is PASS.
export function cableYieldOf(c: CableCounts): { judged: number; passRate: number | null } {
  const judged = c.PASS + c.MARGINAL + c.FAIL;
  return { judged, passRate: judged ? c.PASS / judged : null };
}

// The FEC margin a list shows for a run: the one "FEC margin" (the API's fecMarginDecades, summary.csv's
// fec_margin_decades, the certificate's); a deciding value in decades is shown beside it under its own name.
export function marginFigure(r: Pick<RunItem, 'fecMarginDecades'>): number | null {
  return r.fecMarginDecades;
}

// The worst-lane BER a list shows: the 95% upper bound over the graded soaks (the API's worstLaneBerUb95).
export function berBoundFigure(r: Pick<RunItem, 'worstLaneBerUb95'>): number | null {
  return r.worstLaneBerUb95;
}

// Which runs yield counts: real runs only, unless simulated runs are asked for (?simulated=1).
export interface YieldScope {
  simulated: boolean;
}

// The yield scope from ?simulated= (0 or 1); anything else is a BadQuery naming it.
export function parseScope(q: URLSearchParams): YieldScope {
  const v = q.get('simulated');
  if (v !== null && v !== '' && v !== '0' && v !== '1') throw new BadQuery('simulated: 0 or 1');
  return { simulated: v === '1' };
}

const LATEST_VERDICT = `ROW_NUMBER() OVER (PARTITION BY cable_serial ORDER BY started_at DESC, run_id DESC)`;

// The rows every count of qualified cables, yield and histogram reads: a judged qualification of a cable (the result's
// qualifies; rows before schema 5 were given it by the migration).
const QUALIFIES = 'qualifies = 1';
// The golden reference's runs check the bench: its serial is no cable of the part (rows before schema 5: by batch role).
const NOT_GOLDEN = "(batch_role IS NULL OR batch_role = 'cable') AND (run_role IS NULL OR run_role <> 'golden')";

// Cables (by latest complete verdict) and runs (by outcome) per part number and per vendor.
export async function partsAndVendors(
  db: SqlDb,
  scope: YieldScope = { simulated: false },
): Promise<{
  simulated: boolean;
  parts: { partNumber: string; vendor: string | null; counts: Counts; runs: Counts; cables: CableCounts }[];
  vendors: { vendor: string; counts: Counts; runs: Counts; cables: CableCounts }[];
}> {
  const sim = scope.simulated ? '' : 'AND simulated = 0';
  const [runRows, verdicts, serials] = await Promise.all([
    db.all<{ part_number: string; vendor: string | null; outcome: string | null; state: string; n: number | string }>(
      `SELECT part_number, vendor, outcome, state, COUNT(*) AS n FROM runs WHERE part_number IS NOT NULL ${sim} GROUP BY part_number, vendor, outcome, state`,
    ),
    db.all<{ part_number: string; vendor: string | null; outcome: string; n: number | string }>(
      `SELECT part_number, vendor, outcome, COUNT(*) AS n FROM (
         SELECT part_number, vendor, outcome, ${LATEST_VERDICT} AS k FROM runs
         WHERE state = 'finished' AND outcome IN ('PASS', 'MARGINAL', 'FAIL') AND ${QUALIFIES} AND cable_serial IS NOT NULL AND part_number IS NOT NULL ${sim}
       ) t WHERE k = 1 GROUP BY part_number, vendor, outcome`,
    ),
    db.all<{ part_number: string; vendor: string | null; n: number | string }>(
      `SELECT part_number, vendor, COUNT(DISTINCT cable_serial) AS n FROM runs WHERE part_number IS NOT NULL AND cable_serial IS NOT NULL AND ${NOT_GOLDEN} ${sim} GROUP BY part_number, vendor`,
    ),
  ]);
  type Entry = { runs: Counts; cables: CableCounts; serials: number };
  const parts = new Map<string, Entry & { partNumber: string; vendor: string | null }>();
  const vendors = new Map<string, Entry & { vendor: string }>();
  const at = (pn: string, vendor: string | null) => {
    const p = parts.get(pn) ?? { partNumber: pn, vendor, runs: zero(), cables: zeroCables(), serials: 0 };
    parts.set(pn, p);
    const v = vendors.get(vendor ?? '') ?? { vendor: vendor ?? '', runs: zero(), cables: zeroCables(), serials: 0 };
    vendors.set(vendor ?? '', v);
    return [p, v] as const;
  };
  for (const r of runRows) {
    const key = r.state === 'running' ? 'running' : (r.outcome as keyof Counts | null);
    if (!key || !(key in zero())) continue;
    for (const e of at(r.part_number, r.vendor)) e.runs[key] += Number(r.n);
  }
  for (const r of verdicts) for (const e of at(r.part_number, r.vendor)) e.cables[r.outcome as 'PASS' | 'MARGINAL' | 'FAIL'] += Number(r.n);
  for (const r of serials) for (const e of at(r.part_number, r.vendor)) e.serials += Number(r.n);
  const done = <T extends Entry>({ serials, ...e }: T) => {
    e.cables.unjudged = Math.max(0, serials - cableYieldOf(e.cables).judged);
    return { ...e, counts: e.runs };
  };
  const byName =
    <T>(k: (x: T) => string) =>
    (a: T, b: T) =>
      k(a).localeCompare(k(b));
  return {
    simulated: scope.simulated,
    parts: [...parts.values()].map(done).sort(byName((x) => x.partNumber)),
    vendors: [...vendors.values()].map(done).sort(byName((x) => x.vendor)),
  };
}

// Histogram bins: FEC margin in half decades; worst-lane BER bound per decade (log10).
export const MARGIN_BIN = 0.5;

export interface Distribution {
  bins: number[]; // bin centres (margin in decades; BER as log10)
  width: number;
  counts: Record<string, number[]>; // per lot: cables per bin
  zeroBer: Record<string, number>; // per lot: rows before schema 3 whose worst lane counted no error and have no bound
}

// One lot of a yield page: its cables by latest complete verdict and its runs by outcome.
export interface LotYield {
  lot: string;
  cables: CableCounts;
  runs: Counts;
  counts: Counts; // = runs (the field's name before cables were counted)
  yield: ReturnType<typeof cableYieldOf>;
}

// Yield of one part number or one vendor per lot (date code): each cable counted once, by its latest complete verdict,
// its runs beside it; the distributions of FEC margin and worst-lane BER over the cables' deciding runs.
export async function yieldPage(
  db: SqlDb,
  by: 'part' | 'vendor',
  key: string,
  scope: YieldScope = { simulated: false },
): Promise<{
  key: string;
  by: 'part' | 'vendor';
  simulated: boolean;
  lots: LotYield[];
  total: Counts;
  runs: Counts;
  cables: CableCounts;
  fecMargin: Distribution;
  worstLaneBer: Distribution;
  vendors: string[];
  parts: string[];
}> {
  const col = by === 'part' ? 'part_number' : 'vendor';
  const rows = await db.all(
    `SELECT run_id, cable_serial, lot, outcome, state, started_at, vendor, part_number, fec_margin_decades, worst_lane_ber, worst_lane_ber_ub95,
       headline_margin_decades, headline_ber_ub95, deciding_unit, deciding_value, qualifies, batch_role, run_role
     FROM runs WHERE ${col} = ? ${scope.simulated ? '' : 'AND simulated = 0'} ORDER BY started_at, run_id`,
    [key],
  );
  const lots = new Map<string, { runs: Counts; cables: CableCounts }>();
  const lotOf = (lot: string) => {
    const l = lots.get(lot) ?? { runs: zero(), cables: zeroCables() };
    lots.set(lot, l);
    return l;
  };
  const total = zero();
  const latest = new Map<string, Record<string, unknown>>(); // serial -> its newest judged run (rows come oldest first)
  const seen = new Map<string, string>(); // serial -> lot of its newest run
  for (const r of rows) {
    const lot = s(r['lot']) ?? '(none)';
    const k = r['state'] === 'running' ? 'running' : (s(r['outcome']) as keyof Counts | null);
    if (!k || !(k in total)) continue;
    lotOf(lot).runs[k]++;
    total[k]++;
    const serial = s(r['cable_serial']);
    if (!serial || r['batch_role'] === 'golden-first' || r['batch_role'] === 'golden-last' || r['run_role'] === 'golden') continue;
    seen.set(serial, lot);
    if (r['state'] === 'finished' && (k === 'PASS' || k === 'MARGINAL' || k === 'FAIL') && Number(r['qualifies']) === 1) latest.set(serial, r);
  }
  const cables = zeroCables();
  const fecByLot = new Map<string, number[]>();
  const berByLot = new Map<string, number[]>();
  const zeroBer: Record<string, number> = {};
  for (const [serial, lot] of seen) {
    const r = latest.get(serial);
    if (!r) {
      lotOf(lot).cables.unjudged++;
      cables.unjudged++;
      continue;
    }
    const it = item({ ...r, batch_name: null });
    const l = s(r['lot']) ?? '(none)';
    const o = it.outcome as 'PASS' | 'MARGINAL' | 'FAIL';
    lotOf(l).cables[o]++;
    cables[o]++;
    const m = marginFigure(it);
    if (m !== null && Number.isFinite(m)) push(fecByLot, l, m);
    const b = berBoundFigure(it);
    if (b !== null && b > 0) push(berByLot, l, Math.log10(b));
    else if (it.worstLaneBer === 0) zeroBer[l] = (zeroBer[l] ?? 0) + 1;
  }
  return {
    key,
    by,
    simulated: scope.simulated,
    lots: [...lots.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([lot, c]) => ({ lot, cables: c.cables, runs: c.runs, counts: c.runs, yield: cableYieldOf(c.cables) })),
    total,
    runs: total,
    cables,
    fecMargin: histogram(fecByLot, MARGIN_BIN, {}),
    worstLaneBer: histogram(berByLot, 1, zeroBer),
    vendors: [...new Set(rows.map((r) => s(r['vendor'])).filter((v): v is string => v !== null))].sort(),
    parts: [...new Set(rows.map((r) => s(r['part_number'])).filter((v): v is string => v !== null))].sort(),
  };
}

function push(m: Map<string, number[]>, k: string, v: number): void {
  const xs = m.get(k);
  if (xs) xs.push(v);
  else m.set(k, [v]);
}

// Bins of `width` covering every value (the last bin holds the maximum), labelled by their centres.
function histogram(byLot: Map<string, number[]>, width: number, zeroBer: Record<string, number>): Distribution {
  const all = [...byLot.values()].flat();
  if (!all.length) return { bins: [], width, counts: {}, zeroBer };
  const lo = Math.floor(all.reduce((a, b) => Math.min(a, b)) / width) * width;
  const hi = Math.floor(all.reduce((a, b) => Math.max(a, b)) / width) * width;
  const nBins = Math.min(200, Math.round((hi - lo) / width) + 1);
  const bins = [...Array(nBins).keys()].map((i) => +(lo + (i + 0.5) * width).toFixed(6));
  const counts: Record<string, number[]> = {};
  for (const [lot, xs] of byLot) {
    const c = new Array<number>(nBins).fill(0);
    for (const x of xs) c[Math.max(0, Math.min(nBins - 1, Math.floor((x - lo) / width + 1e-9)))]!++;
    counts[lot] = c;
  }
  return { bins, width, counts, zeroBer };
}

// The golden cables and their runs across batches, with their procedure's regression tolerances (the drift limits).
export async function goldenRuns(db: SqlDb): Promise<{ serial: string; runs: RunItem[]; tolerances: Record<string, number> | null }[]> {
  const serials = (await db.all<{ serial: string }>('SELECT DISTINCT serial FROM golden_cables ORDER BY serial LIMIT ?', [MAX_FACETS])).map((r) => r.serial);
  const out = [];
  for (const serial of serials) {
    const rows = await db.all(
      `SELECT ${LIST_COLUMNS}, p.regression
       FROM ${LIST_FROM} LEFT JOIN procedures p ON p.sha256 = r.procedure_sha256
       WHERE r.cable_serial = ? AND r.batch_role IN ('golden-first', 'golden-last') AND r.state = 'finished'
       ORDER BY r.started_at, r.run_id LIMIT ?`,
      [serial, 5000],
    );
    const reg = rows.map((r) => r['regression']).find((x) => typeof x === 'string');
    out.push({
      serial,
      runs: rows.map(item),
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
    remainingS: number | null; // the whole procedure's time left
    phaseRemainingS: number | null; // the current phase's
    status: unknown;
  }[]
> {
  const rows = await db.all(
    `SELECT r.run_id, r.label, r.station_id, r.simulated, r.started_at, r.batch_id, l.updated_at, l.phase, l.elapsed_s, l.remaining_s, l.phase_remaining_s, l.status
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
    phaseRemainingS: n(r['phase_remaining_s']),
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

// A batch (a box of cables run by `cablequal batch`) as the store has it, with its runs by outcome.
export interface BatchItem {
  id: string;
  name: string;
  controller: string | null;
  manifest: string | null;
  protocol: string | null;
  goldenSerial: string | null;
  cables: number | null;
  tested: number | null;
  driftOk: boolean | null;
  driftDetail: string | null;
  updatedAt: string | null;
  runs: Counts;
}

function batchItem(r: Record<string, unknown>): BatchItem {
  return {
    id: String(r['id']),
    name: String(r['name']),
    controller: s(r['controller']),
    manifest: s(r['manifest']),
    protocol: s(r['protocol_name']),
    goldenSerial: s(r['golden_serial']),
    cables: n(r['cables']),
    tested: n(r['tested']),
    driftOk: r['drift_ok'] === null || r['drift_ok'] === undefined ? null : Number(r['drift_ok']) === 1,
    driftDetail: s(r['drift_detail']),
    updatedAt: s(r['updated_at']),
    runs: zero(),
  };
}

async function withRunCounts(db: SqlDb, items: BatchItem[]): Promise<BatchItem[]> {
  if (!items.length) return items;
  const rows = await db.all<{ batch_id: string; outcome: string | null; state: string; n: number | string }>(
    // The box's cables: the golden reference's runs are not cables of the batch.
    `SELECT batch_id, outcome, state, COUNT(*) AS n FROM runs WHERE batch_id IN (${items.map(() => '?').join(', ')}) AND (batch_role IS NULL OR batch_role = 'cable') GROUP BY batch_id, outcome, state`,
    items.map((b) => b.id),
  );
  const byId = new Map(items.map((b) => [b.id, b]));
  for (const r of rows) {
    const k = r.state === 'running' ? 'running' : (r.outcome as keyof Counts | null);
    const b = byId.get(r.batch_id);
    if (b && k && k in b.runs) b.runs[k] += Number(r.n);
  }
  return items;
}

// Every batch, newest first (at most MAX_FACETS).
export async function batches(db: SqlDb): Promise<BatchItem[]> {
  const rows = await db.all('SELECT * FROM batches ORDER BY updated_at DESC, id LIMIT ?', [MAX_FACETS]);
  return withRunCounts(db, rows.map(batchItem));
}

// One batch and its runs (oldest first): the cables of the box with their outcomes.
export async function batchOf(db: SqlDb, id: string): Promise<{ batch: BatchItem | null; runs: RunItem[] }> {
  const [row] = await db.all('SELECT * FROM batches WHERE id = ?', [id]);
  const runs = await db.all(`SELECT ${LIST_COLUMNS} FROM ${LIST_FROM} WHERE r.batch_id = ? ORDER BY r.started_at, r.run_id LIMIT ?`, [id, 5000]);
  const [batch] = row ? await withRunCounts(db, [batchItem(row)]) : [];
  return { batch: batch ?? null, runs: runs.map(item) };
}

// The live status of one running run (null when it has none yet, or is not running).
export async function liveOf(
  db: SqlDb,
  runId: string,
): Promise<{
  phase: string | null;
  elapsedS: number | null;
  remainingS: number | null;
  phaseRemainingS: number | null;
  updatedAt: string | null;
  status: unknown;
} | null> {
  const [r] = await db.all('SELECT phase, elapsed_s, remaining_s, phase_remaining_s, updated_at, status FROM live WHERE run_id = ?', [runId]);
  if (!r) return null;
  return {
    phase: s(r['phase']),
    elapsedS: n(r['elapsed_s']),
    remainingS: n(r['remaining_s']),
    phaseRemainingS: n(r['phase_remaining_s']),
    updatedAt: s(r['updated_at']),
    status: typeof r['status'] === 'string' ? JSON.parse(r['status']) : null,
  };
}

// A run's state, cheaply (for a run page's stream: has it finished?).
export async function runState(db: SqlDb, runId: string): Promise<string | null> {
  const [r] = await db.all('SELECT state FROM runs WHERE run_id = ?', [runId]);
  return r ? String(r['state']) : null;
}
