import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareRuns, byPartPath } from '../../src/report/compare.js';
import { CSV_COLUMNS } from '../../src/report/csv-columns.js';
import { toCsv, writeRunCsvs } from '../../src/report/csv.js';
import { errorRecord, failingCloneRecord, failingCloneTimeseries, passRecord } from '../fixtures/records/build.js';
import { makeRunDir, tempRoot } from '../fixtures/records/run-dir.js';
import { csvObjects, parseCsv } from '../helpers/csv.js';

const asObjects = csvObjects;

describe('toCsv', () => {
  it('quotes commas, quotes and newlines; empties null; CRLF records', () => {
    expect(
      toCsv(
        ['a', 'b', 'c'],
        [
          ['x,y', 'say "hi"', null],
          [1.5e-13, 'two\nlines', true],
        ],
      ),
    ).toBe('a,b,c\r\n"x,y","say ""hi""",\r\n1.5e-13,"two\nlines",true\r\n');
  });
});

describe('run CSVs', () => {
  it('summary.csv, lanes.csv, timeseries.csv and throughput.csv for the failing clone', async () => {
    const rec = failingCloneRecord();
    const dir = makeRunDir(tempRoot(), rec);
    const paths = await writeRunCsvs(rec, dir, { timeseries: failingCloneTimeseries() });
    expect(paths.map((p) => p.slice(dir.length + 1))).toEqual(['summary.csv', 'lanes.csv', 'timeseries.csv', 'throughput.csv']);

    const summary = asObjects(readFileSync(join(dir, 'summary.csv'), 'utf8'));
    expect(Object.keys(summary[0]!)).toEqual(CSV_COLUMNS['summary.csv'].map((c) => c.name));
    expect(summary[0]).toMatchObject({
      run_id: 'gen-fail-0001',
      vendor: 'OEM <clone> & "co"',
      part_number: 'ONT-DAC-QS56-0.5',
      lanes: '4',
      length_m_eeprom: '1',
      ib_write_bw_gbps: '185.1',
      nccl_busbw_gbs: '19.02',
      crc_errors: '317',
      post_fec_errors: '1184',
      link_down_events: '2',
      nic_temp_max_c: '81',
      outcome: 'FAIL',
    });
    // 402e6 errors over 186 s on one 53.125 Gb/s lane, sum of 4 lanes: (41+37+402e6+22) / (186 * 4 * 53.125e9)
    expect(Number(summary[0]!['pre_fec_ber_loaded'])).toBeCloseTo((41 + 37 + 402_000_000 + 22) / (186 * 4 * 53.125e9), 20);
    expect(summary[0]!['reasons']).toBe(
      'link-down: link went down on both nodes 186 s into soak-loaded; lane-ratio: lane 2 of spark-a has far more errors than the other lanes',
    );

    const lanes = asObjects(readFileSync(join(dir, 'lanes.csv'), 'utf8'));
    expect(lanes).toHaveLength(2 * 2 * 4); // node x phase x lane
    // Every row of every file says whether real hardware was measured, as summary.csv does.
    expect(new Set(lanes.map((l) => l['simulated']))).toEqual(new Set([String(rec.simulated)]));
    const worst = lanes.find((l) => l['node'] === 'spark-a' && l['phase'] === 'soak-loaded' && l['lane'] === '2')!;
    expect(worst['errors']).toBe('402000000');
    expect(Number(worst['rate_per_s'])).toBeCloseTo(402_000_000 / 186, 6);

    const ts = parseCsv(readFileSync(join(dir, 'timeseries.csv'), 'utf8'));
    expect(ts[0]).toEqual([
      't_s',
      'simulated',
      'node',
      'phase',
      'lane_0_errors_per_s',
      'lane_1_errors_per_s',
      'lane_2_errors_per_s',
      'lane_3_errors_per_s',
      'nic_temp_c',
    ]);
    expect(ts).toHaveLength(1 + 181 * 2);
    expect(ts[1]!.slice(0, 4)).toEqual(['0', String(rec.simulated), 'spark-a', 'benchmark']);
    expect(new Set(ts.slice(1).map((r) => r[1]))).toEqual(new Set([String(rec.simulated)]));
    const thr = parseCsv(readFileSync(join(dir, 'throughput.csv'), 'utf8'));
    // Each row says its run and phase (#31 item 7).
    expect(thr[0]).toEqual(['run_id', 't_s', 'phase', 'simulated', 'rail', 'gbps', 'direction']);
    // generated fixture: rail 0 at t=300 s is 92.4 + (50 % 3) x 0.1
    const phaseAt300 = rec.phases.filter((p) => p.startS <= 300).at(-1)!.name;
    expect(thr[1]!.slice(0, 5)).toEqual([rec.runId, '300', phaseAt300, String(rec.simulated), '0']);
    // Without binary noise: 92.4 + 0.2 is written 92.6 (#31 item 7).
    expect(thr[1]![5]).toBe('92.6');
    // The same run measured on real hardware says so too.
    const real = { ...rec, simulated: false };
    const realDir = makeRunDir(tempRoot(), real);
    await writeRunCsvs(real, realDir, { timeseries: failingCloneTimeseries() });
    for (const f of ['summary.csv', 'lanes.csv', 'timeseries.csv', 'throughput.csv'])
      expect(new Set(asObjects(readFileSync(join(realDir, f), 'utf8')).map((r) => r['simulated'])), f).toEqual(new Set(['false']));
  });

  it('an ERROR run without analysis leaves the error columns empty rather than 0', async () => {
    const rec = errorRecord();
    const dir = makeRunDir(tempRoot(), rec);
    const paths = await writeRunCsvs(rec, dir);
    expect(paths).toHaveLength(2);
    const [row] = asObjects(readFileSync(join(dir, 'summary.csv'), 'utf8'));
    expect(row).toMatchObject({ outcome: 'ERROR', crc_errors: '', pre_fec_ber_loaded: '', ib_write_bw_gbps: '184.9', vendor: '' });
    expect(readFileSync(join(dir, 'lanes.csv'), 'utf8')).toBe(CSV_COLUMNS['lanes.csv'].map((c) => c.name).join(',') + '\r\n');
  });
});

