// The dashboard in headless Chromium (Debian's, via playwright-core): every page loads with the data of simulated and
// generated runs, its numbers and its charts' axis labels are read, and a console error fails the test. The run page's
// last soak-bound point agrees with the certificate's headline; a running run's page grows as its journal does; the
// filters work; nothing loads from outside; hostile EEPROM strings run no script.
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, CHROMIUM_PATH, launchChromium } from '../../scripts/chromium.js';
import { startDashboard, type Dashboard } from '../../src/dashboard/server.js';
import { HOSTILE_SERIAL, makeLabStore, startRunning, type LabStore } from './lab-store.js';

// The page's DOM, inside functions evaluated by the browser (the tests compile without the DOM library).
declare const document: { getElementById(id: string): { textContent: string | null } | null; body: { getAttribute(name: string): string | null } };

const have = chromiumAvailable();
if (!have) console.warn(`\n!!! SKIPPING dashboard browser tests: no chromium at ${CHROMIUM_PATH} (apt-get install -y chromium) !!!\n`);

type Axis = { label: string; ticks: string[] };
type ChartInfo = {
  id: string;
  kind: string;
  series: { label: string; points: number; last: number | null }[];
  axes: Axis[];
  node?: string;
  decision?: { atS: number } | null;
  phases?: unknown[];
  outlier?: { lane: number } | null;
};
const charts = async (page: Page) => (await page.evaluate('window.cablequalCharts')) as ChartInfo[];
// Tick labels that read as numbers, each once, in order (no "1.084, 1.084, 1.084"; no "1.1, 1.5" on a run axis).
function numericTicks(a: Axis, integer = false): number[] {
  const v = a.ticks.map(Number);
  expect(v.length, a.label).toBeGreaterThan(1);
  expect(
    v.every((x) => Number.isFinite(x)),
    `${a.label}: ${a.ticks.join(', ')}`,
  ).toBe(true);
  expect(new Set(a.ticks).size, `${a.label}: ${a.ticks.join(', ')}`).toBe(a.ticks.length);
  expect(
    [...v].sort((x, y) => x - y),
    a.label,
  ).toEqual(v);
  if (integer)
    expect(
      v.every((x) => Number.isInteger(x)),
      `${a.label}: ${a.ticks.join(', ')}`,
    ).toBe(true);
  return v;
}

