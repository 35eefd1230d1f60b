import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderCertificateHtml } from '../../src/report/certificate-html.js';
import { chromiumAvailable, CHROMIUM_PATH, launchChromium } from '../../scripts/chromium.js';
import { crowdedFailRecord, errorRecord, failingCloneRecord, failingCloneTimeseries, passRecord, passTimeseries } from '../fixtures/records/build.js';
import { tempRoot } from '../fixtures/records/run-dir.js';

const have = chromiumAvailable();
if (!have) console.warn(`\n!!! SKIPPING certificate browser tests: no chromium at ${CHROMIUM_PATH} (apt-get install -y chromium) !!!\n`);

describe.skipIf(!have)('certificate.html in headless Chromium', () => {
  let browser: Browser;
  const dir = tempRoot('cq-browser-');
  const files = {
    fail: join(dir, 'fail.html'),
    pass: join(dir, 'pass.html'),
    error: join(dir, 'error.html'),
    crowded: join(dir, 'crowded.html'),
  };
  beforeAll(async () => {
    writeFileSync(
      files.fail,
      renderCertificateHtml(failingCloneRecord(), failingCloneTimeseries(), { fingerprint: `sha256:${'ab'.repeat(32)}`, journalSha256: 'cd'.repeat(32) }),
    );
    writeFileSync(files.pass, renderCertificateHtml(passRecord(), passTimeseries()));
    writeFileSync(files.error, renderCertificateHtml(errorRecord()));
    writeFileSync(files.crowded, renderCertificateHtml(crowdedFailRecord(), failingCloneTimeseries()));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function open(file: string) {
    const page = await browser.newPage({ viewport: { width: 794, height: 1123 } });
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    await page.emulateMedia({ media: 'print' });
    return { page, requests };
  }

  async function pdfPages(file: string): Promise<number> {
    const { page } = await open(file);
    const pdf = await page.pdf({ format: 'A4', printBackground: true, preferCSSPageSize: true });
    await page.close();
    // Page objects, not the /Pages tree node.
    return (pdf.toString('latin1').match(/\/Type\s*\/Page(?![s\w])/g) ?? []).length;
  }

  it('draws every lane series and the throughput series with data points, loading nothing from outside', async () => {
    const { page, requests } = await open(files.fail);
    const charts = await page.$$eval('svg.lane-chart', (svgs) =>
      svgs.map((s) => ({
        lanes: s.querySelectorAll('path.lane').length,
        points: s.querySelectorAll('circle.pt').length,
        segments: [...s.querySelectorAll('path.lane')].map((p) => (p.getAttribute('d') ?? '').split(/[ML]/).length - 1),
        temp: s.querySelectorAll('path.temp').length,
        phases: s.querySelectorAll('rect.phase').length,
        height: s.getBoundingClientRect().height,
      })),
    );
    expect(charts).toHaveLength(2); // both receivers
    for (const c of charts) {
      expect(c.lanes).toBe(4);
      expect(c.temp).toBe(1);
      expect(c.phases).toBe(3);
      expect(c.height).toBeGreaterThan(100);
      // 1086 s at 6 s per point = 181 points per lane, all kept (under the 200-point cap)
      expect(c.segments).toEqual([181, 181, 181, 181]);
      expect(c.points).toBe(4 * 181);
    }
    const rails = await page.$$eval('svg.throughput-chart path.rail', (ps) => ps.length);
    expect(rails).toBe(2);
    expect(requests.every((u) => u.startsWith('file:'))).toBe(true);
    await page.close();
  });

  it('long runs are bucketed to at most 200 points per series', async () => {
    const { page } = await open(files.pass);
    const segs = await page.$$eval('svg.lane-chart path.lane', (ps) => ps.map((p) => (p.getAttribute('d') ?? '').split(/[ML]/).length - 1));
    expect(segs).toHaveLength(8);
    for (const s of segs) expect(s).toBeLessThanOrEqual(200);
    for (const s of segs) expect(s).toBeGreaterThan(100);
    await page.close();
  });

  it('nothing overflows the page width', async () => {
    for (const f of Object.values(files)) {
      const { page } = await open(f);
      // A string, so this Node-typed test needs no DOM lib: elements whose right edge passes the viewport.
      const overflow = (await page.evaluate(`(() => {
        const width = document.documentElement.clientWidth;
        const wide = [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > width + 0.5).map((el) => el.tagName + '.' + el.className);
        return { scroll: document.documentElement.scrollWidth - width, wide };
      })()`)) as { scroll: number; wide: string[] };
      expect(overflow).toEqual({ scroll: 0, wide: [] });
      await page.close();
    }
  });

  it('prints on at most two A4 pages', async () => {
    const fail = await pdfPages(files.fail);
    expect(fail).toBeGreaterThanOrEqual(1);
    expect(fail).toBeLessThanOrEqual(2);
    expect(await pdfPages(files.pass)).toBeLessThanOrEqual(2);
    expect(await pdfPages(files.error)).toBeLessThanOrEqual(2);
    expect(await pdfPages(files.crowded)).toBeLessThanOrEqual(2);
  });
});
