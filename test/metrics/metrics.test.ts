// --metrics-port: scrape a simulated run (and a simulated batch) while it runs, over HTTP, and read what
// Prometheus would: per node and lane pre-FEC counters and rates, corrected bits, CRC, link-down events,
// temperatures, GPU utilisation, phase, elapsed and remaining time, the outcome once decided.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { RunMetrics } from '../../src/metrics/run-metrics.js';
import { CURRENT_ANALYSIS, functionsRuleOf, resetRuleOf } from '../../src/analysis/analyze.js';
import { LiveIntervals } from '../../src/analysis/intervals.js';
import { serveMetrics } from '../../src/metrics/serve.js';
import { readJournal } from '../../src/run/journal.js';
import { chooseStore, openStore } from '../../src/store/open-store.js';
import { decodeSample } from '../../src/run/sample-codec.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

// Run the CLI in process; once it prints its metrics URL, scrape every 50 ms until it ends. Returns every scrape. The run
// goes at a speed-up of real time (--speed), as a person watching it would: its status reaches the metrics once a second.
async function scrapeWhileRunning(argv: string[], cwd: string): Promise<{ code: number; out: string; err: string; scrapes: string[]; url: string }> {
  let out = '';
  let err = '';
  let url = '';
  const scrapes: string[] = [];
  let done = false;
  let loop: Promise<void> = Promise.resolve();
  const io: CliIo = {
    stdout: (s) => void (out += s),
    stderr: (s) => {
      err += s;
      const m = /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(s);
      if (m && !url) {
        url = m[1]!;
        loop = (async () => {
          while (!done) {
            try {
              const r = await fetch(url);
              scrapes.push(await r.text());
            } catch {
              // closed at the end of the run
            }
            await new Promise((r) => setTimeout(r, 50));
          }
        })();
      }
    },
    readStdin: async () => '',
    isTTY: false,
    cwd,
    env: { CABLEQUAL_LAB_KEY: '/nonexistent/key.pem' },
  };
  const code = await main(argv, io);
  done = true;
  await loop;
  return { code, out, err, scrapes, url };
}

