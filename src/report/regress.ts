import { mkdir } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { UsageError } from '../domain/errors.js';
import type { RunRecord } from '../domain/record.js';
import { writeFileAtomic } from '../io/atomic-write.js';
import { fmtExp } from '../domain/number-format.js';
import { junitXml, type JunitSuite } from './junit.js';
import { resultOfRecord } from '../rules/result.js';
import { readRunRecord } from './record-io.js';

// How far a run of the reference cable may drift from its baseline before the lab itself is suspect.
export interface Tolerances {
  throughputPct: number;
  busbwPct: number;
  berDecades: number;
  tempC: number;
}

export const DEFAULT_TOLERANCES: Tolerances = { throughputPct: 5, busbwPct: 5, berDecades: 0.5, tempC: 5 };

// 'skipped' = the baseline lacks the metric (nothing to compare); 'missing' = the run lacks one the baseline has.
export type RegressionStatus = 'ok' | 'out-of-tolerance' | 'missing' | 'skipped';

export interface RegressionRow {
  metric: string;
  runId: string;
  baseline: number | null;
  value: number | null;
  delta: number | null; // in `deltaUnit`: % for throughput/busbw, decades for BER, °C for temperatures
  deltaUnit: '%' | 'decades' | '°C';
  tolerance: number;
  status: RegressionStatus;
}

// A run that cannot take part in a regression check, and what it lacks.
export interface IncompleteRun {
  role: 'baseline' | 'run';
  runId: string;
  missing: string;
}

export interface RegressionResult {
  baselineRunId: string;
  tolerances: Tolerances;
  rows: RegressionRow[];
  // Runs that are not complete (aborted, ERROR, phases cut short, no samples): nothing can be said about them.
  incomplete: IncompleteRun[];
  ok: boolean;
  warnings: string[];
}

// What keeps a run from being compared, or null when it is complete: every phase done and a cable verdict. An
// ABORTED baseline has no figures, and a run killed mid-soak has half of them; "nothing out of tolerance" between
// them would be an OK that says nothing, so a regression check needs complete runs on both sides.
export function incompleteness(r: RunRecord): string | null {
  if (r.outcome === 'ABORTED' || r.outcome === 'ERROR') {
    const why = r.reasons[0] ? `${r.reasons[0].rule}: ${r.reasons[0].message}` : 'no reason recorded';
    return `the run ended ${r.outcome} (${why}): it has no complete figures`;
  }
  const cut = r.phases.filter((p) => p.status !== 'done');
  if (cut.length) return `phase(s) not completed: ${cut.map((p) => `${p.name} ${p.status}`).join(', ')}`;
  if (!r.analysis) return 'no samples were analysed';
  return null;
}

type Kind = 'pct-throughput' | 'pct-busbw' | 'decades' | 'celsius';

interface Metric {
  name: string;
  kind: Kind;
  value: number | null;
}

// BER on a log axis: with no errors the 95% upper bound stands in (an honest "below this"), so clean lanes compare by exposure.
export function effectiveBer(l: { errors: number; ber: number; berUb95: number }): number {
  return l.errors > 0 ? l.ber : l.berUb95;
}

// The metrics a reference-cable run is compared on, named stably across runs.
export function regressionMetrics(r: RunRecord): Metric[] {
  const m: Metric[] = [];
  const bw = r.benchmarks.ibWriteBw;
  m.push({ name: 'ib_write_bw_sum_gbps', kind: 'pct-throughput', value: bw?.sumMedianGbps ?? null });
  for (const rail of bw?.perRail ?? []) m.push({ name: `ib_write_bw_rail${rail.rail}_gbps`, kind: 'pct-throughput', value: rail.medianGbps });
  m.push({ name: 'nccl_busbw_gbs', kind: 'pct-busbw', value: r.benchmarks.nccl?.busbwGBs ?? null });
  // Error rates and temperatures over the graded soaks only (src/rules/result.ts): a benchmark phase's seconds bound
  // nothing a soak does not, and are never quoted.
  const graded = new Set(resultOfRecord(r).gradedPhases);
  const soaks = (r.analysis?.perNodePhase ?? []).filter((p) => graded.has(p.phase));
  for (const p of soaks) {
    for (const l of p.laneStats) m.push({ name: `pre_fec_ber[${p.node}/${p.phase}/lane${l.lane}]`, kind: 'decades', value: effectiveBer(l) });
  }
  const temps = new Map<string, number>();
  for (const p of soaks) {
    if (p.nicTempMaxC !== null) temps.set(p.node, Math.max(temps.get(p.node) ?? -Infinity, p.nicTempMaxC));
  }
  for (const [node, t] of temps) m.push({ name: `nic_temp_max_c[${node}]`, kind: 'celsius', value: t });
  return m;
}

