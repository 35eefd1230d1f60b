import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ParseError } from '../../src/domain/errors.js';
import { registerReading, type ReadingProbe } from '../../src/probes/readings.js';
import { registerSimReading, type SimReadingAt } from '../../src/sim/readings.js';
import { renderAll } from '../../src/report/render-all.js';
import { readJournal } from '../../src/run/journal.js';
import { buildTimeseries } from '../../src/run/journal-series.js';
import { labRun } from '../faults/lab-run.js';

// A new reading added as one entry (what docs/adding-a-probe.md describes): a made-up module temperature whose command,
// parser and period are here, with the simulated lab's answer to it by its id (src/sim/readings.ts), since the lab does
// not model its made-up command. The simulated answer is GENERATED: 30 °C on spark-a, 40 °C on spark-b, plus 0.1 °C per
// simulated minute.
const T0 = Date.UTC(2026, 5, 1);
const fake: ReadingProbe = {
  id: 'fake-module-temp-c',
  describe: 'a made-up module temperature (test only)',
  periodS: 5,
  command: ({ netdev }) => `cat /sys/class/net/${netdev}/fake_module_temp`,
  parse: (text) => {
    const m = /^(-?\d+(?:\.\d+)?)\n?$/.exec(text);
    if (!m) throw new ParseError('fake-module-temp-c', 1, `expected degrees C, got ${JSON.stringify(text.slice(0, 20))}`);
    return Number(m[1]);
  },
};
const simulated = ({ core, node }: SimReadingAt) => `${((node === 'spark-a' ? 30 : 40) + Math.floor((core.clock.now() - T0) / 60_000) / 10).toFixed(1)}\n`;

describe('a reading registered in one place flows to journal, analysis, CSV and certificate', () => {
  let unregister: (() => void)[] = [];
  let run: Awaited<ReturnType<typeof labRun>>;
  beforeAll(async () => {
    unregister = [registerReading(fake), registerSimReading(fake.id, simulated)];
    run = await labRun({ scenario: 'good-qsfp112', protocol: 'quick' });
    // What `cablequal run` does next: the reports from the record and the journal's series.
    await renderAll(run.record, run.runDir, buildTimeseries(readJournal(join(run.runDir, 'journal.jsonl'))), { labKey: null });
  }, 120_000);
  afterAll(() => unregister.forEach((u) => u()));

  it('is asked every 5 ticks (1 s interval) and journaled with the sample', () => {
    const samples = run.journal.filter((l) => l.type === 'sample') as unknown as {
      tick: number;
      node: string;
      sample: { readings?: Record<string, number | null> };
    }[];
    const withReading = samples.filter((l) => l.sample.readings?.['fake-module-temp-c'] !== undefined);
    expect(withReading.length).toBeGreaterThan(10);
    expect(withReading.every((l) => l.tick % 5 === 0)).toBe(true);
    expect(samples.filter((l) => l.tick % 5 === 0).every((l) => typeof l.sample.readings?.['fake-module-temp-c'] === 'number')).toBe(true);
    expect(withReading.find((l) => l.node === 'spark-a')!.sample.readings!['fake-module-temp-c']).toBeGreaterThanOrEqual(30);
  });

  it('the analysis keeps min, mean and max per node and phase', () => {
    expect(run.record.outcome).toBe('PASS');
    const soaks = run.record.analysis!.perNodePhase.filter((p) => p.phase.startsWith('soak'));
    expect(soaks.length).toBeGreaterThan(0);
    for (const p of soaks) {
      const r = p.readings!['fake-module-temp-c']!;
      const base = p.node === 'spark-a' ? 30 : 40;
      expect(r.min).toBeGreaterThanOrEqual(base);
      expect(r.max).toBeLessThan(base + 1);
      expect(r.min).toBeLessThanOrEqual(r.mean);
      expect(r.mean).toBeLessThanOrEqual(r.max);
      expect(r.n).toBeGreaterThan(1);
    }
  });

  it('timeseries.csv has its column and certificate.html its row', () => {
    const csv = readFileSync(join(run.runDir, 'timeseries.csv'), 'utf8').split('\r\n');
    const header = csv[0]!.split(',');
    const col = header.indexOf('fake_module_temp_c');
    expect(col).toBeGreaterThan(header.indexOf('nic_temp_c'));
    const values = csv
      .slice(1)
      .filter((l) => l !== '')
      .map((l) => l.split(',')[col]!)
      .filter((v) => v !== '');
    expect(values.length).toBeGreaterThan(10);
    expect(values.every((v) => Number(v) >= 30 && Number(v) < 41)).toBe(true);
    const html = readFileSync(
      join(
        run.runDir,
        readdirSync(run.runDir).find((f) => f.endsWith('.html'))!,
      ),
      'utf8',
    );
    expect(html).toContain('<h3>Other readings</h3>');
    expect(html).toMatch(/<td>spark-b<\/td><td>soak[^<]*<\/td><td>fake-module-temp-c<\/td><td class="num">40\.\d\d<\/td>/);
  });

  it('refuses a second reading with the same id, or a bad id', () => {
    expect(() => registerReading(fake)).toThrow(/already registered/);
    expect(() => registerReading({ ...fake, id: 'Bad Id' })).toThrow(/lower-case words/);
    expect(() => registerReading({ ...fake, id: 'hwmon' })).toThrow(/already registered/); // a core reading's id
  });
});
