// A finished run record as the store's rows: the run, its cable and part, its procedure and station. Pure, and
// defensive: records from older and newer cablequal versions carry fields this one does not know, or lack optional ones.
// Nothing here decides a verdict: outcome and reasons are the record's (built from the journal).
import { createHash } from 'node:crypto';
import type { SqlValue } from './sql.js';
import type { RunRecord } from '../domain/record.js';
import type { RunResult } from '../domain/result.js';
import { resultOfRecord } from '../rules/result.js';

// The columns of `runs`, in the order of RUN_COLUMNS.
export type RunRow = Record<(typeof RUN_COLUMNS)[number], SqlValue>;

export const RUN_COLUMNS = [
  'run_id',
  'state',
  'outcome',
  'label',
  'cable_serial',
  'part_number',
  'vendor',
  'lot',
  'simulated',
  'scenario',
  'procedure_sha256',
  'protocol_name',
  'station_id',
  'controller',
  'batch_id',
  'batch_role',
  'started_at',
  'ended_at',
  'decided_at_s',
  'fec_margin_decades',
  'worst_lane_ber',
  'worst_lane_ber_ub95',
  'max_lane_ratio',
  'pre_fec_ber_loaded',
  'crc_errors',
  'post_fec_errors',
  'link_down_events',
  'nic_temp_max_c',
  'ib_write_bw_gbps',
  'nccl_busbw_gbs',
  'main_reason',
  'run_dir',
  'certificate_file',
  'certificate_sha256',
  'signer_fingerprint',
  'content_sha256',
  'headline_margin_decades',
  'headline_ber_ub95',
  'deciding_rule',
  'deciding_value',
  'deciding_unit',
  'main_code',
  'run_kind',
  // Schema version 5 on (the run's result, src/rules/result.ts):
  'qualifies',
  'run_role',
  'fec_margin_node',
  'fec_margin_phase',
  'fec_margin_lane',
  'headline_phase',
  'deciding_node',
  'deciding_phase',
  'deciding_lane',
  'deciding_at_s',
  // Schema version 7 on: what the row was checked against (JournalCheck).
  'journal_check',
] as const;

// The columns of `run_details`: a run's bulky JSON, kept apart from the narrow `runs` row.
export const DETAIL_COLUMNS = ['reasons', 'measurements', 'nodes', 'headline', 'cable_ends', 'phases', 'conditions', 'benchmarks', 'result'] as const;
export type DetailRow = Record<(typeof DETAIL_COLUMNS)[number], string>;

export interface CableRow {
  serial: string;
  part_number: string | null;
  vendor: string | null;
  vendor_oui: string | null;
  vendor_rev: string | null;
  date_code: string | null;
  lot: string | null;
  length_m: number | null;
  family: string | null;
}

export interface StationRow {
  id: string;
  controller: string | null;
  node_a: string;
  node_b: string;
}

// Where a run was made and what it belongs to; not in the record (the journal does not know its controller).
export interface RunPlace {
  runDir: string | null;
  controller: string | null;
  batchId?: string | null;
  batchRole?: 'cable' | 'golden-first' | 'golden-last' | null;
  certificate?: { file: string; sha256: string; signer: string | null } | null;
  regression?: unknown; // the protocol's regression tolerances (golden drift limits), when known
  journalCheck?: JournalCheck | null;
}

// What a row's record was checked against (#32): 'run', written by the run that made it from its own journal;
// imported by `db import` from a journal re-graded, whose signatures were 'signed' (every line, the trusted lab key's),
// 'partial' (signed up to where the run stopped), 'unverifiable' (signed, no trusted key to check them with),
// 'unsigned' (a run without a lab key) or 'old' (before journals were signed); 'record-only': a record.json with no
// journal beside it, taken as it stands, unchecked, so never counted as a qualified cable. Null: rows before version 7.
export type JournalCheck = 'run' | 'signed' | 'partial' | 'unverifiable' | 'unsigned' | 'old' | 'record-only';