function compareOne(kind: Kind, base: number, value: number, tol: Tolerances): { delta: number; unit: RegressionRow['deltaUnit']; tolerance: number } {
  switch (kind) {
    case 'pct-throughput':
      return { delta: base === 0 ? (value === 0 ? 0 : Infinity) : ((value - base) / base) * 100, unit: '%', tolerance: tol.throughputPct };
    case 'pct-busbw':
      return { delta: base === 0 ? (value === 0 ? 0 : Infinity) : ((value - base) / base) * 100, unit: '%', tolerance: tol.busbwPct };
    case 'decades':
      return { delta: Math.log10(value) - Math.log10(base), unit: 'decades', tolerance: tol.berDecades };
    case 'celsius':
      return { delta: value - base, unit: '°C', tolerance: tol.tempC };
  }
}

const UNIT: Record<Kind, RegressionRow['deltaUnit']> = { 'pct-throughput': '%', 'pct-busbw': '%', decades: 'decades', celsius: '°C' };

// Pure comparison. Two-sided: a reference cable should reproduce, so a jump either way means the lab changed.
export function regressRecords(baseline: RunRecord, runs: RunRecord[], tolerances: Partial<Tolerances> = {}): RegressionResult {
  const tol = { ...DEFAULT_TOLERANCES, ...tolerances };
  const baseMetrics = regressionMetrics(baseline);
  const rows: RegressionRow[] = [];
  for (const run of runs) {
    const mine = new Map(regressionMetrics(run).map((m) => [m.name, m]));
    for (const b of baseMetrics) {
      const v = mine.get(b.name)?.value ?? null;
      const tolerance = compareOne(b.kind, 1, 1, tol).tolerance;
      const row: RegressionRow = {
        metric: b.name,
        runId: run.runId,
        baseline: b.value,
        value: v,
        delta: null,
        deltaUnit: UNIT[b.kind],
        tolerance,
        status: 'skipped',
      };
      if (b.value === null || !Number.isFinite(b.value) || (b.kind === 'decades' && b.value <= 0)) row.status = 'skipped';
      else if (v === null || !Number.isFinite(v) || (b.kind === 'decades' && v <= 0)) row.status = 'missing';
      else {
        const c = compareOne(b.kind, b.value, v, tol);
        row.delta = c.delta;
        row.status = Math.abs(c.delta) <= c.tolerance + 1e-12 ? 'ok' : 'out-of-tolerance';
      }
      rows.push(row);
    }
  }
  const warnings = runs
    .filter((r) => r.cable.serial && baseline.cable.serial && r.cable.serial !== baseline.cable.serial)
    .map((r) => `${r.runId}: cable serial ${r.cable.serial} differs from the baseline's ${baseline.cable.serial} (not the same reference cable?)`);
  const incomplete: IncompleteRun[] = [
    ...[baseline].flatMap((r) => (incompleteness(r) ? [{ role: 'baseline' as const, runId: r.runId, missing: incompleteness(r)! }] : [])),
    ...runs.flatMap((r) => (incompleteness(r) ? [{ role: 'run' as const, runId: r.runId, missing: incompleteness(r)! }] : [])),
  ];
  if (runs.length === 0) incomplete.push({ role: 'run', runId: '(none)', missing: 'no run to compare with the baseline' });
  return {
    baselineRunId: baseline.runId,
    tolerances: tol,
    rows,
    incomplete,
    ok: incomplete.length === 0 && rows.every((r) => r.status === 'ok' || r.status === 'skipped'),
    warnings,
  };
}

function fmtMetricValue(row: RegressionRow, v: number | null): string {
  if (v === null) return '—';
  return row.deltaUnit === 'decades' ? fmtExp(v, 2) : v.toFixed(2);
}

function fmtDelta(row: RegressionRow): string {
  if (row.delta === null) return '—';
  const sign = row.delta > 0 ? '+' : '';
  return `${sign}${Number.isFinite(row.delta) ? row.delta.toFixed(2) : String(row.delta)} ${row.deltaUnit}`;
}

