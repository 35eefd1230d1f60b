// Section 6: the results store at lab scale. 10,000 run directories are cloned from a few real simulated runs, then
// imported into the embedded store (SQLite) and into PostgreSQL, and the dashboard's run list and a part's yield page
// are requested repeatedly at 10,000 runs (p50 / p95 / max latency). Cleans up its clones and its PostgreSQL cluster.
import { linkSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { writeReports } from '../src/cli/reports.js';
import { startDashboard } from '../src/dashboard/server.js';
import { importRuns } from '../src/store/import.js';
import { chooseStore, openStore, type StoreChoice } from '../src/store/open-store.js';
import type { ResultsStore } from '../src/store/store.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { runSim } from './sim-runs.js';

export const STORE_PLAN = {
  runs: 10_000,
  templates: ['good-qsfp56', 'failing-clone', 'marginal-qsfp112', 'good-qsfp112', 'crc-errors', 'throttled-nic'],
  runsPerCable: 4,
  lotsPerPart: 20,
  requests: 200, // per page and engine, sequential, one keep-alive client
};

export interface Latency {
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  n: number;
  bytes: number;
}

export interface EngineResult {
  engine: 'sqlite' | 'postgres';
  version: string;
  importWallS: number;
  reimportWallS: number; // the same 10,000 again: every row unchanged
  counts: Record<string, number>;
  storeBytes: number;
  pages: Record<string, Latency>;
}

export interface StoreBenchResult {
  plan: typeof STORE_PLAN;
  loadAvg: { start: number[]; end: number[] };
  generation: { wallS: number; recordBytes: number; how: string };
  engines: EngineResult[];
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

// The 10,000 run directories: each a clone of one of the template runs (its record.json rewritten with a new run id,
// cable serial, lot and start time; its journal.jsonl and certificate.json hard links to the template's).
async function makeRuns(work: string, log: (s: string) => void): Promise<StoreBenchResult['generation'] & { reports: string; firstPart: string }> {
  const t0 = performance.now();
  const protocolText = readFileSync(new URL('../protocols/quick.json', import.meta.url), 'utf8');
  const templates: { record: Record<string, unknown>; dir: string }[] = [];
  const quietIo = {
    stdout: () => undefined,
    stderr: (s: string) => log(s.trimEnd()),
    readStdin: async () => '',
    isTTY: false,
    cwd: work,
    env: { CABLEQUAL_LAB_KEY: '/nonexistent/key.pem' },
  };
  for (const scenario of STORE_PLAN.templates) {
    const r = await runSim(scenario, protocolText, join(work, 'templates'), `template-${scenario}`);
    await writeReports(r.record, r.runDir, quietIo);
    templates.push({ record: JSON.parse(readFileSync(join(r.runDir, 'record.json'), 'utf8')) as Record<string, unknown>, dir: r.runDir });
    log(`  template ${scenario}: ${r.record.outcome}`);
  }
  const reports = join(work, 'reports');
  let recordBytes = 0;
  const start = Date.parse('2025-01-01T00:00:00Z');
  for (let i = 0; i < STORE_PLAN.runs; i++) {
    const t = templates[i % templates.length]!;
    const rec = structuredClone(t.record) as {
      runId: string;
      startedAt: string;
      endedAt: string | null;
      cable: { serial: string | null; partNumber: string | null; ends: { identity: { vendorSn: string; dateCode: string } | null }[] };
    };
    // Runs i, i+6, i+12, i+18 (same template) share a cable: 4 runs per serial, each serial one part number.
    const serial = `BENCH${i % templates.length}-${String(Math.floor(i / (templates.length * STORE_PLAN.runsPerCable))).padStart(4, '0')}`;
    const lot = `25${String(1 + (Math.floor(i / 97) % STORE_PLAN.lotsPerPart)).padStart(2, '0')}15`;
    rec.runId = `bench-${String(i).padStart(5, '0')}`;
    const startedMs = start + i * 45 * 60_000; // a run every 45 minutes: 10,000 runs over about 10 months
    const durationMs = Date.parse(rec.endedAt ?? rec.startedAt) - Date.parse(rec.startedAt);
    rec.startedAt = new Date(startedMs).toISOString();
    rec.endedAt = new Date(startedMs + durationMs).toISOString();
    rec.cable.serial = serial;
    for (const e of rec.cable.ends) if (e.identity) Object.assign(e.identity, { vendorSn: serial, dateCode: lot });
    const dir = join(reports, serial, rec.runId);
    mkdirSync(dir, { recursive: true });
    const text = JSON.stringify(rec);
    recordBytes += text.length;
    writeFileSync(join(dir, 'record.json'), text);
    linkSync(join(t.dir, 'journal.jsonl'), join(dir, 'journal.jsonl'));
    for (const f of ['certificate.json', 'run-report.json', 'certificate.html', 'run-report.html']) {
      try {
        linkSync(join(t.dir, f), join(dir, f));
      } catch {
        // ERROR runs have a run report, judged runs a certificate
      }
    }
  }
  const firstPart = String((templates[0]!.record['cable'] as { partNumber: string }).partNumber);
  return {
    wallS: (performance.now() - t0) / 1000,
    recordBytes,
    how: `${STORE_PLAN.templates.length} real simulated runs (quick protocol: ${STORE_PLAN.templates.join(', ')}) cloned round-robin: each clone's record.json rewritten with a new run id, a cable serial shared by ${STORE_PLAN.runsPerCable} runs, a date code/lot among ${STORE_PLAN.lotsPerPart} per part, a start time 45 min after the previous; journal.jsonl and the certificate hard-linked to the template's`,
    reports,
    firstPart,
  };
}

async function measurePages(store: ResultsStore, reports: string, part: string, log: (s: string) => void): Promise<Record<string, Latency>> {
  const dash = await startDashboard({ store, outDir: reports, port: 0, host: '127.0.0.1' });
  const pages: Record<string, string> = {
    'run list page (/, newest 100)': '',
    'run list API (/api/runs, newest 100)': 'api/runs',
    'run list filtered (/?part=&outcome=FAIL)': `?part=${encodeURIComponent(part)}&outcome=FAIL`,
    'serial search, a substring in any case (/?serial=ench0-01)': '?serial=ench0-01',
    // The generated runs are clones of simulated runs: yield counts them only when asked (?simulated=1).
    "a part's yield page (/parts/<pn>?simulated=1)": `parts/${encodeURIComponent(part)}?simulated=1`,
    'parts and vendors (/parts?simulated=1)': 'parts?simulated=1',
    "a cable's history (/cables/<serial>)": 'cables/BENCH0-0100',
  };
  const out: Record<string, Latency> = {};
  try {
    for (const [name, path] of Object.entries(pages)) {
      const times: number[] = [];
      let bytes = 0;
      for (let i = 0; i < STORE_PLAN.requests + 5; i++) {
        const t = performance.now();
        const res = await fetch(dash.url + path);
        const body = await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status}`);
        if (i >= 5) times.push(performance.now() - t); // the first 5 warm the caches
        bytes = body.byteLength;
      }
      out[name] = { p50Ms: pct(times, 50), p95Ms: pct(times, 95), maxMs: Math.max(...times), n: times.length, bytes };
      log(`    ${name}: p50 ${out[name]!.p50Ms.toFixed(1)} ms, p95 ${out[name]!.p95Ms.toFixed(1)} ms`);
    }
  } finally {
    await dash.close();
  }
  return out;
}

async function benchEngine(choice: StoreChoice, reports: string, part: string, log: (s: string) => void): Promise<EngineResult> {
  const store = await openStore(choice);
  try {
    const version =
      choice.engine === 'sqlite'
        ? `SQLite ${String((await store.db.all<{ v: string }>('SELECT sqlite_version() AS v'))[0]!.v)} (better-sqlite3, WAL)`
        : `PostgreSQL ${String((await store.db.all<{ v: string }>("SELECT current_setting('server_version') AS v"))[0]!.v)}`;
    log(`  ${choice.engine}: importing ${STORE_PLAN.runs} runs`);
    let t = performance.now();
    const first = await importRuns(store, [reports], { cwd: reports, controller: 'bench' });
    const importWallS = (performance.now() - t) / 1000;
    if (first.inserted !== STORE_PLAN.runs) throw new Error(`imported ${first.inserted} of ${STORE_PLAN.runs}`);
    t = performance.now();
    const again = await importRuns(store, [reports], { cwd: reports, controller: 'bench' });
    const reimportWallS = (performance.now() - t) / 1000;
    if (again.unchanged !== STORE_PLAN.runs) throw new Error(`re-import changed ${STORE_PLAN.runs - again.unchanged} runs`);
    log(`    import ${importWallS.toFixed(1)} s, again ${reimportWallS.toFixed(1)} s (all unchanged)`);
    let storeBytes: number;
    if (choice.engine === 'sqlite') {
      await store.db.all('PRAGMA wal_checkpoint(TRUNCATE)');
      storeBytes = statSync(choice.target).size;
    } else {
      await store.db.run('VACUUM ANALYZE');
      storeBytes = Number((await store.db.all<{ n: string }>('SELECT pg_database_size(current_database()) AS n'))[0]!.n);
    }
    const pages = await measurePages(store, reports, part, log);
    return { engine: choice.engine, version, importWallS, reimportWallS, counts: await store.counts(), storeBytes, pages };
  } finally {
    await store.close();
  }
}

export async function benchStore(work: string, log: (s: string) => void): Promise<StoreBenchResult> {
  const start = loadavg();
  log(`  generating ${STORE_PLAN.runs} run directories`);
  const gen = await makeRuns(work, log);
  log(`  generated in ${gen.wallS.toFixed(1)} s`);
  const engines: EngineResult[] = [];
  engines.push(await benchEngine(chooseStore({ out: join(work, 'store-sqlite') }), gen.reports, gen.firstPart, log));
  const pg = await startPostgres();
  try {
    engines.push(await benchEngine({ engine: 'postgres', target: await pg.newDatabase() }, gen.reports, gen.firstPart, log));
  } finally {
    await pg.stop();
  }
  return { plan: STORE_PLAN, loadAvg: { start, end: loadavg() }, generation: { wallS: gen.wallS, recordBytes: gen.recordBytes, how: gen.how }, engines };
}
