// The "done when", exactly, with the real CLI (node bin/cablequal.js, built by the global setup):
// `run --sim failing-clone` and two other runs into one --out; `dashboard --out` lists the three at /api/runs and on
// the page; `db import` twice leaves three. Then the same with --db postgres://...
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { tempRoot } from '../fixtures/records/run-dir.js';
import { pgSkip, startPostgres, type TestPg } from '../helpers/postgres.js';

const exec = promisify(execFile);
const BIN = join(process.cwd(), 'bin', 'cablequal.js');
const env = { ...process.env, CABLEQUAL_DB: '', CABLEQUAL_LAB_KEY: '/nonexistent/lab-key.pem' };

async function cli(args: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  try {
    const r = await exec(process.execPath, [BIN, ...args], { cwd, env, timeout: 120_000 });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

// `cablequal dashboard --listen 0`: the URL it prints, and the process to stop.
async function dashboard(args: string[], cwd: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [BIN, 'dashboard', '--listen', '0', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => void (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`dashboard exited ${code}: ${out}${err}`)));
  });
  return { url, child };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

async function listed(url: string): Promise<{
  api: { total: number; runs: { runId: string; outcome: string; serial: string; partNumber: string; vendor: string; startedAt: string; simulated: boolean }[] };
  pageRows: string[];
}> {
  const api = (await (await fetch(`${url}api/runs`)).json()) as Awaited<ReturnType<typeof listed>>['api'];
  const page = await (await fetch(url)).text();
  return { api, pageRows: [...page.matchAll(/<tr data-run="([^"]+)"/g)].map((m) => m[1]!) };
}

let pg: TestPg | null = null;
const roots: string[] = [];
afterAll(async () => {
  await pg?.stop();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

const stores = [
  { name: 'embedded SQLite (cablequal.db in --out)', skip: false, db: async (): Promise<string[]> => [] },
  {
    name: 'PostgreSQL (--db postgres://...)',
    skip: pgSkip,
    db: async (): Promise<string[]> => {
      pg ??= await startPostgres();
      return ['--db', await pg.newDatabase()];
    },
  },
];

for (const store of stores) {
  describe.skipIf(store.skip)(`done when: three runs, the dashboard, db import twice — ${store.name}`, () => {
    it('lists the three runs at /api/runs and on the page; db import twice leaves three', async () => {
      const cwd = tempRoot('cq-done-');
      roots.push(cwd);
      const db = await store.db();
      const runs = [
        ['run', '--sim', 'failing-clone', '--out', 'lab'],
        ['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--out', 'lab'],
        ['run', '--sim', 'throttled-nic', '--protocol', 'quick', '--out', 'lab'],
      ];
      const codes = [];
      for (const r of runs) {
        const res = await cli([...r, ...db], cwd);
        expect(res.err).not.toMatch(/warning: results store/);
        codes.push(res.code);
      }
      expect(codes).toEqual([1, 0, 3]); // FAIL, PASS, ERROR
      const cables = readdirSync(join(cwd, 'lab'), { withFileTypes: true }).filter((d) => d.isDirectory());
      expect(cables.flatMap((c) => readdirSync(join(cwd, 'lab', c.name)))).toHaveLength(3); // lab/<serial>/<run id>
      if (!db.length) expect(readdirSync(join(cwd, 'lab'))).toContain('cablequal.db');

      const check = async () => {
        const d = await dashboard(['--out', 'lab', ...db], cwd);
        try {
          const { api, pageRows } = await listed(d.url);
          expect(api.total).toBe(3);
          expect(api.runs.map((r) => r.outcome).sort()).toEqual(['ERROR', 'FAIL', 'PASS']);
          const clone = api.runs.find((r) => r.outcome === 'FAIL')!;
          expect(clone).toMatchObject({ partNumber: 'ONT-DAC-QS56-0.5', simulated: true });
          expect(clone.serial).toMatch(/\S/);
          expect(clone.vendor).toMatch(/\S/);
          expect(Date.parse(clone.startedAt)).toBeGreaterThan(0);
          expect(pageRows.sort()).toEqual(api.runs.map((r) => r.runId).sort());
          return api.runs;
        } finally {
          await stop(d.child);
        }
      };
      const live = await check();
      const first = await cli(['db', 'import', 'lab/*/*', '--out', 'lab', ...db], cwd);
      expect(first.code).toBe(0);
      expect(first.out).toMatch(/^3 run directories: 0 added, 0 updated, 3 unchanged/m);
      const second = await cli(['db', 'import', 'lab', '--out', 'lab', ...db], cwd);
      expect(second.out).toMatch(/^3 run directories: 0 added, 0 updated, 3 unchanged/m);
      expect(second.out).toMatch(/: 3 runs, /);
      const after = await check();
      expect(after).toEqual(live);
    }, 180_000);
  });
}
