import { stringify } from 'csv-stringify/sync';
import { join } from 'node:path';
import type { NodeRecord, RunRecord } from '../domain/record.js';
import { writeFileAtomic } from '../io/atomic-write.js';
import { summarise, trainedMode } from './certificate-content.js';
import { resultOfRecord } from '../rules/result.js';
import { CSV_COLUMNS } from './csv-columns.js';
import { escapeControls } from './escape.js';
import type { RunTimeseries } from './series.js';

export type CsvCell = string | number | boolean | null | undefined;

// Text a spreadsheet would run as a formula (OWASP "CSV injection"): a cell starting with = + - @ TAB or CR.
const FORMULA_START = /^[=+\-@\t\r]/;

// One cell's text. Labels, serials, vendor names and reasons come from operators and cable EEPROMs: a text cell
// that starts like a formula (`=HYPERLINK(...)`) gets a leading single quote (shown as text, never evaluated; the
// cell is quoted too). Numbers are written as numbers, never prefixed: -3.2 in a numeric column stays -3.2, while
// the text "-3.2" (a label, say) becomes '-3.2 — the column's type decides, not the look of the value. A control
// character (ESC, BEL, NUL; tab, LF and CR aside) is written as \xHH, as the certificate's HTML shows it.
export function csvCell(v: CsvCell): string {
  if (v === null || v === undefined || (typeof v === 'number' && !Number.isFinite(v))) return '';
  if (typeof v === 'number') return numberText(v);
  if (typeof v !== 'string') return String(v);
  // Control characters as the HTML shows them (\x1b, never a raw ESC a terminal would run), then the formula guard.
  const text = escapeControls(v);
  return FORMULA_START.test(text) ? `'${text}` : text;
}

// A number without binary noise: a sum of decimals (31.502000000000002) is written as the decimal it stands for
// (31.502) when 15 significant digits give a short one; any other value keeps every digit (a BER bound's 17).
export function numberText(v: number): string {
  const short = Number(v.toPrecision(15));
  return short !== v && Number(short.toPrecision(12)) === short ? String(short) : String(v);
}

