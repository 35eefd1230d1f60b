// The dashboard's JSON API and pages over HTTP: every run with its fields, filters, bounded pages, read-only,
// certificates served from the reports directory and nothing outside it, hostile EEPROM strings escaped.
import { symlinkSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
function raw(path: string, method = 'GET'): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: dash.port, path, method }, (res) => {
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
    expect(all.total).toBe(3 + 1 + 6);
    for (const s of lab.simRuns) {
      const r = all.runs.find((x) => x.runId === s.runId)!;
      expect(r).toMatchObject({
        outcome: s.outcome,
        serial: s.serial,
        partNumber: s.partNumber,
        vendor: s.vendor,
        simulated: true,
        certificateFile: 'certificate.html',
      });
      expect(Date.parse(r.startedAt)).toBeGreaterThan(Date.parse('2026-01-01'));
    }
    expect(lab.simRuns.map((s) => s.outcome)).toEqual(['FAIL', 'PASS', 'MARGINAL']);
    expect(all.runs.find((r) => r.runId === lab.hostileRunId)).toMatchObject({ vendor: HOSTILE_VENDOR, partNumber: HOSTILE_PN, serial: HOSTILE_SERIAL });
  });

  it('filters by outcome, part number, vendor, lot, station and date', async () => {
    const fail = await api<Runs>('/api/runs?outcome=FAIL');
    expect(fail.runs.map((r) => r.runId).sort()).toEqual([lab.simRuns[0]!.runId, lab.hostileRunId].sort());
    const clone = lab.simRuns[0]!;
    expect((await api<Runs>(`/api/runs?part=${encodeURIComponent(clone.partNumber)}`)).runs.map((r) => r.runId)).toEqual([clone.runId]);
    expect((await api<Runs>(`/api/runs?vendor=${encodeURIComponent(HOSTILE_VENDOR)}`)).runs.map((r) => r.runId)).toEqual([lab.hostileRunId]);
    const golden = await api<Runs>('/api/runs?lot=250301');
    expect(golden.total).toBe(6);
    const sim = (await api<Runs>('/api/runs')).runs.find((r) => r.runId === clone.runId)!;
    expect((await api<Runs>(`/api/runs?station=${encodeURIComponent(sim.station!)}`)).total).toBe(3);
    expect((await api<Runs>('/api/runs?from=2026-03-04&to=2026-03-04')).runs.map((r) => r.runId).sort()).toEqual(['gen-golden-2', 'gen-golden-3']);
    expect((await api<Runs>('/api/runs?outcome=PASS&lot=250301&from=2026-03-05')).total).toBe(2);
  });

  it('pages are bounded: limit 1..500, a bad filter is a 400 naming it', async () => {
    const p1 = await api<Runs & { limit: number; offset: number }>('/api/runs?limit=4');
    const p2 = await api<Runs>('/api/runs?limit=4&offset=4');
    expect(p1.runs).toHaveLength(4);
    expect(p1.total).toBe(10);
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
    const parts = await api<{ parts: { partNumber: string; counts: Record<string, number> }[] }>('/api/parts');
    // The generated golden cable's part (6 PASS, lot 250301); the simulated good-qsfp56 is a QSFP56 part of its own.
    expect(parts.parts.find((p) => p.partNumber === 'NJAAKK0006')!.counts).toMatchObject({ PASS: 6, FAIL: 0, ERROR: 0 });
    expect(parts.parts.find((p) => p.partNumber === 'MCP1650-V00AE30')!.counts).toMatchObject({ PASS: 1, FAIL: 0, ERROR: 0 });
    const y = await api<{ lots: { lot: string; counts: Record<string, number> }[]; fecMargin: { bins: number[]; counts: Record<string, number[]> } }>(
      '/api/parts/NJAAKK0006',
    );
    expect(y.lots.map((l) => l.lot).sort()).toEqual(['250301']);
    expect(
      Object.values(y.fecMargin.counts)
        .flat()
        .reduce((a, b) => a + b, 0),
    ).toBe(6);
    const golden = await api<{ serial: string; runs: { runId: string; ibWriteBwGbps: number }[]; tolerances: Record<string, number> }[]>('/api/golden');
    expect(golden).toHaveLength(1);
    expect(golden[0]!.runs.map((r) => r.ibWriteBwGbps)).toEqual(lab.golden.bw);
    expect(golden[0]!.tolerances).toMatchObject({ throughputPct: 5 });
  });

  it("serves a run's certificate read-only from the reports directory, and nothing outside it", async () => {
    const run = await api<{ certificateUrl: string; reasons: { rule: string }[]; measurements: unknown[] }>(`/api/runs/${lab.simRuns[0]!.runId}`);
    expect(run.certificateUrl).toMatch(/^\/reports\/.+\/certificate\.html$/);
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
    expect((await raw('/api/runs', 'DELETE')).status).toBe(405);
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