export interface RowsOfRun {
  run: RunRow;
  details: DetailRow;
  cable: CableRow | null;
  part: { part_number: string; vendor: string | null; family: string | null; lanes: number | null } | null;
  procedure: { sha256: string; name: string; file: string | null; regression: string | null } | null;
  station: StationRow | null;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

// The station: the controller and the two nodes it drove (in the run's order).
export function stationOf(controller: string | null, nodes: unknown[]): StationRow | null {
  const names = nodes.map((n) => str(obj(n)?.['host']) ?? str(obj(n)?.['name'])).filter((n): n is string => n !== null);
  if (names.length < 2) return null;
  return { id: `${controller ?? '?'} ${names[0]}+${names[1]}`, controller, node_a: names[0]!, node_b: names[1]! };
}

// The cable as its EEPROM states it, from the first end that was read; lot is the EEPROM's date code field
// (SFF-8636 bytes 212-219 / CMIS 182-189: YYMMDD plus an optional 2-character lot code).
export function cableOf(record: Obj): CableRow | null {
  const cable = obj(record['cable']);
  const serial = str(cable?.['serial']);
  if (!cable || !serial) return null;
  const id =
    arr(cable['ends'])
      .map((e) => obj(obj(e)?.['identity']))
      .find((x) => x !== null) ?? null;
  const dateCode = str(id?.['dateCode'])?.trim() ?? null;
  return {
    serial,
    part_number: str(cable['partNumber']),
    vendor: str(cable['vendor']),
    vendor_oui: str(id?.['vendorOui']),
    vendor_rev: str(id?.['vendorRev']),
    date_code: dateCode,
    lot: dateCode,
    length_m: num(id?.['lengthM']),
    family: str(cable['family']),
  };
}

// Every row a finished record gives, with the run's place (station, batch, certificate).
export function rowsOfRecord(value: unknown, place: RunPlace): RowsOfRun {
  const record = obj(value);
  const runId = str(record?.['runId']);
  if (!record || !runId) throw new Error('not a run record (no runId)');
  const cable = cableOf(record);
  const cableObj = obj(record['cable']);
  const protocol = obj(record['protocol']);
  const analysis = obj(record['analysis']);
  const perPhase = arr(analysis?.['perNodePhase'])
    .map(obj)
    .filter((p): p is Obj => p !== null);
  const benchmarks = obj(record['benchmarks']);
  const result = resultOfValue(record);
  const reasons = arr(record['reasons']);
  const nodes = arr(record['nodes']);
  const station = stationOf(place.controller, nodes);
  const run: RunRow = {
    run_id: runId,
    state: 'finished',
    outcome: str(record['outcome']),
    label: str(record['label']),
    cable_serial: cable?.serial ?? null,
    part_number: cable?.part_number ?? null,
    vendor: cable?.vendor ?? null,
    lot: cable?.lot ?? null,
    simulated: record['simulated'] === true ? 1 : 0,
    scenario: str(record['scenario']),
    procedure_sha256: str(protocol?.['sha256']),
    protocol_name: str(protocol?.['name']),
    station_id: station?.id ?? null,
    controller: place.controller,
    batch_id: place.batchId ?? null,
    batch_role: place.batchRole ?? null,
    started_at: str(record['startedAt']),
    ended_at: str(record['endedAt']),
    decided_at_s: num(record['decidedAtS']),
    // Every figure is the result's (src/rules/result.ts): over the graded soaks, under its one name.
    fec_margin_decades: result?.fecMargin?.value ?? null,
    worst_lane_ber: result?.worstLaneBer?.ber ?? null,
    worst_lane_ber_ub95: result?.worstLaneBer?.value ?? null,
    max_lane_ratio: result?.laneRatio?.value ?? null,
    pre_fec_ber_loaded: result?.loadedSoak?.preFecBer ?? null,
    crc_errors: result?.crcErrors ?? null,
    post_fec_errors: result?.postFecErrors ?? null,
    link_down_events: result?.linkDownEvents ?? null,
    nic_temp_max_c: result?.nicTempMaxC ?? null,
    ib_write_bw_gbps: result?.ibWriteBwGbps ?? null,
    nccl_busbw_gbs: result?.ncclBusbwGBs ?? null,
    main_reason: result?.deciding?.message ?? str(obj(reasons[0])?.['message']),
    run_dir: place.runDir,
    certificate_file: place.certificate?.file ?? null,
    certificate_sha256: place.certificate?.sha256 ?? null,
    signer_fingerprint: place.certificate?.signer ?? null,
    content_sha256: null,
    headline_margin_decades: result?.headlineMargin?.value ?? null,
    headline_ber_ub95: result?.headlineWorstLaneBer?.value ?? null,
    deciding_rule: result?.deciding?.rule ?? null,
    deciding_value: typeof result?.deciding?.value === 'number' ? result.deciding.value : null,
    deciding_unit: result?.deciding?.unit ?? null,
    main_code: result ? decisionCode(result.outcome, (result.deciding ?? {}) as Obj) : str(record['outcome']),
    // qualification, setup-check or preflight (src/rules/result.ts); what the record stated for records before results.
    run_kind: result?.kind ?? str(record['kind']),
    // A record nothing could check is shown, never counted as a qualified cable.
    qualifies: result
      ? result.qualifies && place.batchRole !== 'golden-first' && place.batchRole !== 'golden-last' && place.journalCheck !== 'record-only'
        ? 1
        : 0
      : null,
    run_role: result ? (place.batchRole === 'golden-first' || place.batchRole === 'golden-last' ? 'golden' : result.role) : null,
    fec_margin_node: result?.fecMargin?.node ?? null,
    fec_margin_phase: result?.fecMargin?.phase ?? null,
    fec_margin_lane: result?.fecMargin?.lane ?? null,
    headline_phase: result?.headlinePhase ?? null,
    deciding_node: result?.deciding?.node ?? null,
    deciding_phase: result?.deciding?.phase ?? null,
    deciding_lane: result?.deciding?.lane ?? null,
    deciding_at_s: result?.deciding?.atS ?? null,
    journal_check: place.journalCheck ?? null,
  };
  const details: DetailRow = {
    reasons: JSON.stringify(reasons),
    measurements: JSON.stringify(arr(record['measurements'])),
    nodes: JSON.stringify(nodes),
    headline: JSON.stringify(obj(record['headline'])),
    cable_ends: JSON.stringify(arr(cableObj?.['ends'])),
    phases: JSON.stringify(arr(record['phases'])),
    conditions: JSON.stringify(perPhase.map(conditionOf)),
    benchmarks: JSON.stringify(benchmarks),
    result: JSON.stringify(result),
  };
  run.content_sha256 = contentHash(run, details);
  return {
    run,
    details,
    cable,
    part: cable?.part_number ? { part_number: cable.part_number, vendor: cable.vendor, family: cable.family, lanes: num(cableObj?.['lanes']) } : null,
    procedure:
      typeof run.procedure_sha256 === 'string'
        ? {
            sha256: run.procedure_sha256,
            name: String(run.protocol_name ?? '?'),
            file: str(protocol?.['file']),
            regression: place.regression === undefined ? null : JSON.stringify(place.regression),
          }
        : null,
    station,
  };
}

// The result of a record read from anywhere (src/rules/result.ts); null when the value is not a record it can read.
function resultOfValue(record: Obj): RunResult | null {
  try {
    return resultOfRecord(record as unknown as RunRecord);
  } catch {
    return null;
  }
}

const UNIT_SHORT: Record<string, string> = { decades: 'dec', errors: 'err', events: 'ev' };

// The short code of a deciding reason: outcome, rule, node, lane, value ("FAIL fec-window spark-b L2 0.84 dec").
export function decisionCode(outcome: string, r: Obj): string {
  const value = num(r['value']);
  const unit = str(r['unit']);
  const shown =
    value === null
      ? null
      : unit === 'x'
        ? `${value >= 100 ? value.toFixed(0) : value.toPrecision(3)}x`
        : `${Number.isInteger(value) ? String(value) : Math.abs(value) >= 100 ? value.toFixed(1) : value.toFixed(2)}${unit ? ` ${UNIT_SHORT[unit] ?? unit}` : ''}`;
  const lane = num(r['lane']);
  return [outcome, str(r['rule']), str(r['node']), lane === null ? null : `L${lane}`, shown].filter((x) => x !== null).join(' ');
}

// What a node-phase ran under (the run page's conditions table): seconds, NIC temperature, GPU load.
function conditionOf(p: Obj): Obj {
  const keys = ['node', 'phase', 'seconds', 'lanes', 'nicTempMeanC', 'nicTempMaxC', 'gpuUtilMeanPct', 'gpuTempMaxC'];
  return Object.fromEntries(keys.map((k) => [k, p[k] ?? null]));
}

const SINCE_V5 = new Set<string>(RUN_COLUMNS.slice(RUN_COLUMNS.indexOf('qualifies')));

// What makes a row's content: everything but where it was imported from (controller, station: kept from the first
// writer) and the hash itself. The same run imported twice hashes the same and its row is left untouched.
export function contentHash(run: RunRow, details: DetailRow): string {
  const h = createHash('sha256');
  for (const c of RUN_COLUMNS) {
    if (c === 'content_sha256' || c === 'controller' || c === 'station_id') continue;
    // A column added since rows were first hashed counts only when it holds something: an older record hashes as it did.
    if ((c === 'run_kind' || SINCE_V5.has(c)) && run[c] === null) continue;
    h.update(`${c}=${JSON.stringify(run[c])}\n`);
  }
  for (const c of DETAIL_COLUMNS) if (c !== 'result' || details[c] !== 'null') h.update(`${c}=${details[c]}\n`);
  return h.digest('hex');
}
