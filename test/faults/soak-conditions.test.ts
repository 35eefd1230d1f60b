// A verdict stands on conditions the run measured (#21): the simulated lab's faults that take a soak's conditions away
// (link-load-stop, gpu-load-stop) end ERROR naming the node, and counters cleared on a running node (counter-reset)
// leave a good cable PASS with no error lost. Quick protocol, virtual time: the loaded soak runs from ~104 s to ~284 s,
// so faults at 150 s land in it. Everything the lab prints is generated.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/domain/record.js';
import { readJournal } from '../../src/run/journal.js';
import { buildTimeseries } from '../../src/run/journal-series.js';
import { runCli } from '../helpers/cli.js';
import { labRun } from './lab-run.js';

// Grade a journal's text in a directory of its own (today's rules unless `rules` says), the record it wrote.
async function grade(journal: string, rules?: number): Promise<RunRecord> {
  const dir = mkdtempSync(join(tmpdir(), 'cq-soak-'));
  writeFileSync(join(dir, 'journal.jsonl'), journal);
  const r = await runCli(['grade', dir, '--json', ...(rules ? ['--rules', String(rules)] : [])]);
  expect(r.err).toBe('');
  return JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as RunRecord;
}
const journalOf = (runDir: string) => readFileSync(join(runDir, 'journal.jsonl'), 'utf8');