describe('a 2-lane cable', () => {
  it('timeseries.csv leaves the lanes it does not have empty, not 0 (#31 item 7)', async () => {
    const base = failingCloneRecord();
    const rec = { ...base, cable: { ...base.cable, lanes: 2 } };
    const dir = makeRunDir(tempRoot(), rec);
    await writeRunCsvs(rec, dir, { timeseries: failingCloneTimeseries() });
    const rows = asObjects(readFileSync(join(dir, 'timeseries.csv'), 'utf8'));
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect([r['lane_2_errors_per_s'], r['lane_3_errors_per_s']]).toEqual(['', '']);
      expect(r['lane_0_errors_per_s']).not.toBe('');
    }
  });
});

describe('compareRuns', () => {
  it('one row per run, per-part summary beside it, non-run dirs skipped with a warning', async () => {
    const root = tempRoot();
    const pass2 = { ...passRecord(), runId: 'gen-pass-0002', startedAt: '2026-05-05T09:00:00.000Z' };
    const dirs = [makeRunDir(root, failingCloneRecord()), makeRunDir(root, passRecord()), makeRunDir(root, pass2), makeRunDir(root, errorRecord())];
    const junk = join(root, 'not-a-run');
    mkdirSync(junk);
    const broken = join(root, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'record.json'), '{"schema":"something-else"}');
    const out = join(root, 'out', 'compare.csv');
    const res = await compareRuns([...dirs, junk, broken], out);
    expect(res.paths).toEqual([out, byPartPath(out)]);
    expect(byPartPath(out)).toBe(join(root, 'out', 'compare-by-part.csv'));
    expect(res.warnings).toEqual([
      `skipped ${junk}: ${join(junk, 'record.json')}: no record.json (not a run directory)`,
      `skipped ${broken}: ${join(broken, 'record.json')}: not a cablequal run record (schema cablequal.run/1)`,
    ]);
    const rows = asObjects(readFileSync(out, 'utf8'));
    // by started_at, then run_id: three runs share 2026-05-04T09:00, pass-0002 is a day later
    expect(rows.map((r) => r['run_id'])).toEqual(['gen-error-0001', 'gen-fail-0001', 'gen-pass-0001', 'gen-pass-0002']);
    expect(rows.map((r) => r['outcome'])).toEqual(['ERROR', 'FAIL', 'PASS', 'PASS']);

    const parts = asObjects(readFileSync(byPartPath(out), 'utf8'));
    // Per part, the loaded soak's BER 95% upper bound (#31 item 7): a zero-error soak bounds the BER, it is not 0.
    const bound = String(
      Math.max(
        ...passRecord()
          .analysis!.perNodePhase.filter((p) => p.phase === 'soak-loaded')
          .map((p) => p.preFecBerUb95),
      ),
    );
    expect(Number(bound)).toBeGreaterThan(0);
    expect(parts).toEqual([
      {
        part_number: '',
        vendor: '',
        runs: '1',
        judged_runs: '0',
        pass: '0',
        marginal: '0',
        fail: '0',
        not_judged: '1',
        pass_rate: '',
        median_pre_fec_ber_loaded: '',
        worst_pre_fec_ber_loaded: '',
        setup_checks: '0',
        golden_runs: '0',
      },
      {
        part_number: 'NJAAKK0006',
        vendor: 'Amphenol',
        runs: '2',
        judged_runs: '2',
        pass: '2',
        marginal: '0',
        fail: '0',
        not_judged: '0',
        pass_rate: '1',
        median_pre_fec_ber_loaded: bound,
        worst_pre_fec_ber_loaded: bound,
        setup_checks: '0',
        golden_runs: '0',
      },
      expect.objectContaining({ part_number: 'ONT-DAC-QS56-0.5', runs: '1', judged_runs: '1', fail: '1', pass_rate: '0' }),
    ]);
  });
});