// The value of one series in a scrape, or undefined.
function value(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.lastIndexOf('}'));
    const have = Object.fromEntries([...body.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('--metrics-port', () => {
  it('run --sim failing-clone (quick protocol): lane counters and rates per node, temperatures, GPU load, phase and time, scraped while it runs', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-metrics-'));
    dirs.push(cwd);
    const r = await scrapeWhileRunning(
      [
        'run',
        '--sim',
        'failing-clone',
        '--protocol',
        'quick',
        '--seed',
        '5',
        '--speed',
        '50',
        '--out',
        'reports',
        '--db',
        'off',
        '--metrics-port',
        '0',
        '--metrics-linger',
        '1',
        '--json',
      ],
      cwd,
    );
    expect(r.code).toBe(1);
    expect(r.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const runDir = (JSON.parse(r.out) as { runDir: string }).runDir;
    const run = runDir.split('/').at(-1)!;
    // Scrapes while it ran (once decided, the endpoint lingers with the outcome and no phase).
    const withLanes = r.scrapes.filter(
      (s) => value(s, 'cablequal_lane_pre_fec_errors_total', { run, node: 'spark-a', lane: '0' }) !== undefined && !s.includes('cablequal_run_outcome{'),
    );
    expect(withLanes.length).toBeGreaterThan(0);
    const last = withLanes.at(-1)!;
    // Every series the issue names, for both nodes.
    for (const node of ['spark-a', 'spark-b']) {
      for (let lane = 0; lane < 4; lane++) {
        expect(value(last, 'cablequal_lane_pre_fec_errors_total', { run, node, lane: String(lane) })).toBeGreaterThanOrEqual(0);
        expect(value(last, 'cablequal_lane_pre_fec_errors_per_second', { run, node, lane: String(lane) })).toBeGreaterThanOrEqual(0);
      }
      for (const name of [
        'cablequal_corrected_bits_total',
        'cablequal_crc_errors_total',
        'cablequal_post_fec_errors_total',
        'cablequal_link_down_events_total',
      ])
        expect(value(last, name, { run, node }), name).toBeGreaterThanOrEqual(0);
      expect(value(last, 'cablequal_nic_temperature_celsius', { run, node })).toBeGreaterThan(30);
      expect(value(last, 'cablequal_gpu_temperature_celsius', { run, node })).toBeGreaterThan(20);
      expect(value(last, 'cablequal_gpu_utilization_percent', { run, node })).toBeGreaterThanOrEqual(0);
    }
    expect(value(last, 'cablequal_run_elapsed_seconds', { run })).toBeGreaterThan(0);
    expect(last).toMatch(new RegExp(`^cablequal_run_phase\\{run="${run}",phase="[\\w-]+"\\} 1$`, 'm'));
    expect(value(last, 'cablequal_run_info', { run, protocol: 'quick', simulated: 'true' })).toBe(1);
    // Counters never go down between scrapes.
    const series = withLanes.map((s) => value(s, 'cablequal_lane_pre_fec_errors_total', { run, node: 'spark-b', lane: '2' })!);
    expect(series).toEqual([...series].sort((a, b) => a - b));
    // The counter is the NIC's own count since the run's first sample: never more than the journal's samples counted.
    const samples = readJournal(join(runDir, 'journal.jsonl'))
      .lines.filter((l) => l.type === 'sample')
      .map((l) => decodeSample(l['sample']))
      .filter((s) => s.node === 'spark-b' && s.rails[0]?.phy.laneErrors[2] !== undefined);
    // Since rules version 4 a counter is the larger of what the cage's two functions read in the same tick.
    const larger = (s: (typeof samples)[number]) =>
      s.rails.reduce((m, r) => (r.phy.laneErrors[2] !== undefined && r.phy.laneErrors[2] > m ? r.phy.laneErrors[2] : m), 0n);
    const journalSpan = Number(larger(samples.at(-1)!) - larger(samples[0]!));
    expect(series.at(-1)!).toBeLessThanOrEqual(journalSpan);
    // Which statuses a scrape sees depends on timing; fed every sample of the journal in order, the counter is exact:
    // the NIC's count from the first sample to the last (the runaway lane of this clone counts many errors).
    const replay = new RunMetrics();
    const live = new LiveIntervals({ resets: resetRuleOf(CURRENT_ANALYSIS), functions: functionsRuleOf(CURRENT_ANALYSIS) });
    for (const sample of samples) {
      live.push(sample);
      replay.update(run, { phase: 'replay', elapsedS: 0, phaseRemainingS: null, runRemainingS: null, counted: Object.fromEntries(live.counted) });
    }
    const text = await replay.prometheus.metrics();
    expect(value(text, 'cablequal_lane_pre_fec_errors_total', { run, node: 'spark-b', lane: '2' })).toBe(journalSpan);
    expect(journalSpan).toBeGreaterThan(1000);
    // --metrics-linger 1: after the record was written the endpoint stayed up, and the last scrapes carry the outcome.
    expect(r.err).toContain('(--metrics-linger; Ctrl-C to quit now)');
    expect(r.scrapes.at(-1)).toMatch(new RegExp(`^cablequal_run_outcome\\{run="${run}",outcome="FAIL"\\} 1$`, 'm'));
  }, 60_000);

  it("batch --sim: the first cable's outcome is served while the second runs; both runs land in the store", async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-metrics-batch-'));
    dirs.push(cwd);
    writeFileSync(join(cwd, 'box.csv'), 'label\nc1\nc2\n');
    const r = await scrapeWhileRunning(
      [
        'batch',
        '--manifest',
        'box.csv',
        '--sim',
        'good-qsfp56=GEN-M1,failing-clone=GEN-M2',
        '--protocol',
        'quick',
        '--out',
        'reports/b',
        '--metrics-port',
        '0',
        '--metrics-linger',
        '0',
      ],
      cwd,
    );
    expect(r.code).toBe(1);
    const state = JSON.parse(readFileSync(join(cwd, 'reports', 'b', 'batch-state.json'), 'utf8')) as { cables: { runDir: string; outcome: string }[] };
    const [first, second] = state.cables.map((c) => c.runDir.split('/').at(-1)!);
    const seen = r.scrapes.find(
      (s) => value(s, 'cablequal_run_outcome', { run: first!, outcome: 'PASS' }) === 1 && value(s, 'cablequal_run_info', { run: second! }) === 1,
    );
    expect(seen, 'a scrape with the first run PASS and the second under way').toBeDefined();
    // The batch also wrote both runs, and the batch, to the store beside the batch directory.
    const store = await openStore(chooseStore({ out: join(cwd, 'reports') }));
    try {
      const rows = await store.db.all<{ run_id: string; outcome: string; batch_role: string; batch_id: string }>(
        'SELECT run_id, outcome, batch_role, batch_id FROM runs ORDER BY started_at',
      );
      expect(rows.map((x) => [x.run_id, x.outcome, x.batch_role])).toEqual([
        [first, 'PASS', 'cable'],
        [second, 'FAIL', 'cable'],
      ]);
      const [batch] = await store.db.all<{ id: string; name: string; cables: number; tested: number }>('SELECT id, name, cables, tested FROM batches');
      expect(batch).toMatchObject({ name: 'b', cables: 2, tested: 2 });
      expect(rows[0]!.batch_id).toBe(batch!.id);
    } finally {
      await store.close();
    }
  }, 90_000);

  it('serves OpenMetrics text when asked, Prometheus text otherwise, only /metrics, on loopback', async () => {
    const m = new RunMetrics();
    m.started('r1', { label: 'box "1"', protocol: 'quick', simulated: true });
    m.update('r1', {
      phase: 'soak-idle',
      elapsedS: 12,
      phaseRemainingS: 48,
      runRemainingS: 588,
      laneRates: { a: [0, 1.5] },
      nicTempC: { a: 60 },
      gpuTempC: { a: null },
      gpuUtilPct: { a: 0 },
      throughputGbps: null,
    });
    m.decided('r1', 'FAIL');
    const s = await serveMetrics(m, { port: 0 });
    try {
      const prom = await fetch(s.url);
      expect(prom.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await prom.text();
      expect(text).toContain('cablequal_run_info{run="r1",label="box \\"1\\"",protocol="quick",simulated="true"} 1');
      expect(text).toContain('cablequal_run_outcome{run="r1",outcome="FAIL"} 1');
      expect(text).toContain('cablequal_lane_pre_fec_errors_per_second{run="r1",node="a",lane="1"} 1.5');
      expect(text).not.toMatch(/cablequal_run_phase\{/m); // no phase once decided
      const om = await fetch(s.url, { headers: { accept: 'application/openmetrics-text; version=1.0.0' } });
      expect(om.headers.get('content-type')).toMatch(/^application\/openmetrics-text/);
      expect((await om.text()).trimEnd().endsWith('# EOF')).toBe(true);
      expect((await fetch(s.url.replace('/metrics', '/'))).status).toBe(404);
    } finally {
      await s.close();
    }
    const taken = await serveMetrics(m, { port: 0 });
    await expect(serveMetrics(m, { port: taken.port })).rejects.toThrow(/--metrics-port \d+: cannot listen on 127\.0\.0\.1 \(EADDRINUSE\)/);
    await taken.close();
  });
});