describe('the soaks watched as they run (simulated faults, quick protocol)', { timeout: 60_000 }, () => {
  it("link-load-stop: the node's ib_write_bw clients exit mid-soak: ERROR soak-link-load naming the node and the direction", async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['link-load-stop@150s:spark-a'] });
    expect(r.record.outcome).toBe('ERROR');
    expect(r.record.reasons).toHaveLength(1);
    expect(r.record.reasons[0]).toMatchObject({ rule: 'soak-link-load', node: 'spark-a', phase: 'soak-loaded', rail: 0 });
    expect(r.record.reasons[0]!.message).toMatch(
      /^spark-a -> spark-b rail 0: ib_write_bw soak-loaded-client-0 on spark-a ended by itself \(exit \d+\) at 15\d(\.\d+)? s/,
    );
    // Each exit is in the journal as it was seen, and the run stopped a few ticks later (the time a link drop is given).
    const exits = r.journal.filter((l) => l.type === 'load-exit');
    expect(exits.filter((l) => l.node === 'spark-a').map((l) => l.process)).toEqual(['soak-loaded-client-0', 'soak-loaded-client-1']);
    const err = r.journal.find((l) => l.type === 'setup-error')!;
    expect(err.tS! - exits[0]!.tS!).toBe(5);
    for (const n of r.lab.nodes) expect(r.lab.processes(n)).toEqual([]);
    // The journal alone says the same.
    const again = await grade(journalOf(r.runDir));
    expect([again.outcome, again.reasons[0]!.rule, again.reasons[0]!.node]).toEqual(['ERROR', 'soak-link-load', 'spark-a']);
  });

  it('link-load-stop on the second node (its default): the other direction is named', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['link-load-stop@150s'] });
    expect(r.record.outcome).toBe('ERROR');
    expect(r.record.reasons[0]).toMatchObject({ rule: 'soak-link-load', node: 'spark-b' });
    expect(r.record.reasons[0]!.message).toMatch(/^spark-b -> spark-a rail 0: /);
  });

  it("gpu-load-stop: the node's GPU load exits mid-soak: ERROR gpu-util-min naming the node", async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['gpu-load-stop@150s:spark-a'] });
    expect(r.record.outcome).toBe('ERROR');
    expect(r.record.reasons).toHaveLength(1);
    expect(r.record.reasons[0]).toMatchObject({ rule: 'gpu-util-min', node: 'spark-a', phase: 'soak-loaded' });
    expect(r.record.reasons[0]!.message).toMatch(/^spark-a soak-loaded: the GPU load \(soak-loaded-gpu\) ended by itself/);
    for (const n of r.lab.nodes) expect(r.lab.processes(n)).toEqual([]);
    const again = await grade(journalOf(r.runDir));
    expect([again.outcome, again.reasons[0]!.rule, again.reasons[0]!.node]).toEqual(['ERROR', 'gpu-util-min', 'spark-a']);
  });

  it('counter-reset on a good cable: PASS, the clearing is an event of the journal and the record', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['counter-reset@150s'] });
    expect(r.record.outcome, JSON.stringify(r.record.reasons)).toBe('PASS');
    const line = r.journal.find((l) => l.type === 'counter-reset')!;
    expect(line).toMatchObject({ node: 'spark-b', phase: 'soak-loaded', counter: 'rx_bytes_phy', rebooted: false });
    expect(r.record.counterResets).toEqual([{ tS: line.tS, node: 'spark-b', phase: 'soak-loaded', rebooted: false }]);
  });

  it('counter-reset where errors are counted (QSFP112 corrected errors): every error counted, as without the reset; version 2 lost them', async () => {
    const clean = await labRun({ scenario: 'good-qsfp112' });
    const reset = await labRun({ scenario: 'good-qsfp112', faults: ['counter-reset@150s'] });
    expect(reset.record.outcome).toBe('PASS');
    const errors = (rec: RunRecord, node: string) => rec.analysis!.perNodePhase.find((p) => p.node === node && p.phase === 'soak-loaded')!;
    const b = errors(reset.record, 'spark-b');
    expect(b.counterResets).toBe(1);
    expect(b.laneStats.map((l) => l.errors)).toEqual(errors(clean.record, 'spark-b').laneStats.map((l) => l.errors));
    expect(b.correctedBits).toBe(errors(clean.record, 'spark-b').correctedBits);
    expect(reset.record.reasons.find((x) => x.rule === 'counter-reset')!.message).toMatch(/counted from zero after each/);
    // The same journal graded by version 2 drops the interval of the clearing, and the errors in it.
    const v2 = await grade(journalOf(reset.runDir), 2);
    const lost = errors(v2, 'spark-b');
    expect(lost.laneStats.reduce((a, l) => a + l.errors, 0)).toBeLessThan(b.laneStats.reduce((a, l) => a + l.errors, 0));
    expect(v2.reasons.find((x) => x.rule === 'counter-reset')!.message).toMatch(/those intervals were left out/);
  });

  it('a good run states the load each direction carried in each soak, and the GPU load judged', async () => {
    const r = await labRun({ scenario: 'good-qsfp56' });
    expect(r.record.outcome).toBe('PASS');
    const link = r.record.soakLoad!.link;
    expect(link.map((d) => [d.phase, d.from, d.to])).toEqual([
      ['soak-idle', 'spark-a', 'spark-b'],
      ['soak-idle', 'spark-b', 'spark-a'],
      ['soak-loaded', 'spark-a', 'spark-b'],
      ['soak-loaded', 'spark-b', 'spark-a'],
    ]);
    for (const d of link) {
      expect(d.rails).toBe(2);
      expect(d.pctOfBenchmark!).toBeGreaterThan(99);
      expect(d.pctOfBenchmark!).toBeLessThan(101);
      expect(d.longestGapS).toBe(0);
    }
    const gpu = r.record.soakLoad!.gpu;
    expect(gpu.map((g) => g.node)).toEqual(['spark-a', 'spark-b']);
    for (const g of gpu) expect(g.meanPct!).toBeGreaterThan(90);
    // The re-grade states the same figures.
    expect((await grade(journalOf(r.runDir))).soakLoad).toEqual(r.record.soakLoad);
  });
});