// Plain-text table for the terminal: one line per metric per run, failures marked.
export function renderRegressionText(res: RegressionResult): string {
  const header = ['run', 'metric', 'baseline', 'value', 'delta', 'tolerance', 'status'];
  const body = res.rows.map((r) => [
    r.runId,
    r.metric,
    fmtMetricValue(r, r.baseline),
    fmtMetricValue(r, r.value),
    fmtDelta(r),
    `±${r.tolerance} ${r.deltaUnit}`,
    r.status === 'ok' ? 'ok' : r.status.toUpperCase(),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i >= 2 && i <= 5 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const bad = res.rows.filter((r) => r.status === 'out-of-tolerance' || r.status === 'missing').length;
  const verdict = res.incomplete.length
    ? `CANNOT COMPARE: ${res.incomplete.length} run(s) incomplete; a regression check needs complete runs on both sides`
    : res.ok
      ? `OK: ${res.rows.length} checks within tolerance`
      : `REGRESSION: ${bad} of ${res.rows.length} checks out of tolerance or missing`;
  return [
    `Regression against baseline ${res.baselineRunId}`,
    line(header),
    ...body.map(line),
    ...res.warnings.map((w) => `warning: ${w}`),
    ...res.incomplete.map((i) => `INCOMPLETE ${i.role} ${i.runId}: ${i.missing}`),
    verdict,
    '',
  ].join('\n');
}

// One testsuite per run, one testcase per metric; out-of-tolerance and missing metrics are failures.
export function regressionJunit(res: RegressionResult): string {
  const byRun = new Map<string, RegressionRow[]>();
  for (const r of res.rows) byRun.set(r.runId, [...(byRun.get(r.runId) ?? []), r]);
  const suites: JunitSuite[] = [...byRun.entries()].map(([runId, rows]) => ({
    name: `regression ${runId} vs ${res.baselineRunId}`,
    cases: rows.map((r) => ({
      classname: `cablequal.regress.${runId}`,
      name: r.metric,
      ...(r.status === 'out-of-tolerance'
        ? {
            failure: {
              type: 'out-of-tolerance',
              message: `${r.metric}: ${fmtMetricValue(r, r.value)} vs baseline ${fmtMetricValue(r, r.baseline)} (${fmtDelta(r)}, tolerance ±${r.tolerance} ${r.deltaUnit})`,
            },
          }
        : r.status === 'missing'
          ? { failure: { type: 'missing', message: `${r.metric}: no value in this run (baseline ${fmtMetricValue(r, r.baseline)})` } }
          : r.status === 'skipped'
            ? { skipped: `baseline has no value for ${r.metric}` }
            : {}),
    })),
  }));
  // An incomplete run is one failed case of its own (its metrics cannot be trusted either way).
  for (const i of res.incomplete) {
    suites.push({
      name: `regression ${i.runId} vs ${res.baselineRunId}`,
      cases: [
        {
          classname: `cablequal.regress.${i.runId}`,
          name: `complete ${i.role}`,
          failure: { type: 'incomplete', message: `${i.role} ${i.runId}: ${i.missing}` },
        },
      ],
    });
  }
  return junitXml('cablequal regression', suites);
}

export interface RegressOptions {
  baseline: string; // run dir
  runs: string[]; // run dirs
  tolerances?: Partial<Tolerances>;
  junitPath?: string; // where to write JUnit XML (atomically)
}

// Reads the runs' record.json, compares, and optionally writes JUnit XML; `text` is ready for the terminal. A run
// directory without a readable record (a killed run not graded yet) is an incomplete run.
export async function regress(opts: RegressOptions): Promise<RegressionResult & { text: string; paths: string[] }> {
  const baseline = await readRunRecord(opts.baseline).catch((e: unknown) => {
    throw e instanceof UsageError ? new UsageError(`--baseline: ${e.message}; a killed run needs \`cablequal grade ${opts.baseline}\` first`) : e;
  });
  const runs: RunRecord[] = [];
  const unread: IncompleteRun[] = [];
  for (const d of opts.runs) {
    try {
      runs.push(await readRunRecord(d));
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      unread.push({ role: 'run', runId: basename(d), missing: `${e.message}; a killed run needs \`cablequal grade ${d}\` first` });
    }
  }
  const compared = regressRecords(baseline, runs, opts.tolerances);
  const incomplete = [...compared.incomplete.filter((i) => !(unread.length && i.runId === '(none)')), ...unread];
  const res: RegressionResult = { ...compared, incomplete, ok: compared.ok && incomplete.length === 0 };
  const paths: string[] = [];
  if (opts.junitPath) {
    await mkdir(dirname(opts.junitPath), { recursive: true });
    paths.push(await writeFileAtomic(opts.junitPath, regressionJunit(res)));
  }
  return { ...res, text: renderRegressionText(res), paths };
}
