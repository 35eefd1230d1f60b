// One run, one truth (#31) over the full procedure (75 simulated minutes each: system tier): for good-qsfp56 (PASS) and
// failing-clone (FAIL) the figure under "FEC margin" is the same in --json, record.json, summary.csv, certificate.json,
// certificate.html, /api/runs and the dashboard's run list; each is a qualification that qualifies its cable, and the
// certificate's headline table names its own figure the loaded-soak FEC margin.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/domain/record.js';
import { startDashboard } from '../../src/dashboard/server.js';
import { chooseStore, openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/cli.js';
import { csvObjects } from '../helpers/csv.js';

describe('the full procedure: one FEC margin everywhere', { timeout: 300_000 }, () => {
  it('good-qsfp56 and failing-clone', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cq-truth-full-'));
    const env = { CABLEQUAL_LAB_KEY: join(root, 'no-key.pem') };
    const runs: { json: Record<string, any>; record: RunRecord }[] = [];
    for (const scenario of ['good-qsfp56', 'failing-clone']) {
      const r = await runCli(['run', '--sim', scenario, '--seed', '3', '--out', 'r', '--json'], { cwd: root, env });
      const json = JSON.parse(r.out) as Record<string, any>;
      runs.push({ json, record: JSON.parse(readFileSync(join(json['runDir'] as string, 'record.json'), 'utf8')) as RunRecord });
    }
    expect(runs.map((r) => r.json['outcome'])).toEqual(['PASS', 'FAIL']);
    const store = await openStore(chooseStore({ out: join(root, 'r') }));
    const dash = await startDashboard({ store, outDir: join(root, 'r'), port: 0, host: '127.0.0.1' });
    try {
      const api = (await (await fetch(new URL('/api/runs', dash.url))).json()) as { runs: Record<string, any>[] };
      const list = await (await fetch(new URL('/', dash.url))).text();
      for (const { json, record } of runs) {
        const value = record.result!.fecMargin!.value;
        expect([record.result!.kind, record.result!.qualifies]).toEqual(['qualification', true]);
        expect(json['result'].fecMargin.value).toBe(value);
        const runDir = json['runDir'] as string;
        expect(Number(csvObjects(readFileSync(join(runDir, 'summary.csv'), 'utf8'))[0]!['fec_margin_decades'])).toBe(value);
        const doc = JSON.parse(readFileSync(join(runDir, 'certificate.json'), 'utf8')) as { body: { summary: { fecMarginDecades: number } } };
        expect(doc.body.summary.fecMarginDecades).toBe(value);
        const html = readFileSync(join(runDir, 'certificate.html'), 'utf8');
        expect(html).toContain(`<b class="fec-margin">${value.toFixed(2)} decades</b>`);
        if (record.outcome === 'PASS') expect(html).toContain('<th class="num">loaded-soak FEC margin (decades)</th>');
        expect(api.runs.find((x) => x['runId'] === record.runId)!['fecMarginDecades']).toBe(value);
        const at = list.indexOf(`<tr data-run="${record.runId}">`);
        expect(list.slice(at, list.indexOf('</tr>', at))).toContain(`<td class="num margin">${value.toFixed(2)}</td>`);
      }
    } finally {
      await dash.close();
      await store.close();
    }
  });
});