describe('the soak checks from the journal alone (unchained copies: the evidence on its own)', { timeout: 60_000 }, () => {
  const lines = async () => {
    const r = await labRun({ scenario: 'good-qsfp56' });
    return journalOf(r.runDir)
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        // As a journal before the hash chain: no prev, and no chain mark in run-start.
        const o = JSON.parse(l) as Record<string, unknown>;
        delete o['prev'];
        if (o['type'] === 'run-start') delete o['chain'];
        return o;
      });
  };
  const text = (xs: Record<string, unknown>[]) => `${xs.map((x) => JSON.stringify(x)).join('\n')}\n`;

  it('a version 3 journal without its throughput rows or its GPU load starts is ERROR, never PASS', async () => {
    const all = await lines();
    expect((await grade(text(all))).outcome).toBe('PASS');
    const noRows = await grade(text(all.filter((l) => l['type'] !== 'load-rows')));
    expect(noRows.outcome).toBe('ERROR');
    expect(noRows.reasons.map((x) => x.rule)).toEqual(['soak-link-load', 'soak-link-load']);
    const noGpuStart = await grade(text(all.filter((l) => !(l['type'] === 'load-start' && l['load'] === 'gpu'))));
    expect(noGpuStart.outcome).toBe('ERROR');
    expect(noGpuStart.reasons.map((x) => [x.rule, x.node])).toEqual([
      ['gpu-util-min', 'spark-a'],
      ['gpu-util-min', 'spark-b'],
    ]);
  });

  it('rows edited down to 80 % of the benchmark in one direction: ERROR with the figures', async () => {
    const all = (await lines()).map((l) =>
      l['type'] === 'load-rows' && l['phase'] === 'soak-idle'
        ? {
            ...l,
            streams: (l['streams'] as { from: string; gbps: number[] }[]).map((s) => (s.from === 'spark-b' ? { ...s, gbps: s.gbps.map((g) => g * 0.8) } : s)),
          }
        : l,
    );
    const g = await grade(text(all));
    expect(g.outcome).toBe('ERROR');
    expect(g.reasons).toHaveLength(1);
    expect(g.reasons[0]).toMatchObject({ rule: 'soak-link-load', node: 'spark-b', phase: 'soak-idle', unit: '%', limit: '>= 90 %' });
    expect(g.reasons[0]!.value).toBeCloseTo(80, 0);
  });

  it('a journal written before the soak lines (rules version 2) keeps its outcome; the record says what was not checked', async () => {
    const old = (await lines()).filter((l) => !String(l['type']).startsWith('load-')).map((l) => (l['type'] === 'run-start' ? { ...l, rulesVersion: 2 } : l));
    const g = await grade(text(old));
    expect(g.outcome).toBe('PASS');
    expect(g.soakLoad).toBeUndefined();
    expect(g.rules!.notes).toContain('soak-link-load: not applied: the journal (rules version 2) was written before the soaks journaled their throughput rows');
    expect(g.rules!.notes).toContain(
      'gpu-util-min: the journal (rules version 2) does not say when the GPU load started: judged as version 2 did, from a fixed point into each GPU-loaded soak',
    );
  });
});

describe('throughput.csv from the rows the soaks journaled as they went', { timeout: 60_000 }, () => {
  it('a soak cut short (Ctrl-C at 200 s) keeps the rows read before it: each read spread over the time since the last', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', abortAtS: 200 });
    const contents = readJournal(join(r.runDir, 'journal.jsonl'));
    // The loaded soak never ended (ABORTED): the stop the abort made wrote its summary line, which these points replace.
    const loadedFromS = Number(r.journal.find((l) => l.type === 'phase-start' && l.phase === 'soak-loaded')!.tS);
    const loaded = buildTimeseries(contents).throughput.filter((p) => p.tS > loadedFromS);
    const reads = r.journal.filter((l) => l.type === 'load-rows' && l.phase === 'soak-loaded');
    const rows = reads.flatMap((l) => (l.streams as { gbps: number[] }[]).flatMap((s) => s.gbps));
    expect(loaded).toHaveLength(rows.length);
    expect(loaded.map((p) => p.gbps).sort()).toEqual(rows.sort());
    // Without the summary line (a controller killed before writing it), the same points.
    const cut = { ...contents, lines: contents.lines.filter((l) => l.type !== 'throughput') };
    expect(buildTimeseries(cut).throughput.filter((p) => p.tS > loadedFromS)).toEqual(loaded);
    for (const p of loaded) expect(p.direction).toMatch(/^spark-[ab]->spark-[ab]$/);
  });
});
