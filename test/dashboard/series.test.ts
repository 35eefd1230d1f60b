// A run's series for its page: downsampled keeping maxima (a burst stays visible) and the last reading; read from the
// journal as it grows (what a half-written journal gives is what the same lines give read at once); the soak bound's
// last value is the certificate's headline per lane.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketRows, MAX_POINTS, SeriesCache } from '../../src/dashboard/run-series.js';
import { runCli } from '../helpers/cli.js';
import type { RunRecord } from '../../src/domain/record.js';

describe('bucketRows', () => {
  it('10,000 rows become at most 2000, a one-row burst is kept at its value, the last row is kept as it is', () => {
    const rows = [...Array(10_000).keys()].map((i) => ({ tS: i, values: [i === 5123 ? 1e-3 : 1e-9, i % 7 === 0 ? null : 50 + (i % 3)] as (number | null)[] }));
    rows[9999]!.values = [2e-9, 49];
    const d = bucketRows(rows, 9999, MAX_POINTS);
    expect(d.t.length).toBeLessThanOrEqual(MAX_POINTS);
    expect(d.t.length).toBeGreaterThan(MAX_POINTS - 10);
    expect(Math.max(...d.columns[0]!.map((v) => v ?? 0))).toBe(1e-3);
    expect(d.columns[0]!.filter((v) => v === 1e-3)).toHaveLength(1);
    expect(d.t.at(-1)).toBe(9999);
    expect(d.columns[0]!.at(-1)).toBe(2e-9);
    expect(d.columns[1]!.at(-1)).toBe(49);
    // Each bucket of 5 or 6 rows holds a 51 or 52 that is not null: its maximum is one of them, never a 50.
    expect(new Set(d.columns[1]!.slice(0, -1))).toEqual(new Set([51, 52]));
    expect([...d.t].sort((a, b) => a - b)).toEqual(d.t);
  });

  it('fewer rows than the limit pass unchanged', () => {
    const rows = [1, 2, 3].map((t) => ({ tS: t, values: [t] }));
    expect(bucketRows(rows, 3, MAX_POINTS)).toEqual({ t: [1, 2, 3], columns: [[1, 2, 3]] });
  });
});

describe('a run journal read for the run page', () => {
  let dir: string;
  let runDir: string;
  let record: RunRecord;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cq-series-'));
    const r = await runCli(['run', '--sim', 'failing-clone', '--protocol', 'quick', '--out', dir, '--json', '--seed', '3', '--db', 'off'], {
      env: { CABLEQUAL_LAB_KEY: '/nonexistent/key.pem' },
    });
    runDir = (JSON.parse(r.out) as { runDir: string }).runDir;
    record = JSON.parse(readFileSync(join(runDir, 'record.json'), 'utf8')) as RunRecord;
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("the worst lane's bound over the loaded soak ends on the certificate's headline, per receiver and lane", async () => {
    const s = await new SeriesCache().series(record.runId, join(runDir, 'journal.jsonl'));
    expect(s.receivers.map((r) => r.node).sort()).toEqual(record.headline!.receivers.map((r) => r.node).sort());
    for (const rx of s.receivers) {
      const h = record.headline!.receivers.find((x) => x.node === rx.node)!;
      expect(rx.soakBound.map((l) => [l.lane, l.errors])).toEqual(h.lanes.map((l) => [l.lane, l.errors]));
      for (const l of h.lanes) expect(rx.soakBound[l.lane]!.ub95).toBeCloseTo(l.berUb95, 20);
      expect(rx.soakBoundBer.at(-1)).toBeCloseTo(Math.max(...h.lanes.map((l) => l.berUb95)), 20);
      expect(rx.laneRateBps).toBe(53.125e9);
    }
    expect(s.decision).toMatchObject({ atS: record.decidedAtS, outcome: 'FAIL' });
    expect(s.phases.map((p) => p.name)).toEqual(record.phases.map((p) => p.name));
    // The clone's bad lane at spark-b is the outlier at the end.
    expect(s.receivers.find((r) => r.node === 'spark-b')!.outlier).toMatchObject({ lane: 2 });
    expect(s.receivers.find((r) => r.node === 'spark-a')!.outlier).toBeNull();
    expect(s.throughput.series.map((x) => x.direction).sort()).toEqual(['spark-a->spark-b', 'spark-a->spark-b', 'spark-b->spark-a', 'spark-b->spark-a']);
  });

  it('a journal read while it grows (a torn last line included) gives what the same lines give read at once', async () => {
    const text = readFileSync(join(runDir, 'journal.jsonl'), 'utf8');
    const growing = join(dir, 'growing.jsonl');
    writeFileSync(growing, '');
    const live = new SeriesCache();
    const cut = [0.2, 0.5, 0.77, 1].map((f) => Math.floor(text.length * f));
    let at = 0;
    for (const end of cut) {
      appendFileSync(growing, text.slice(at, end));
      at = end;
      const partial = await live.series('x', growing);
      const whole = text.slice(0, end);
      const complete = join(dir, `complete-${end}.jsonl`);
      writeFileSync(complete, whole.slice(0, whole.lastIndexOf('\n') + 1));
      expect(partial).toEqual(await new SeriesCache().series('x', complete));
    }
    expect((await live.series('x', growing)).ended).toBe(true);
  });
});
