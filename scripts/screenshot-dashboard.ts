// Usage: npx tsx scripts/screenshot-dashboard.ts <run dir> <out.png>
//    or: npx tsx scripts/screenshot-dashboard.ts --url <dashboard page URL> <out.png>
// A run's page of the dashboard in headless Chromium, saved as a PNG down to its charts (docs/dashboard-run-failing-clone.png):
// the run directory is indexed into a throwaway store (its reports directory's parent serves the files), the
// dashboard is started on 127.0.0.1, the page is loaded and its charts drawn, then everything is stopped.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { startDashboard } from '../src/dashboard/server.js';
import { importRuns } from '../src/store/import.js';
import { openStore } from '../src/store/open-store.js';
import { chromiumAvailable, CHROMIUM_PATH, launchChromium } from './chromium.js';

// `untilSelector`: the picture ends below that element (a run page: its charts), else the whole page.
async function shoot(url: string, png: string, untilSelector?: string): Promise<void> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1240, height: 900 }, deviceScaleFactor: 1 });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // Nothing may leave the machine: only the dashboard itself is asked.
    const origin = new URL(url).origin;
    await page.route('**/*', (route) => (route.request().url().startsWith(origin) ? route.continue() : route.abort()));
    await page.goto(url, { waitUntil: 'load' });
    if (await page.$('script[src="/static/dashboard.js"]')) await page.waitForSelector('body[data-ready]', { timeout: 20_000 });
    if (errors.length) throw new Error(`the page reported: ${errors.join('; ')}`);
    const box = untilSelector ? await page.locator(untilSelector).boundingBox() : null;
    await page.screenshot({
      path: resolve(png),
      fullPage: true,
      ...(box ? { clip: { x: 0, y: 0, width: 1240, height: Math.ceil(box.y + box.height + 12) } } : {}),
    });
  } finally {
    await browser.close();
  }
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (!chromiumAvailable()) {
    process.stderr.write(`chromium not found at ${CHROMIUM_PATH} (apt-get install chromium, or set CABLEQUAL_CHROMIUM)\n`);
    return 1;
  }
  if (args[0] === '--url' && args[1] && args[2]) {
    await shoot(args[1], args[2]);
    process.stdout.write(`${resolve(args[2])}\n`);
    return 0;
  }
  const [runDir, png] = args;
  if (!runDir || !png) {
    process.stderr.write('usage: screenshot-dashboard <run dir> <out.png> | --url <page URL> <out.png>\n');
    return 2;
  }
  const dir = resolve(runDir);
  const out = dirname(dirname(dir)); // <out>/<serial>/<run id>
  const work = mkdtempSync(join(tmpdir(), 'cq-shot-'));
  const store = await openStore({ engine: 'sqlite', target: join(work, 'cablequal.db') });
  try {
    await importRuns(store, [dir], { cwd: process.cwd(), controller: 'screenshot' });
    const dash = await startDashboard({ store, outDir: out, port: 0, host: '127.0.0.1' });
    try {
      await shoot(`${dash.url}runs/${encodeURIComponent(basename(dir))}`, png, '#run-charts');
    } finally {
      await dash.close();
    }
  } finally {
    await store.close();
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(`${resolve(png)}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    process.stderr.write(`screenshot-dashboard: ${err.message}\n`);
    process.exit(1);
  },
);
