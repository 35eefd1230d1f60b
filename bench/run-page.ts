// Section 7: the dashboard's run page for a 75-minute run sampled at 1 Hz (the default protocol on the simulated
// good-qsfp56 lab, in virtual time). Loaded in headless Chromium until its charts are drawn (body[data-ready]): cold
// (a new dashboard, the journal read for the first time) and warm (the same dashboard again); and its series API.
import { readFileSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { writeReports } from '../src/cli/reports.js';
import { startDashboard } from '../src/dashboard/server.js';
import { importRuns } from '../src/store/import.js';
import { openStore } from '../src/store/open-store.js';
import { chromiumAvailable, launchChromium } from '../scripts/chromium.js';
import { runSim } from './sim-runs.js';
import { summarize, type Summary } from './stats.js';

// What section 7 runs and how often; the page's load-time target.
export const RUN_PAGE_PLAN = { scenario: 'good-qsfp56', protocol: 'protocols/spark-burnin.json', cold: 5, warm: 10, api: 10, targetMs: 1000 };

// What section 7 measured.
export interface RunPageBenchResult {
  plan: typeof RUN_PAGE_PLAN;
  loadAvg: { start: number[]; end: number[] };
  journal: { lines: number; bytes: number; runS: number; rawPointsPerReceiver: number[]; servedPointsPerReceiver: number[]; seriesJsonBytes: number };
  firstTabMs: number | null; // the very first load: a new tab (its renderer started), nothing cached
  pageColdMs: Summary | null;
  pageWarmMs: Summary | null;
  seriesColdMs: Summary | null;
  seriesWarmMs: Summary | null;
  htmlBytes: number;
}

// Section 7 (null when there is no Chromium to load the page in).
export async function benchRunPage(work: string, log: (s: string) => void): Promise<RunPageBenchResult | null> {
  if (!chromiumAvailable()) {
    log('  no chromium: run page section skipped');
    return null;
  }
  const start = loadavg();
  const protocolText = readFileSync(new URL(`../${RUN_PAGE_PLAN.protocol}`, import.meta.url), 'utf8');
  const reports = join(work, 'reports');
  const r = await runSim(RUN_PAGE_PLAN.scenario, protocolText, reports, 'bench-run-page');
  const io = {
    stdout: () => undefined,
    stderr: (x: string) => log(x.trimEnd()),
    readStdin: async () => '',
    isTTY: false,
    cwd: work,
    env: { CABLEQUAL_LAB_KEY: '/nonexistent/key.pem' },
  };
  await writeReports(r.record, r.runDir, io);
  const journalPath = join(r.runDir, 'journal.jsonl');
  log(`  ${RUN_PAGE_PLAN.scenario}: ${r.record.outcome}, journal ${(statSync(journalPath).size / 1e6).toFixed(1)} MB`);
  const store = await openStore({ engine: 'sqlite', target: join(work, 'run-page.db') });
  const browser = await launchChromium();
  const cold: number[] = [];
  const warm: number[] = [];
  const apiCold: number[] = [];
  const apiWarm: number[] = [];
  let htmlBytes = 0;
  const firstTab: number[] = [];
  let series: { receivers: { rawPoints: number; t: number[] }[] } | null = null;
  let seriesBytes = 0;
  try {
    await importRuns(store, [r.runDir], { cwd: work, controller: 'bench' });
    const url = (d: { url: string }) => `${d.url}runs/${encodeURIComponent(r.record.runId)}`;
    // One tab, as a person keeps one open: each load navigates it (the first one also starts its renderer).
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const load = async (d: { url: string }) => {
      const t = performance.now();
      await page.goto(url(d), { waitUntil: 'load' });
      await page.waitForSelector('body[data-ready]', { timeout: 30_000 });
      const ms = performance.now() - t;
      if (await page.getAttribute('body', 'data-series-error')) throw new Error('the run page could not draw its series');
      return ms;
    };
    {
      const d = await startDashboard({ store, outDir: reports, port: 0, host: '127.0.0.1' });
      try {
        firstTab.push(await load(d));
      } finally {
        await d.close();
      }
    }
    const fetchSeries = async (d: { url: string }) => {
      const t = performance.now();
      const res = await fetch(`${d.url}api/runs/${encodeURIComponent(r.record.runId)}/series`);
      const text = await res.text();
      const ms = performance.now() - t;
      if (res.status !== 200) throw new Error(`series: HTTP ${res.status}`);
      seriesBytes = text.length;
      series = JSON.parse(text) as typeof series;
      return ms;
    };
    for (let i = 0; i < RUN_PAGE_PLAN.cold; i++) {
      const d = await startDashboard({ store, outDir: reports, port: 0, host: '127.0.0.1' });
      try {
        cold.push(await load(d));
        for (let k = 0; k < RUN_PAGE_PLAN.warm / RUN_PAGE_PLAN.cold; k++) warm.push(await load(d));
      } finally {
        await d.close();
      }
      const d2 = await startDashboard({ store, outDir: reports, port: 0, host: '127.0.0.1' });
      try {
        apiCold.push(await fetchSeries(d2));
        for (let k = 0; k < RUN_PAGE_PLAN.api / RUN_PAGE_PLAN.cold; k++) apiWarm.push(await fetchSeries(d2));
        htmlBytes = (await (await fetch(url(d2))).text()).length;
      } finally {
        await d2.close();
      }
      log(`    cold page ${cold.at(-1)!.toFixed(0)} ms, cold series ${apiCold.at(-1)!.toFixed(0)} ms`);
    }
  } finally {
    await browser.close();
    await store.close();
  }
  const s = series as { receivers: { rawPoints: number; t: number[] }[] } | null;
  const lines = readFileSync(journalPath, 'utf8').split('\n').filter(Boolean).length;
  return {
    plan: RUN_PAGE_PLAN,
    loadAvg: { start, end: loadavg() },
    journal: {
      lines,
      bytes: statSync(journalPath).size,
      runS: r.record.phases.at(-1)?.endS ?? 0,
      rawPointsPerReceiver: s?.receivers.map((x) => x.rawPoints) ?? [],
      servedPointsPerReceiver: s?.receivers.map((x) => x.t.length) ?? [],
      seriesJsonBytes: seriesBytes,
    },
    firstTabMs: firstTab[0] ?? null,
    pageColdMs: summarize(cold),
    pageWarmMs: summarize(warm),
    seriesColdMs: summarize(apiCold),
    seriesWarmMs: summarize(apiWarm),
    htmlBytes,
  };
}
