// Usage: npx tsx scripts/screenshot-certificate.ts <certificate.html> <out.png>
// Renders the certificate at A4 width in headless Chromium and saves a full-page PNG (docs/certificate-failing-clone.png).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromiumAvailable, CHROMIUM_PATH, launchChromium } from './chromium.js';

async function main(): Promise<number> {
  const [html, png] = process.argv.slice(2);
  if (!html || !png) {
    process.stderr.write('usage: screenshot-certificate <certificate.html> <out.png>\n');
    return 2;
  }
  if (!chromiumAvailable()) {
    process.stderr.write(`chromium not found at ${CHROMIUM_PATH} (apt-get install chromium, or set CABLEQUAL_CHROMIUM)\n`);
    return 1;
  }
  const browser = await launchChromium();
  try {
    // 794 px = 210 mm at 96 dpi; a 2x scale keeps the small print legible in the PNG.
    const page = await browser.newPage({ viewport: { width: 794, height: 1123 }, deviceScaleFactor: 2 });
    // Nothing may leave the machine: abort any non-file request (there should be none).
    await page.route('**/*', (route) => (route.request().url().startsWith('file:') ? route.continue() : route.abort()));
    await page.goto(pathToFileURL(resolve(html)).href, { waitUntil: 'load' });
    await page.emulateMedia({ media: 'print' });
    await page.screenshot({ path: resolve(png), fullPage: true });
    process.stdout.write(`${resolve(png)}\n`);
    return 0;
  } finally {
    await browser.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    process.stderr.write(`screenshot-certificate: ${err.message}\n`);
    process.exit(1);
  },
);
