// The dashboard in headless Chromium (Debian's, via playwright-core): the pages render with the data of simulated runs,
// the filters work, the charts have their points, a live run updates as its status arrives, nothing loads from outside,
// and hostile EEPROM strings run no script.
import { rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, CHROMIUM_PATH, launchChromium } from '../../scripts/chromium.js';
import { startDashboard, type Dashboard } from '../../src/dashboard/server.js';
import { HOSTILE_SERIAL, makeLabStore, type LabStore } from './lab-store.js';

const have = chromiumAvailable();
if (!have) console.warn(`\n!!! SKIPPING dashboard browser tests: no chromium at ${CHROMIUM_PATH} (apt-get install -y chromium) !!!\n`);

type ChartInfo = { id: string; kind: string; series: { label: string; points: number }[] };

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
    if (await page.$('script[src="/static/dashboard.js"]')) await page.waitForSelector('body[data-ready]', { timeout: 10_000 });
    return page;
  }

  it('the run list shows every run; the outcome and part filters narrow it; each run links its certificate', async () => {
    const page = await open('/');
    const ids = await page.$$eval('#runs tbody tr', (trs) => trs.map((t) => t.getAttribute('data-run')));
    expect(ids).toHaveLength(10);
    for (const s of lab.simRuns) expect(ids).toContain(s.runId);
    await page.selectOption('select[name=outcome]', 'FAIL');
    await Promise.all([page.waitForNavigation(), page.click('form.filters button[type=submit]')]);
    const failed = await page.$$eval('#runs tbody tr', (trs) => trs.map((t) => [t.getAttribute('data-run'), t.querySelector('td:nth-child(3)')!.textContent]));
    expect(failed.sort()).toEqual(
      [
        [lab.hostileRunId, 'FAIL'],
        [lab.simRuns[0]!.runId, 'FAIL'],
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

  it("a cable's history and a part's yield page draw their charts with every point", async () => {
    const clone = lab.simRuns[0]!;
    const cable = await open(`/cables/${encodeURIComponent(clone.serial)}`);
    const charts = (await cable.evaluate('window.cablequalCharts')) as ChartInfo[];
    expect(charts).toEqual([{ id: 'cable-margin', kind: 'points', series: [{ label: 'FEC margin', points: 1 }] }]);
    expect(await cable.$$eval('#cable-margin canvas', (c) => c.length)).toBeGreaterThan(0);
    await cable.close();
    const part = await open('/parts/NJAAKK0006');
    const pc = (await part.evaluate('window.cablequalCharts')) as ChartInfo[];
    // The generated golden cable (6 PASS runs, lot 250301).
    expect(pc.map((c) => c.id)).toEqual(['fec-margin']);
    const yieldRows = await part.$$eval('#yield tbody tr', (trs) => trs.map((t) => [...t.querySelectorAll('td,th')].map((c) => c.textContent)));
    expect(yieldRows.find((r) => r[0] === '250301')!.slice(1, 6)).toEqual(['6', '0', '0', '0', '0']);
    await part.close();
  });

  it("the golden cable's control chart has every golden run and its drift limits", async () => {
    const page = await open('/golden');
    const charts = (await page.evaluate('window.cablequalCharts')) as ChartInfo[];
    const bw = charts.find((c) => c.id.endsWith('ibWriteBwGbps'))!;
    expect(bw.kind).toBe('control');
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
    await page.waitForFunction("document.getElementById('live-state').textContent === 'connected'");
    const runId = 'gen-live-0001';
    await lab.store.runStarted({
      runId,
      label: 'box-7',
      startedAt: new Date().toISOString(),
      simulated: true,
      scenario: 'good-qsfp56',
      protocol: { name: 'quick', sha256: 'c'.repeat(64), file: 'protocols/quick.json' },
      nodes: [
        { name: 'spark-a', host: 'spark-a' },
        { name: 'spark-b', host: 'spark-b' },
      ],
      controller: 'ctl-test',
      runDir: null,
    });
    await lab.store.runLive(runId, 1, new Date().toISOString(), {
      phase: 'soak-idle',
      elapsedS: 130,
      remainingS: 470,
      laneRates: { 'spark-a': [0, 0, 12.5, 0], 'spark-b': [0, 0, 0, 0] },
      nicTempC: { 'spark-a': 61, 'spark-b': 60 },
      gpuTempC: { 'spark-a': 40, 'spark-b': 41 },
      gpuUtilPct: { 'spark-a': 0, 'spark-b': 0 },
    } as never);
    const row = `#live tr[data-run="${runId}"]`;
    await page.waitForSelector(`${row} td.phase:text-is("soak-idle")`, { timeout: 10_000 });
    expect(await page.textContent(`${row} td.remaining`)).toBe('7:50');
    expect(await page.textContent(`${row} td.rates`)).toBe('spark-a: 0 / 0 / 13 / 0; spark-b: 0 / 0 / 0 / 0');
    await lab.store.runLive(runId, 2, new Date().toISOString(), {
      phase: 'soak-loaded',
      elapsedS: 800,
      remainingS: 3500,
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
    for (const path of ['/', `/cables/${encodeURIComponent(HOSTILE_SERIAL)}`, '/parts', '/golden']) {
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