// RFC 4180: CRLF line ends, quotes only where needed, header row first; null/undefined become empty cells. Every
// CSV cablequal writes goes through here (summary, lanes, timeseries, throughput, compare, batch).
export function toCsv(header: string[], rows: CsvCell[][]): string {
  const cells = [header, ...rows].map((r) => r.map(csvCell));
  // csv-stringify only quotes the record delimiter itself; a bare LF inside a field must be quoted too (RFC 4180);
  // a neutralised formula is quoted as OWASP advises.
  return stringify(cells, { record_delimiter: 'windows', quoted_match: [/[\r\n]/, /^'[=+\-@\t\r]/] });
}

// One node fact of every node, in node order joined by " / " (empty where unknown); null when no node knows it.
function perNode(record: RunRecord, get: (n: NodeRecord) => string | null | undefined): string | null {
  const values = record.nodes.map((n) => get(n) ?? '');
  return values.some((v) => v !== '') ? values.join(' / ') : null;
}

// The summary/compare row of one run, in CSV_COLUMNS['compare.csv'] order.
export function runRow(record: RunRecord): CsvCell[] {
  const s = summarise(record);
  const result = resultOfRecord(record);
  const length = record.cable.ends.find((e) => e.identity?.lengthM != null)?.identity?.lengthM ?? null;
  const byName: Record<string, CsvCell> = {
    run_id: record.runId,
    started_at: record.startedAt,
    label: record.label,
    simulated: record.simulated,
    vendor: record.cable.vendor,
    part_number: record.cable.partNumber,
    serial: record.cable.serial,
    family: record.cable.family,
    lanes: record.cable.lanes,
    trained_mode: trainedMode(record.cable.lanes, record.cable.trainedSpeedMbps ?? null),
    length_m_eeprom: length,
    ib_write_bw_gbps: record.benchmarks.ibWriteBw?.sumMedianGbps ?? null,
    nccl_busbw_gbs: record.benchmarks.nccl?.busbwGBs ?? null,
    pre_fec_ber_idle: s.preFecBerIdle,
    pre_fec_ber_loaded: s.preFecBerLoaded,
    pre_fec_ber_loaded_ub95: s.preFecBerLoadedUb95,
    fec_margin_decades: s.fecMarginDecades,
    max_lane_ratio: s.maxLaneRatio,
    crc_errors: result.crcErrors,
    post_fec_errors: result.postFecErrors,
    link_down_events: result.linkDownEvents,
    phy_recoveries: result.recoveries,
    nic_temp_max_c: s.nicTempMaxC,
    nodes: record.nodes.map((n) => n.name).join(' / '),
    product_name: perNode(record, (n) => n.dmi?.productName),
    bios_version: perNode(record, (n) => n.dmi?.biosVersion),
    os_release: perNode(record, (n) => n.osRelease),
    kernel: perNode(record, (n) => n.kernel),
    nic_driver: perNode(record, (n) => n.driver),
    nic_firmware: perNode(record, (n) => n.firmware),
    perftest_version: perNode(record, (n) => n.perftestVersion),
    gpu_driver_version: perNode(record, (n) => n.gpuDriverVersion),
    cuda_version: perNode(record, (n) => n.cudaVersion),
    openmpi_version: perNode(record, (n) => n.openMpiVersion),
    nccl_version: perNode(record, (n) => n.ncclVersion),
    nccl_tests_version: perNode(record, (n) => n.ncclTestsVersion),
    outcome: record.outcome,
    run_kind: record.kind ?? null,
    reasons: record.reasons.map((r) => `${r.rule}: ${r.message}`).join('; '),
    fec_margin_node: result.fecMargin?.node ?? null,
    fec_margin_phase: result.fecMargin?.phase ?? null,
    fec_margin_lane: result.fecMargin?.lane ?? null,
    loaded_fec_margin_decades: result.headlineMargin?.value ?? null,
    worst_lane_ber_ub95: result.worstLaneBer?.value ?? null,
    qualifies: result.qualifies,
    role: result.role,
    deciding_rule: result.deciding?.rule ?? null,
    deciding_value: typeof result.deciding?.value === 'number' ? result.deciding.value : null,
    deciding_unit: result.deciding?.unit ?? null,
  };
  return CSV_COLUMNS['compare.csv'].map((c) => byName[c.name]);
}

// The phase under way at tS (the last one started by then).
function phaseAt(record: RunRecord, tS: number): string | null {
  return record.phases.filter((p) => p.startS <= tS).at(-1)?.name ?? null;
}

const names = (f: keyof typeof CSV_COLUMNS) => CSV_COLUMNS[f].map((c) => c.name);

export interface CsvWriterExtras {
  timeseries?: RunTimeseries;
}

// summary.csv, lanes.csv, and (when series are given) timeseries.csv and throughput.csv, each written atomically.
export async function writeRunCsvs(record: RunRecord, dir: string, extras: CsvWriterExtras = {}): Promise<string[]> {
  const written: string[] = [];
  written.push(await writeFileAtomic(join(dir, 'summary.csv'), toCsv(names('summary.csv'), [runRow(record)])));

  const laneRows = (record.analysis?.perNodePhase ?? []).flatMap((p) =>
    p.laneStats.map((l) => [record.runId, record.simulated, l.node, l.phase, l.lane, l.seconds, l.errors, l.ratePerS, l.ber, l.berUb95] as CsvCell[]),
  );
  written.push(await writeFileAtomic(join(dir, 'lanes.csv'), toCsv(names('lanes.csv'), laneRows)));

  const ts = extras.timeseries;
  if (ts) {
    const lanes = Math.max(0, ...ts.points.map((p) => p.laneRates.length));
    // One column per extra reading the points hold (src/probes/readings.ts), in id order.
    const extra = [...new Set(ts.points.flatMap((p) => Object.keys(p.readings ?? {})))].sort();
    const header = [
      't_s',
      'simulated',
      'node',
      'phase',
      ...[...Array(lanes).keys()].map((l) => `lane_${l}_errors_per_s`),
      'nic_temp_c',
      ...extra.map((id) => id.replace(/[^A-Za-z0-9]+/g, '_')),
    ];
    const cell = (v: unknown): CsvCell => (typeof v === 'number' && Number.isFinite(v) ? v : null);
    const rows = ts.points.map(
      (p) =>
        [
          p.tS,
          record.simulated,
          p.node,
          p.phase,
          // A lane the cable does not have (a 2-lane cable read through 4-lane counters) is empty, not 0.
          ...[...Array(lanes).keys()].map((l) => (l < (record.cable.lanes ?? Infinity) ? p.laneRates[l] : null)),
          p.nicTempC,
          ...extra.map((id) => cell(p.readings?.[id])),
        ] as CsvCell[],
    );
    written.push(await writeFileAtomic(join(dir, 'timeseries.csv'), toCsv(header, rows)));
    written.push(
      await writeFileAtomic(
        join(dir, 'throughput.csv'),
        toCsv(
          names('throughput.csv'),
          ts.throughput.map((t) => [record.runId, t.tS, phaseAt(record, t.tS), record.simulated, t.rail, t.gbps, t.direction ?? null]),
        ),
      ),
    );
  }
  return written;
}
