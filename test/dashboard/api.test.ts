// The dashboard's JSON API and pages over HTTP: every run with its fields, filters, bounded pages, read-only,
// certificates served from the reports directory and nothing outside it, hostile EEPROM strings escaped.
import { readFileSync, symlinkSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/domain/record.js';
import { startDashboard, type Dashboard } from '../../src/dashboard/server.js';
import { HOSTILE_PN, HOSTILE_SERIAL, HOSTILE_VENDOR, makeLabStore, type LabStore } from './lab-store.js';

let lab: LabStore;
let dash: Dashboard;
beforeAll(async () => {
  lab = await makeLabStore();
  dash = await startDashboard({ store: lab.store, outDir: lab.out, port: 0, host: '127.0.0.1' });
}, 120_000);
afterAll(async () => {
  await dash?.close();
  await lab?.store.close();
  if (lab) rmSync(lab.out, { recursive: true, force: true });
  if (lab) rmSync(join(lab.out, '..', 'cq-dash-secret.txt'), { force: true });
});

// A raw request: the path exactly as given (fetch would normalise `..` away).
function raw(
  path: string,
  method = 'GET',
  port = dash.port,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => void (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const api = async <T>(path: string): Promise<T> => JSON.parse((await raw(path)).body) as T;
type Runs = {
  total: number;
  runs: {
    runId: string;
    outcome: string;
    serial: string | null;
    partNumber: string | null;
    vendor: string | null;
    lot: string | null;
    station: string | null;
    startedAt: string;
    simulated: boolean;
    certificateFile: string | null;
  }[];
};

describe('dashboard API', () => {
  it('binds to 127.0.0.1 and lists every run with id, outcome, serial, part number, vendor, start time, simulated flag', async () => {
    expect(dash.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const all = await api<Runs>('/api/runs');
    expect(all.total).toBe(3 + 1 + 6 + 5);
    for (const s of lab.simRuns) {
      const r = all.runs.find((x) => x.runId === s.runId)!;
      expect(r).toMatchObject({
        outcome: s.outcome,
        serial: s.serial,
        partNumber: s.partNumber,
        vendor: s.vendor,
        simulated: true,
        // quick-protocol runs: their document is a set-up check, never a certificate
        certificateFile: 'setup-check.html',
        runKind: 'setup-check',
      });
      expect(Date.parse(r.startedAt)).toBeGreaterThan(Date.parse('2026-01-01'));
    }
    expect(lab.simRuns.map((s) => s.outcome)).toEqual(['FAIL', 'PASS', 'MARGINAL']);
    expect(all.runs.find((r) => r.runId === lab.hostileRunId)).toMatchObject({ vendor: HOSTILE_VENDOR, partNumber: HOSTILE_PN, serial: HOSTILE_SERIAL });
  });

  it('filters by outcome, part number, vendor, lot, station and date', async () => {
    const fail = await api<Runs>('/api/runs?outcome=FAIL');
    expect(fail.runs.map((r) => r.runId).sort()).toEqual([lab.simRuns[0]!.runId, lab.hostileRunId, 'gen-retest-0', 'gen-retest-1'].sort());
    const clone = lab.simRuns[0]!;
    expect((await api<Runs>(`/api/runs?part=${encodeURIComponent(clone.partNumber)}`)).runs.map((r) => r.runId)).toEqual([clone.runId]);
    expect((await api<Runs>(`/api/runs?vendor=${encodeURIComponent(HOSTILE_VENDOR)}`)).runs.map((r) => r.runId)).toEqual([lab.hostileRunId]);
    const golden = await api<Runs>('/api/runs?lot=250301');
    expect(golden.total).toBe(6 + 5);
    const sim = (await api<Runs>('/api/runs')).runs.find((r) => r.runId === clone.runId)!;
    expect((await api<Runs>(`/api/runs?station=${encodeURIComponent(sim.station!)}`)).total).toBe(3);
    expect((await api<Runs>('/api/runs?from=2026-03-04&to=2026-03-04')).runs.map((r) => r.runId).sort()).toEqual(['gen-golden-2', 'gen-golden-3']);
    expect((await api<Runs>('/api/runs?outcome=PASS&lot=250301&from=2026-03-05')).total).toBe(2 + 1);
    expect((await api<Runs>(`/api/runs?batch=${encodeURIComponent(lab.retest.batchId)}`)).runs.map((r) => r.runId).sort()).toEqual(
      [...lab.retest.runIds, 'gen-golden-4', 'gen-golden-5'].sort(),
    );
  });

  it('the serial search matches a substring in any case, its LIKE wildcards taken literally', async () => {
    const clone = lab.simRuns[0]!;
    const part = clone.serial.slice(3, 9).toLowerCase();
    expect((await api<Runs>(`/api/runs?serial=${part}`)).runs.map((r) => r.runId)).toEqual([clone.runId]);
    expect((await api<Runs>('/api/runs?serial=gen-')).total).toBe(6 + 5);
    expect((await api<Runs>('/api/runs?serial=retest-0001')).runs.map((r) => r.runId).sort()).toEqual([...lab.retest.runIds].sort());
    expect((await api<Runs>('/api/runs?serial=%25')).total).toBe(0);
    expect((await api<Runs>('/api/runs?serial=GEN_GOLD')).total).toBe(0);
  });

  it('pages are bounded: limit 1..500, a bad filter is a 400 naming it', async () => {
    const p1 = await api<Runs & { limit: number; offset: number }>('/api/runs?limit=4');
    const p2 = await api<Runs>('/api/runs?limit=4&offset=4');
    expect(p1.runs).toHaveLength(4);
    expect(p1.total).toBe(15);
    expect(new Set([...p1.runs, ...p2.runs].map((r) => r.runId)).size).toBe(8);
    expect(p1.runs.map((r) => r.startedAt)).toEqual([...p1.runs.map((r) => r.startedAt)].sort().reverse());
    expect(await raw('/api/runs?limit=501')).toMatchObject({ status: 400, body: expect.stringContaining('limit') });
    expect(await raw('/api/runs?outcome=GOOD')).toMatchObject({ status: 400, body: expect.stringContaining('outcome') });
    expect(await raw('/api/runs?from=yesterday')).toMatchObject({ status: 400, body: expect.stringContaining('from') });
    expect(await raw(`/api/runs?vendor=${'x'.repeat(300)}`)).toMatchObject({ status: 400 });
    expect((await raw(`/api/runs?vendor=${'x'.repeat(5000)}`)).status).toBe(414);
  });

  it('a cable history, parts and vendors yield (ERROR and ABORTED apart), a part per lot, golden runs', async () => {
    const clone = lab.simRuns[0]!;
    const hist = await api<{ cable: { serial: string; part_number: string }; runs: { runId: string }[] }>(`/api/cables/${encodeURIComponent(clone.serial)}`);
    expect(hist.cable).toMatchObject({ serial: clone.serial, part_number: clone.partNumber });
    expect(hist.runs.map((r) => r.runId)).toEqual([clone.runId]);
    // Real runs only by default: the retested cable (FAIL, FAIL, ERROR, MARGINAL, PASS) is a cable, PASS by its latest
    // complete verdict; the golden cable (6 PASS runs) checks the bench and is no cable of the part (#31 item 3); the 11
    // runs beside them.
    type Yield = { cables: Record<string, number>; runs: Record<string, number>; counts: Record<string, number> };
    const parts = await api<{ parts: ({ partNumber: string; vendor: string | null } & Yield)[]; vendors: ({ vendor: string } & Yield)[] }>('/api/parts');
    const nj = parts.parts.find((p) => p.partNumber === 'NJAAKK0006')!;
    expect(nj.cables).toEqual({ PASS: 1, MARGINAL: 0, FAIL: 0, unjudged: 0 });
    expect(nj.runs).toEqual({ PASS: 7, MARGINAL: 1, FAIL: 2, ERROR: 1, ABORTED: 0, running: 0 });
    expect(nj.counts).toEqual(nj.runs);
    expect(parts.parts.map((p) => p.partNumber)).not.toContain(clone.partNumber); // the simulated clone: not in yield
    const withSim = await api<{ parts: ({ partNumber: string } & Yield)[] }>('/api/parts?simulated=1');
    // The simulated good-qsfp56 is a QSFP56 part of its own (MCP1650-V00AE30): counted only when simulated runs are asked.
    expect(withSim.parts.find((p) => p.partNumber === 'NJAAKK0006')!.cables).toEqual({ PASS: 1, MARGINAL: 0, FAIL: 0, unjudged: 0 });
    // Its run is a set-up check (the quick protocol): it qualifies no cable, so the cable has no qualified verdict (#31 item 3).
    expect(withSim.parts.find((p) => p.partNumber === 'MCP1650-V00AE30')!.cables).toEqual({ PASS: 0, MARGINAL: 0, FAIL: 0, unjudged: 1 });
    expect(parts.parts.map((p) => p.partNumber)).not.toContain('MCP1650-V00AE30');
    expect(withSim.parts.find((p) => p.partNumber === clone.partNumber)!.cables).toEqual({ PASS: 0, MARGINAL: 0, FAIL: 0, unjudged: 1 });
    expect(await raw('/api/parts?simulated=yes')).toMatchObject({ status: 400, body: expect.stringContaining('simulated') });
    type YieldPage = Yield & { lots: ({ lot: string } & Yield)[]; fecMargin: { bins: number[]; width: number; counts: Record<string, number[]> } };
    const y = await api<YieldPage>('/api/parts/NJAAKK0006');
    expect(y.lots.map((l) => l.lot)).toEqual(['250301']);
    // The retested cable; the golden cable is no cable of the part (#31 item 3).
    expect(y.lots[0]!.cables).toEqual({ PASS: 1, MARGINAL: 0, FAIL: 0, unjudged: 0 });
    expect(y.cables).toEqual(y.lots[0]!.cables);
    expect(y.runs).toMatchObject({ PASS: 7, MARGINAL: 1, FAIL: 2, ERROR: 1 });
    // One value per qualified cable in the distributions: the retested cable's latest verdict (no golden run, #31 item 3).
    expect(
      Object.values(y.fecMargin.counts)
        .flat()
        .reduce((a, b) => a + b, 0),
    ).toBe(1);
    const ys = await api<YieldPage>('/api/parts/NJAAKK0006?simulated=1');
    expect(ys.lots.map((l) => l.lot).sort()).toEqual(['250301']);
    const vendor = await api<YieldPage>(`/api/vendors/${encodeURIComponent(nj.vendor!)}`);
    expect(vendor.cables).toEqual({ PASS: 1, MARGINAL: 0, FAIL: 0, unjudged: 0 });
    expect(vendor.runs.PASS).toBe(7);
    const golden = await api<{ serial: string; runs: { runId: string; ibWriteBwGbps: number }[]; tolerances: Record<string, number> }[]>('/api/golden');
    expect(golden).toHaveLength(1);
    expect(golden[0]!.runs.map((r) => r.ibWriteBwGbps)).toEqual(lab.golden.bw);
    expect(golden[0]!.tolerances).toMatchObject({ throughputPct: 5 });
  });

  it("serves a run's certificate read-only from the reports directory, and nothing outside it", async () => {
    const run = await api<{ certificateUrl: string; reasons: { rule: string }[]; measurements: unknown[] }>(`/api/runs/${lab.simRuns[0]!.runId}`);
    expect(run.certificateUrl).toMatch(/^\/reports\/.+\/setup-check\.html$/);
    expect(run.reasons.some((r) => r.rule === 'lane-ratio' || r.rule === 'fec-margin')).toBe(true);
    expect(run.measurements.length).toBeGreaterThan(10);
    const cert = await raw(run.certificateUrl);
    expect(cert.status).toBe(200);
    expect(cert.headers['content-type']).toMatch(/text\/html/);
    expect(cert.headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(cert.body).toContain(lab.simRuns[0]!.serial);
    writeFileSync(join(lab.out, '..', 'cq-dash-secret.txt'), 'TOP-SECRET-CONTENT-42');
    symlinkSync('/etc', join(lab.out, 'etc-link'));
    for (const p of [
      '/reports/../cq-dash-secret.txt',
      '/reports/%2e%2e/cq-dash-secret.txt',
      '/reports/..%2fcq-dash-secret.txt',
      '/reports/%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      '/reports/etc-link/passwd',
      '/reports/',
    ]) {
      const r = await raw(p);
      expect([400, 403, 404], p).toContain(r.status);
      expect(r.body).not.toContain('TOP-SECRET-CONTENT-42');
      expect(r.body).not.toContain('root:');
    }
    expect((await raw('/api/runs', 'POST')).status).toBe(405);
  });

  it('serves only what a person opens: certificates, run reports, CSVs; never the store, the log, the record or (unasked) a journal', async () => {
    const run = await api<{ certificateUrl: string }>(`/api/runs/${lab.simRuns[1]!.runId}`);
    const dir = run.certificateUrl.slice(0, run.certificateUrl.lastIndexOf('/'));
    for (const f of ['setup-check.html', 'setup-check.json', 'summary.csv', 'lanes.csv', 'timeseries.csv', 'throughput.csv'])
      expect((await raw(`${dir}/${f}`)).status, f).toBe(200);
    // A link named like a report that leads to the store is refused as well.
    symlinkSync(join(lab.out, 'cablequal.db'), join(lab.out, 'certificate.html'));
    for (const p of [
      '/reports/cablequal.db',
      '/reports/cablequal.db-wal',
      `${dir}/journal.jsonl`,
      `${dir}/run.log`,
      `${dir}/record.json`,
      '/reports/certificate.html',
    ]) {
      const r = await raw(p);
      expect(r.status, p).toBe(403);
      expect(r.body, p).not.toContain('SQLite format');
      expect(r.body, p).not.toContain('"type":"run-start"');
    }
    expect((await raw(`${dir}/journal.jsonl`)).body).toContain('--serve-journals');
    const withJournals = await startDashboard({ store: lab.store, outDir: lab.out, port: 0, host: '127.0.0.1', serveJournals: true });
    try {
      const j = await raw(`${dir}/journal.jsonl`, 'GET', withJournals.port);
      expect(j.status).toBe(200);
      expect(j.body.split('\n')[0]).toContain('"type":"run-start"');
      expect((await raw('/reports/cablequal.db', 'GET', withJournals.port)).status).toBe(403);
    } finally {
      await withJournals.close();
    }
    expect((await raw('/api/runs', 'DELETE')).status).toBe(405);
  });

  it('lists a run with the one FEC margin and worst-lane BER of its result (over the graded soaks), a FAIL with its deciding value in the short code', async () => {
    const page = (await raw('/')).body;
    for (const sim of lab.simRuns) {
      const run = await api<{
        fecMarginDecades: number;
        worstLaneBerUb95: number;
        fecMarginPhase: string;
        reasons: { grade?: string; value?: number; unit?: string; rule: string; node?: string; lane?: number }[];
        mainCode: string;
        phases: { name: string; kind: string }[];
      }>(`/api/runs/${sim.runId}`);
      const row = page.slice(page.indexOf(`<tr data-run="${sim.runId}">`), page.indexOf('</tr>', page.indexOf(`<tr data-run="${sim.runId}">`)));
      const record = JSON.parse(readFileSync(join(sim.runDir, 'record.json'), 'utf8')) as RunRecord;
      // The figures are the record's result, measured over a soak (#31 item 2).
      expect(run.fecMarginDecades).toBe(record.result!.fecMargin!.value);
      expect(run.worstLaneBerUb95).toBe(record.result!.worstLaneBer!.value);
      expect(run.phases.find((p) => p.name === run.fecMarginPhase)!.kind).toBe('soak');
      expect(row).toContain(`<td class="num margin">${run.fecMarginDecades.toFixed(2)}</td>`);
      expect(row).toContain(`<td class="num ber">&lt; ${run.worstLaneBerUb95.toExponential(1)}</td>`);
      const deciding = run.reasons.find((r) => r.grade === sim.outcome);
      if (sim.outcome === 'PASS') expect(run.mainCode).toBe('PASS');
      else expect(run.mainCode).toBe(`${sim.outcome} ${deciding!.rule} ${deciding!.node} L${deciding!.lane} ${deciding!.value!.toFixed(2)} dec`);
      expect(row).toContain(`href="/runs/${sim.runId}"`);
    }
  });

  it("a run's page: outcome and decision first, code and sentence, headline, both EEPROM ends, its files; its series at most 2000 points", async () => {
    const clone = lab.simRuns[0]!;
    const run = await api<{ decidedAtS: number; mainCode: string; mainReason: string; seriesUrl: string }>(`/api/runs/${clone.runId}`);
    const r = await raw(`/runs/${clone.runId}`);
    expect(r.status).toBe(200);
    expect(r.headers['content-security-policy']).toMatch(/script-src 'self'/);
    const html = r.body;
    expect(html.indexOf('id="outcome">FAIL')).toBeLessThan(html.indexOf('id="run-facts"'));
    const m = Math.floor(run.decidedAtS / 60);
    expect(html).toContain(`<b id="decided-at">${m}:${String(Math.floor(run.decidedAtS % 60)).padStart(2, '0')}</b>`);
    expect(html).toContain(`<div class="code" id="main-code">${run.mainCode}</div>`);
    expect(run.mainReason.length).toBeGreaterThan(100);
    expect(html).toContain('attenuation-placeholder');
    expect(html.match(/<tr data-node="spark-[ab]"><td>spark-[ab] enp1s0f1np1<\/td>/g)).toHaveLength(2);
    for (const f of ['setup-check.html', 'summary.csv', 'lanes.csv', 'timeseries.csv', 'throughput.csv']) expect(html).toContain(`>${f}</a>`);
    expect(html).not.toContain('journal.jsonl</a>');
    const series = await api<{ receivers: { t: number[]; laneBer: unknown[][] }[]; throughput: { t: number[] } }>(run.seriesUrl);
    expect(series.receivers).toHaveLength(2);
    for (const rx of series.receivers) {
      expect(rx.t.length).toBeGreaterThan(100);
      expect(rx.t.length).toBeLessThanOrEqual(2000);
      expect(rx.laneBer).toHaveLength(4);
    }
    expect((await raw('/runs/no-such-run')).status).toBe(404);
    // Written by the run itself (its recorder): checked against its own journal.
    expect(html).toMatch(/<th>checked against<\/th><td>its own journal, as the run wrote it<\/td>/);
    // A run whose directory has no journal: the page says so, and that its row is the record's alone; its series is a
    // 404 naming why.
    const alone = (await raw(`/runs/${lab.hostileRunId}`)).body;
    expect(alone).toContain('id="no-series"');
    expect(alone).toContain('<span class="out">nothing: record.json taken alone (no journal beside it), unchecked; not counted as a qualified cable</span>');
    expect(await raw(`/api/runs/${lab.hostileRunId}/series`)).toMatchObject({ status: 404, body: expect.stringContaining('journal') });
  });

  it('escapes EEPROM strings in pages, attributes and the JSON inside script tags', async () => {
    for (const path of [
      '/',
      `/cables/${encodeURIComponent(HOSTILE_SERIAL)}`,
      `/parts/${encodeURIComponent(HOSTILE_PN)}`,
      `/vendors/${encodeURIComponent(HOSTILE_VENDOR)}`,
      '/parts',
    ]) {
      const r = await raw(path);
      expect(r.status, path).toBe(200);
      expect(r.body).not.toContain('<img src=x');
      expect(r.body).not.toContain('<svg onload');
      expect(r.body).not.toContain('<b>&amp;');
      // Only the page's own script tags: none opened or closed by a cable's strings.
      expect(r.body.match(/<\/script>/g)?.length ?? 0).toBe(r.body.match(/<script[ >]/g)?.length ?? 0);
    }
    const page = (await raw(`/cables/${encodeURIComponent(HOSTILE_SERIAL)}`)).body;
    expect(page).toContain('&lt;/script&gt;&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;');
  });
});