describe.skipIf(!have)('dashboard in headless Chromium', () => {
  let lab: LabStore;
  let dash: Dashboard;
  let browser: Browser;
  const foreign: string[] = [];
  const errors: string[] = [];
  beforeAll(async () => {
    lab = await makeLabStore();
    dash = await startDashboard({ store: lab.store, outDir: lab.out, port: 0, host: '127.0.0.1', pollMs: 100 });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await dash?.close();
    await lab?.store.close();
    if (lab) rmSync(lab.out, { recursive: true, force: true });
  });

  async function open(path: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('request', (r) => {
      if (!r.url().startsWith(dash.url)) foreign.push(r.url());
    });
    page.on('pageerror', (e) => errors.push(`${path}: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`${path}: ${m.text()}`);
    });
    await page.goto(new URL(path, dash.url).href, { waitUntil: 'load' });
    if (await page.$('script[src="/static/dashboard.js"]')) await page.waitForSelector('body[data-ready]', { timeout: 20_000 });
    return page;
  }
  afterEach(() => {
    expect(errors.splice(0)).toEqual([]);
  });

  it('the run list shows every run; the outcome and part filters narrow it; each run links its certificate', async () => {
    const page = await open('/');
    const ids = await page.$$eval('#runs tbody tr', (trs) => trs.map((t) => t.getAttribute('data-run')));
    expect(ids).toHaveLength(15);
    for (const s of lab.simRuns) expect(ids).toContain(s.runId);
    await page.selectOption('select[name=outcome]', 'FAIL');
    await Promise.all([page.waitForNavigation(), page.click('form.filters button[type=submit]')]);
    const failed = await page.$$eval('#runs tbody tr', (trs) => trs.map((t) => [t.getAttribute('data-run'), t.querySelector('td:nth-child(3)')!.textContent]));
    expect(failed.sort()).toEqual(
      [
        [lab.hostileRunId, 'FAIL'],
        [lab.simRuns[0]!.runId, 'FAIL'],
        ['gen-retest-0', 'FAIL'],
        ['gen-retest-1', 'FAIL'],
      ].sort(),
    );
    await page.selectOption('select[name=part]', lab.simRuns[0]!.partNumber);
    await Promise.all([page.waitForNavigation(), page.click('form.filters button[type=submit]')]);
    expect(await page.$$eval('#runs tbody tr', (trs) => trs.map((t) => t.getAttribute('data-run')))).toEqual([lab.simRuns[0]!.runId]);
    expect(await page.textContent('#run-count')).toBe('1');
    const href = await page.getAttribute('#runs tbody tr a.cert', 'href');
    const cert = await page.goto(new URL(href!, dash.url).href);
    expect(cert!.status()).toBe(200);
    expect(await page.title()).toMatch(/certificate/i);
    await page.close();
  });

  it('the serial search finds a part of a serial in any case; a row shows its short code, label and batch', async () => {
    const page = await open('/');
    await page.fill('input[name=serial]', 'retest-00');
    await Promise.all([page.waitForNavigation(), page.click('form.filters button[type=submit]')]);
    const rows = await page.$$eval('#runs tbody tr', (trs) => trs.map((t) => [...t.querySelectorAll('td')].map((c) => c.textContent!.trim())));
    expect(rows.map((r) => r[1])).toEqual(['gen-retest-4', 'gen-retest-3', 'gen-retest-2', 'gen-retest-1', 'gen-retest-0']);
    expect(rows[1]!.slice(2, 7)).toEqual(['MARGINAL', 'MARGINAL fec-margin spark-b L1 1.50 dec', 'GEN-RETEST-0001', 'cable-07', 'batch-3']);
    // The one FEC margin of the run's result (#31 item 2); the deciding value is in the short code beside it.
    const [stored] = await lab.store.db.all<{ fec_margin_decades: number }>('SELECT fec_margin_decades FROM runs WHERE run_id = ?', [rows[1]![1]]);
    expect(rows[1]![11]).toBe(stored!.fec_margin_decades.toFixed(2));
    await page.close();
  });

  it("a cable's page: runs on an integer axis, the FEC margin from 0 with the FAIL and MARGINAL lines, points by outcome", async () => {
    const page = await open('/cables/GEN-RETEST-0001');
    const [c] = await charts(page);
    expect(c!.id).toBe('cable-margin');
    expect(c!.axes.map((a) => a.label)).toEqual(['run (oldest first)', 'FEC margin (decades)']);
    const x = numericTicks(c!.axes[0]!, true);
    expect(x[0]).toBeGreaterThanOrEqual(1);
    expect(x.at(-1)).toBeLessThanOrEqual(5);
    const y = numericTicks(c!.axes[1]!);
    expect(y[0]).toBe(0);
    expect(y.at(-1)).toBeGreaterThanOrEqual(2);
    // FAIL, FAIL, ERROR, MARGINAL, PASS: the ERROR run judged nothing and has no point.
    expect(c!.series.map((s) => [s.label, s.points])).toEqual([
      ['PASS', 1],
      ['MARGINAL', 1],
      ['FAIL', 2],
      ['FAIL line (1)', 5],
      ['MARGINAL line (2)', 5],
    ]);
    expect(await page.$$eval('#history tbody tr', (t) => t.length)).toBe(5);
    await page.close();
  });

  it("a part's yield: cables by their latest verdict, runs beside them; histograms from 0 with whole counts and every bin whole", async () => {
    const page = await open('/parts/NJAAKK0006?simulated=1');
    const rows = await page.$$eval('#yield tbody tr', (trs) => trs.map((t) => [...t.querySelectorAll('td,th')].map((c) => c.textContent)));
    // lot 250301: the retested cable, PASS by its latest verdict (the golden cable checks the bench: it is no cable of the
    // part's yield, #31); its runs beside it.
    expect(rows.find((r) => r[0] === '250301')!.slice(1, 12)).toEqual(['1', '0', '0', '0', '100.0 %', '7', '1', '2', '1', '0', '0']);
    // The simulated good-qsfp56 is a QSFP56 part of its own now (MCP1650-V00AE30): not in this part's lots.
    expect(rows.map((r) => r[0])).not.toContain('240412');
    const cs = await charts(page);
    expect(cs.map((c) => c.id)).toEqual(['fec-margin', 'worst-ber']);
    for (const c of cs) {
      const y = numericTicks(c.axes[1]!, true);
      expect(y[0]).toBe(0);
      expect(c.axes[1]!.label).toBe('cables');
    }
    expect(
      cs[1]!.axes[0]!.ticks.every((t) => /^1e-\d+$/.test(t)),
      cs[1]!.axes[0]!.ticks.join(', '),
    ).toBe(true);
    // Stacked: the tallest series holds every cable (the part's one: the retested one; the golden cable is not counted).
    const spec = JSON.parse((await page.textContent('#fec-margin-data'))!) as {
      x: number[];
      xRange: [number, number];
      barWidth: number;
      series: { values: number[] }[];
    };
    expect(spec.series[0]!.values.reduce((a, b) => a + b, 0)).toBe(1);
    expect(spec.xRange[0]).toBeLessThanOrEqual(spec.x[0]! - spec.barWidth / 2);
    expect([spec.series[0]!.values[0], spec.series[0]!.values.at(-1)]).toEqual([0, 0]); // an empty bin each side: the end bins drawn whole
    expect(spec.xRange[1]).toBeGreaterThanOrEqual(spec.x.at(-1)! + spec.barWidth / 2);
    await page.close();
    const real = await open('/parts/NJAAKK0006');
    expect(await real.$$eval('#yield tbody tr', (t) => t.map((r) => r.getAttribute('data-lot')))).toEqual(['250301', null]);
    const vendorHref = await real.getAttribute('main > p:not(.scope) a', 'href');
    await real.close();
    // The vendor's page: the same cables (one part number), its charts' axes read the same way.
    const vendor = await open(vendorHref!);
    const vrow = await vendor.$$eval('#yield tbody tr.all > *', (cells) => cells.map((c) => c.textContent));
    expect(vrow.slice(1)).toEqual(['1', '0', '0', '0', '100.0 %', '7', '1', '2', '1', '0', '0']);
    for (const c of await charts(vendor)) expect(numericTicks(c.axes[1]!, true)[0]).toBe(0);
    await vendor.close();
  });

  it('parts and vendors: cables and runs per part number and vendor', async () => {
    const page = await open('/parts');
    const nj = await page.$$eval('#parts tr[data-part="NJAAKK0006"] td', (tds) => tds.map((t) => t.textContent));
    expect(nj.slice(2)).toEqual(['1', '0', '0', '0', '100.0 %', '7', '1', '2', '1', '0', '0']);
    expect(await page.textContent('p.scope')).toMatch(/Real runs only/);
    await page.close();
  });

  it('batches: each box with its runs; a box lists its cables with their latest outcome', async () => {
    const list = await open('/batches');
    expect(await list.$$eval('#batches tbody tr a', (as) => as.map((a) => a.textContent))).toEqual(expect.arrayContaining(['batch-1', 'batch-2', 'batch-3']));
    await list.close();
    const page = await open(`/batches/${encodeURIComponent(lab.retest.batchId)}`);
    const cables = await page.$$eval('#batch-cables tbody tr', (trs) => trs.map((t) => [...t.querySelectorAll('td')].map((c) => c.textContent)));
    // The box's cables (its golden runs check the bench and are shown on /golden, not as cables of the box, #31).
    expect(cables.map((c) => [c[0], c[2]])).toEqual([['cable-07', 'PASS']]);
    expect(cables[0]![6]!.split(' ')).toEqual(lab.retest.runIds);
    await page.close();
  });

  it("a run's page: the charts' axes, phases and decision; the soak bound's last point is the certificate's headline", async () => {
    const clone = lab.simRuns[0]!;
    const page = await open(`/runs/${clone.runId}`);
    expect(await page.textContent('#outcome')).toBe('FAIL');
    // A quick run: its signed document is the set-up check (the same body and headline a certificate has).
    const certHref = await page.getAttribute('a.file[href$="setup-check.json"]', 'href');
    const cert = (await (await page.request.get(new URL(certHref!, dash.url).href)).json()) as {
      body: { decidedAtS: number; headline: { receivers: { node: string; lanes: { lane: number; berUb95: number }[] }[] } };
    };
    const cs = await charts(page);
    expect(cs.map((c) => c.id)).toEqual(['ber-spark-a', 'ber-spark-b', 'throughput']);
    for (const c of cs.filter((x) => x.kind === 'run-ber')) {
      expect(c.axes.map((a) => a.label)).toEqual(['minutes since start', 'pre-FEC BER', 'NIC °C']);
      numericTicks(c.axes[0]!, true);
      // Decades labelled, the ticks between them left blank.
      const decades = c.axes[1]!.ticks.filter(Boolean);
      expect(decades.length).toBeGreaterThan(2);
      expect(
        decades.every((t) => /^1e-\d+$/.test(t)),
        decades.join(', '),
      ).toBe(true);
      numericTicks(c.axes[2]!);
      const bound = c.series.find((s) => s.label.startsWith('soak bound'))!;
      const h = cert.body.headline.receivers.find((r) => r.node === c.node)!;
      expect(bound.last!.toExponential(3)).toBe(Math.max(...h.lanes.map((l) => l.berUb95)).toExponential(3));
      expect(c.decision!.atS).toBe(cert.body.decidedAtS);
      expect(c.phases!.length).toBeGreaterThanOrEqual(5);
      expect(c.series.filter((s) => s.label.startsWith('lane ')).length).toBe(4);
      expect(c.series.find((s) => s.label.startsWith('FAIL line'))!.last).toBeCloseTo(2.4e-5, 12);
    }
    expect(cs.find((c) => c.node === 'spark-b')!.outlier).toMatchObject({ lane: 2 });
    expect(await page.textContent('#ber-spark-b .outlier')).toMatch(/^outlier: lane 2, at least \d+x the other lanes/);
    const tp = cs.find((c) => c.id === 'throughput')!;
    expect(tp.axes[1]!.label).toBe('Gb/s');
    numericTicks(tp.axes[1]!);
    expect(tp.series.map((s) => s.label).sort()).toEqual([
      'rail 0 spark-a → spark-b',
      'rail 0 spark-b → spark-a',
      'rail 1 spark-a → spark-b',
      'rail 1 spark-b → spark-a',
    ]);
    // The headline table states the same bound as the chart and the certificate.
    const hl = await page.$$eval('#headline tbody tr', (trs) => trs.map((t) => [t.getAttribute('data-node'), t.querySelector('.hl-lanes')!.textContent]));
    for (const [node, lanes] of hl) {
      const h = cert.body.headline.receivers.find((r) => r.node === node)!;
      for (const l of h.lanes) expect(lanes).toContain(`lane ${l.lane} < ${l.berUb95.toExponential(1)}`);
    }
    expect(await page.$$eval('#eeprom > tbody > tr', (t) => t.map((r) => r.getAttribute('data-node')))).toEqual(['spark-a', 'spark-b']);
    await page.close();
  });

  it("a running run's page: its charts grow as its journal does, its time left updates, and it becomes the finished page", async () => {
    const clone = lab.simRuns[0]!;
    const source = (await (await fetch(`${dash.url}api/runs/${clone.runId}`)).json()) as { runDir: string };
    const lines = readFileSync(join(source.runDir, 'journal.jsonl'), 'utf8').split('\n').filter(Boolean);
    const runId = 'gen-running-0001';
    const dir = join(lab.out, 'box-9', runId);
    mkdirSync(dir, { recursive: true });
    const half = Math.floor(lines.length / 2);
    writeFileSync(join(dir, 'journal.jsonl'), lines.slice(0, half).join('\n') + '\n');
    await startRunning(lab.store, runId, 'box-9', 'failing-clone');
    await lab.store.runLive(runId, 1, new Date().toISOString(), { phase: 'soak-idle', elapsedS: 100, phaseRemainingS: null, runRemainingS: 200 } as never);
    const page = await open(`/runs/${runId}`);
    expect(await page.textContent('#outcome')).toBe('running');
    const left = (text: string) => page.waitForFunction((t) => document.getElementById('run-left')!.textContent === t, text, { timeout: 15_000 });
    await left('3:20');
    const before = Number(await page.getAttribute('body', 'data-series-until'));
    const pointsBefore = (await charts(page)).find((c) => c.id === 'ber-spark-b')!.series[0]!.points;
    appendFileSync(join(dir, 'journal.jsonl'), lines.slice(half).join('\n') + '\n');
    await lab.store.runLive(runId, 2, new Date().toISOString(), { phase: 'soak-loaded', elapsedS: 250, phaseRemainingS: null, runRemainingS: 50 } as never);
    await page.waitForFunction((b) => Number(document.body.getAttribute('data-series-until')) > b, before, { timeout: 15_000 });
    await left('0:50');
    expect(await page.textContent('#run-phase')).toBe('soak-loaded');
    const grown = (await charts(page)).find((c) => c.id === 'ber-spark-b')!;
    expect(grown.series[0]!.points).toBeGreaterThan(pointsBefore);
    expect(grown.outlier).toMatchObject({ lane: 2 });
    const p = (await import('../fixtures/records/build.js')).passRecord();
    await Promise.all([page.waitForNavigation({ timeout: 15_000 }), lab.store.runFinished({ ...p, runId }, { runDir: null, controller: 'ctl-test' })]);
    await page.waitForSelector('body[data-ready]');
    expect(await page.textContent('#outcome')).toBe('PASS');
    await page.close();
  });

  it("the golden cable's control chart has every golden run and its drift limits", async () => {
    const page = await open('/golden');
    const golden = await charts(page);
    const bw = golden.find((c) => c.id.endsWith('ibWriteBwGbps'))!;
    expect(bw.kind).toBe('control');
    expect(bw.axes[0]!.label).toBe('golden run (oldest first)');
    numericTicks(bw.axes[0]!, true);
    const y = numericTicks(bw.axes[1]!);
    expect(y[0]).toBeLessThan(175.66); // the lower drift limit is on the chart
    expect(y.at(-1)).toBeGreaterThan(185);
    // Every figure's chart: whole golden runs on x, distinct numbers on y (no "1.084, 1.084, 1.084").
    expect(golden.map((c) => c.axes[1]!.label)).toEqual([
      'ib_write_bw, both rails (Gb/s)',
      'NCCL bus bandwidth (GB/s)',
      'worst-lane pre-FEC BER, 95% upper bound (log10)',
      'NIC temperature, max (°C)',
    ]);
    for (const c of golden) {
      numericTicks(c.axes[0]!, true);
      numericTicks(c.axes[1]!);
    }
    expect(bw.series.map((s) => [s.label, s.points])).toEqual([
      ['value', 6],
      ['centre', 6],
      ['upper limit', 6],
      ['lower limit', 6],
    ]);
    expect(await page.$$eval('table.golden tbody tr', (t) => t.length)).toBe(6);
    // Centre 184.9 Gb/s (median), limits ± 5 %: 175.66..194.15; only the last run's 174.5 is outside.
    expect(await page.$$eval('table.golden td.out', (tds) => tds.map((t) => t.textContent))).toEqual(['174.5']);
    await page.close();
  });

  it('a live run appears, updates as its status arrives, and leaves when it finishes', async () => {
    const page = await open('/live');
    await page.waitForFunction(() => document.getElementById('live-state')!.textContent === 'connected');
    const runId = 'gen-live-0001';
    await startRunning(lab.store, runId, 'box-7', 'good-qsfp56');
    await lab.store.runLive(runId, 1, new Date().toISOString(), {
      phase: 'soak-idle',
      elapsedS: 130,
      phaseRemainingS: null,
      runRemainingS: 470,
      laneRates: { 'spark-a': [0, 0, 12.5, 0], 'spark-b': [0, 0, 0, 0] },
      nicTempC: { 'spark-a': 61, 'spark-b': 60 },
      gpuTempC: { 'spark-a': 40, 'spark-b': 41 },
      gpuUtilPct: { 'spark-a': 0, 'spark-b': 0 },
    } as never);
    const row = `#live tr[data-run="${runId}"]`;
    await page.waitForSelector(`${row} td.phase:text-is("soak-idle")`, { timeout: 10_000 });
    expect(await page.textContent(`${row} td.remaining`)).toBe('7:50');
    expect(await page.getAttribute(`${row} a`, 'href')).toBe(`/runs/${runId}`);
    expect(await page.$$eval(`${row} td.rates span.outlier`, (s) => s.map((x) => x.textContent))).toEqual(['13']);
    expect(await page.textContent(`${row} td.rates`)).toBe('spark-a: 0 / 0 / 13 / 0; spark-b: 0 / 0 / 0 / 0');
    await lab.store.runLive(runId, 2, new Date().toISOString(), {
      phase: 'soak-loaded',
      elapsedS: 800,
      phaseRemainingS: null,
      runRemainingS: 3500,
      laneRates: { 'spark-a': [0, 0, 2400, 0], 'spark-b': [0, 0, 0, 0] },
      nicTempC: { 'spark-a': 79, 'spark-b': 77 },
    } as never);
    await page.waitForSelector(`${row} td.phase:text-is("soak-loaded")`, { timeout: 10_000 });
    expect(await page.textContent(`${row} td.nic`)).toBe('spark-a: 79; spark-b: 77');
    expect(await page.textContent(`${row} td.rates`)).toBe('spark-a: 0 / 0 / 2.4e+3 / 0; spark-b: 0 / 0 / 0 / 0');
    const p = (await import('../fixtures/records/build.js')).passRecord();
    await lab.store.runFinished({ ...p, runId }, { runDir: null, controller: 'ctl-test' });
    await page.waitForSelector(row, { state: 'detached', timeout: 10_000 });
    await page.close();
  });

  it('hostile EEPROM strings stay text on every page; no request leaves the dashboard; no script error', async () => {
    for (const path of [
      '/',
      `/cables/${encodeURIComponent(HOSTILE_SERIAL)}`,
      '/parts?simulated=1',
      '/golden',
      `/runs/${lab.hostileRunId}`,
      '/batches',
      `/vendors/${encodeURIComponent(lab.simRuns[0]!.vendor)}?simulated=1`,
    ]) {
      const page = await open(path);
      expect(await page.evaluate('window.__pwned ?? null')).toBeNull();
      await page.close();
    }
    const page = await open('/');
    expect(await page.$$eval('#runs tbody tr td', (tds) => tds.some((t) => t.textContent === 'PN"><svg onload=window.__pwned=2>'))).toBe(true);
    await page.close();
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
  });
});
