import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/domain/record.js';
import { junitXml } from '../../src/report/junit.js';
import { DEFAULT_TOLERANCES, regress, regressRecords, renderRegressionText } from '../../src/report/regress.js';
import { errorRecord, nodePhase, passRecord } from '../fixtures/records/build.js';
import { makeRunDir, tempRoot } from '../fixtures/records/run-dir.js';

// GENERATED variants of the reference-cable PASS record.
function withSum(r: RunRecord, sum: number, runId: string): RunRecord {
  const copy = structuredClone(r);
  copy.runId = runId;
  copy.benchmarks.ibWriteBw!.sumMedianGbps = sum;
  return copy;
}

function drifted(): RunRecord {
  const r = withSum(passRecord(), 170.0, 'gen-ref-drift');
  const per = r.analysis!.perNodePhase;
  const i = per.findIndex((p) => p.node === 'spark-a' && p.phase === 'soak-loaded');
  per[i] = nodePhase('spark-a', 'soak-loaded', 3600, [0, 100, 0, 0], { nicTempMaxC: 78 });
  const j = per.findIndex((p) => p.node === 'spark-b' && p.phase === 'soak-loaded');
  per[j] = { ...per[j]!, nicTempMaxC: 84 };
  return r;
}

describe('regressRecords', () => {
  const base = passRecord();
  const res = regressRecords(base, [withSum(base, 180.0, 'gen-ref-ok'), drifted()]);
  const row = (runId: string, metric: string) => res.rows.find((r) => r.runId === runId && r.metric === metric)!;

  it('checks throughput, busbw, every lane BER and NIC temperatures per run', () => {
    // 1 sum + 2 rails + busbw + 2 nodes x 2 phases x 4 lanes + 2 temperatures = 22 per run
    expect(res.rows.filter((r) => r.runId === 'gen-ref-ok')).toHaveLength(22);
    expect(res.tolerances).toEqual(DEFAULT_TOLERANCES);
  });

  it('a 2.9% throughput drop is within 5%; an 8.3% drop is not', () => {
    expect(row('gen-ref-ok', 'ib_write_bw_sum_gbps')).toMatchObject({ baseline: 185.3, value: 180, status: 'ok' });
    expect(row('gen-ref-ok', 'ib_write_bw_sum_gbps').delta).toBeCloseTo(((180 - 185.3) / 185.3) * 100, 9);
    const d = row('gen-ref-drift', 'ib_write_bw_sum_gbps');
    expect(d.status).toBe('out-of-tolerance');
    expect(d.delta).toBeCloseTo(-8.257, 3);
  });

  it('compares BER in decades, a zero-error lane by its 95% bound', () => {
    // baseline: 0 errors in 3600 s -> bound 3 / (3600 x 53.125e9); run: 100 errors -> 100 / (3600 x 53.125e9): log10(100/3) decades
    const b = row('gen-ref-drift', 'pre_fec_ber[spark-a/soak-loaded/lane1]');
    expect(b.baseline).toBeCloseTo(3 / (3600 * 53.125e9), 25);
    expect(b.delta).toBeCloseTo(Math.log10(100 / 3), 9);
    expect(b.status).toBe('out-of-tolerance');
    expect(row('gen-ref-drift', 'pre_fec_ber[spark-a/soak-loaded/lane0]')).toMatchObject({ delta: 0, status: 'ok' });
  });

  it('temperature +6 °C is out of the 5 °C tolerance; the ok run passes overall, the drifted one does not', () => {
    expect(row('gen-ref-drift', 'nic_temp_max_c[spark-b]')).toMatchObject({ baseline: 78, value: 84, delta: 6, status: 'out-of-tolerance' });
    expect(regressRecords(base, [withSum(base, 180.0, 'gen-ref-ok')]).ok).toBe(true);
    expect(res.ok).toBe(false);
  });

  it('a run without benchmarks or analysis reports the metrics as missing', () => {
    const e = regressRecords(base, [{ ...errorRecord(), benchmarks: { loopback: [], ibWriteBw: null, nccl: null } }]);
    expect(e.ok).toBe(false);
    expect(e.rows.every((r) => r.status === 'missing')).toBe(true);
    expect(e.warnings).toEqual([]);
  });

  it('renders a text table naming each out-of-tolerance metric', () => {
    const text = renderRegressionText(res);
    expect(text).toContain('Regression against baseline gen-pass-0001');
    expect(text).toMatch(/gen-ref-drift\s+ib_write_bw_sum_gbps\s+185\.30\s+170\.00\s+-8\.26 %\s+±5 %\s+OUT-OF-TOLERANCE/);
    expect(text.trimEnd().split('\n').at(-1)).toBe('REGRESSION: 3 of 44 checks out of tolerance or missing');
  });
});

describe('regress (files) and JUnit XML', () => {
  it('reads run dirs and writes one testcase per metric per run with failure messages', async () => {
    const root = tempRoot();
    const base = makeRunDir(root, passRecord());
    const drift = makeRunDir(root, drifted());
    const junit = join(root, 'out', 'regression.xml');
    const res = await regress({ baseline: base, runs: [drift], tolerances: { tempC: 10 }, junitPath: junit });
    expect(res.ok).toBe(false);
    expect(res.paths).toEqual([junit]);
    const xml = readFileSync(junit, 'utf8');
    expect(
      xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="cablequal regression" tests="22" failures="2" errors="0" skipped="0">'),
    ).toBe(true);
    expect(xml.match(/<testcase /g)).toHaveLength(22);
    expect(xml).toContain('<testcase classname="cablequal.regress.gen-ref-drift" name="nic_temp_max_c[spark-b]" time="0.000"/>');
    expect(xml).toContain('<failure message="ib_write_bw_sum_gbps: 170.00 vs baseline 185.30 (-8.26 %, tolerance ±5 %)" type="out-of-tolerance">');
  });

  it('escapes names and messages', () => {
    const xml = junitXml('a<b', [{ name: 's&1', cases: [{ classname: 'c', name: 'x"y', failure: { message: "it's <bad>" } }] }]);
    expect(xml).toContain('<testsuites name="a&lt;b" tests="1" failures="1"');
    expect(xml).toContain('name="x&quot;y"');
    expect(xml).toContain('<failure message="it&#39;s &lt;bad&gt;" type="failure">it&#39;s &lt;bad&gt;</failure>');
  });
});
