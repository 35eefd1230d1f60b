// One run, one truth (#31): every output of one run renders the same result. For each shipped scenario (PASS, MARGINAL,
// FAIL, ERROR; the quick protocol, so each is a set-up check) the figure under "FEC margin" is the same in --json,
// record.json, summary.csv, compare.csv, certificate.json, the HTML document, the terminal summary, /api/runs and the
// dashboard's run list; the worst-lane BER bound comes from a soak; every reason has one shape. Then: a preflight is
// neither imported nor compared, --port both gives each cable's reasons every field, the failing clone's summary fits
// 80 columns, `status --json` tells one clock, and a quick batch with a golden of a box cable's scenario says set-up
// check and qualifies no cable. Simulated lab, in process.
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/domain/record.js';
import type { ReasonJson } from '../../src/domain/result.js';
import { printOutcome } from '../../src/cli/run-summary.js';
import { startDashboard, type Dashboard } from '../../src/dashboard/server.js';
import { compareRuns } from '../../src/report/compare.js';
import { chooseStore, openStore } from '../../src/store/open-store.js';
import type { ResultsStore } from '../../src/store/store.js';
import { findRunDirs } from '../../src/store/import.js';
import { runCli } from '../helpers/cli.js';
import { csvObjects } from '../helpers/csv.js';

const root = mkdtempSync(join(tmpdir(), 'cq-truth-'));
const env = { CABLEQUAL_LAB_KEY: join(root, 'no-key.pem') };
const SCENARIOS = [
  ['good-qsfp56', 'PASS'],
  ['marginal-qsfp112', 'MARGINAL'],
  ['failing-clone', 'FAIL'],
  ['gpu-not-loaded', 'ERROR'],
] as const;
// Every field of a reason in every JSON output (src/domain/result.ts ReasonJson), in that order.
const REASON_KEYS = ['rule', 'grade', 'node', 'phase', 'lane', 'rail', 'value', 'unit', 'limit', 'atS', 'message', 'advice'];

interface Run {
  scenario: string;
  json: Record<string, any>;
  record: RunRecord;
}
const runs: Run[] = [];
let store: ResultsStore;
let dash: Dashboard;

const get = async (path: string): Promise<string> => (await fetch(new URL(path, dash.url))).text();

beforeAll(async () => {
  for (const [scenario] of SCENARIOS) {
    const r = await runCli(['run', '--sim', scenario, '--protocol', 'quick', '--seed', '3', '--out', 'r', '--json'], { cwd: root, env });
    const json = JSON.parse(r.out) as Record<string, any>;
    runs.push({ scenario, json, record: JSON.parse(readFileSync(join(json['runDir'] as string, 'record.json'), 'utf8')) as RunRecord });
  }
  store = await openStore(chooseStore({ out: join(root, 'r') }));
  dash = await startDashboard({ store, outDir: join(root, 'r'), port: 0, host: '127.0.0.1' });
}, 120_000);
afterAll(async () => {
  await dash?.close();
  await store?.close();
});

describe('every output of one run gives the same figures', { timeout: 60_000 }, () => {
  it('the outcomes are the scenarios', () => {
    expect(runs.map((r) => [r.scenario, r.json['outcome']])).toEqual(SCENARIOS.map(([s, o]) => [s, o]));
  });

  it('"FEC margin" is one number: --json, record.json, summary.csv, compare.csv, certificate.json, the document, the terminal, /api/runs, the run list', async () => {
    const compare = join(root, 'compare.csv');
    await compareRuns(
      runs.map((r) => r.json['runDir'] as string),
      compare,
    );
    const compared = csvObjects(readFileSync(compare, 'utf8'));
    const api = JSON.parse(await get('/api/runs')) as { runs: Record<string, any>[] };
    const list = await get('/');
    for (const { scenario, json, record } of runs) {
      const runDir = json['runDir'] as string;
      const margin = record.result!.fecMargin;
      // Every graded run measured one, over a soak; the ERROR run stopped before its soaks were graded, or has one too.
      if (json['outcome'] !== 'ERROR') expect(margin, scenario).not.toBeNull();
      const value = margin?.value ?? null;
      expect(json['result'].fecMargin?.value ?? null, scenario).toBe(value);
      const summary = csvObjects(readFileSync(join(runDir, 'summary.csv'), 'utf8'))[0]!;
      const fromCsv = (s: string | undefined) => (s === '' || s === undefined ? null : Number(s));
      expect(fromCsv(summary['fec_margin_decades']), scenario).toBe(value);
      expect(fromCsv(compared.find((c) => c['run_id'] === record.runId)!['fec_margin_decades']), scenario).toBe(value);
      const docName = readdirSync(runDir).find((f) => /^(certificate|setup-check|run-report)\.json$/.test(f))!;
      const doc = JSON.parse(readFileSync(join(runDir, docName), 'utf8')) as {
        body: { summary: { fecMarginDecades: number | null }; result: typeof record.result };
      };
      expect(doc.body.summary.fecMarginDecades, scenario).toBe(value);
      expect(doc.body.result!.fecMargin?.value ?? null, scenario).toBe(value);
      const row = api.runs.find((x) => x['runId'] === record.runId)!;
      expect(row['fecMarginDecades'], scenario).toBe(value);
      const listRow = list.slice(list.indexOf(`<tr data-run="${record.runId}">`), list.indexOf('</tr>', list.indexOf(`<tr data-run="${record.runId}">`)));
      expect(listRow, scenario).toContain(`<td class="num margin">${value === null ? '–' : value.toFixed(2)}</td>`);
      let said = '';
      printOutcome(record, runDir, { stdout: (s) => void (said += s), stderr: () => undefined, cwd: root, env: {}, isTTY: false, readStdin: async () => '' });
      if (value !== null) {
        expect(readFileSync(join(runDir, docName.replace('.json', '.html')), 'utf8'), scenario).toContain(
          `<b class="fec-margin">${value.toFixed(2)} decades</b>`,
        );
        expect(said, scenario).toContain(
          `  FEC margin ${value.toFixed(2)} decades (${margin!.node}${margin!.lane !== null ? ` lane ${margin!.lane}` : ''}, ${margin!.phase})\n`,
        );
      } else expect(said, scenario).not.toContain('FEC margin');
    }
  });

  it("the worst-lane BER bound in /api/runs is the result's, measured in a soak (never the 6-s NCCL phase)", async () => {
    const api = JSON.parse(await get('/api/runs')) as { runs: Record<string, any>[] };
    for (const { scenario, record } of runs) {
      const worst = record.result!.worstLaneBer;
      const row = api.runs.find((x) => x['runId'] === record.runId)!;
      expect(row['worstLaneBerUb95'] ?? null, scenario).toBe(worst?.value ?? null);
      // The loaded-soak worst-lane bound under its own name: the certificate's headline table's "below".
      const headline = record.result!.headlineWorstLaneBer;
      expect(row['headlineBerUb95'] ?? null, scenario).toBe(headline?.value ?? null);
      if (headline) expect(headline.value, scenario).toBe(Math.max(...record.headline!.receivers.flatMap((x) => x.lanes.map((l) => l.berUb95))));
      if (!worst) continue;
      expect(record.phases.find((p) => p.name === worst.phase)!.kind, scenario).toBe('soak');
      // It is the largest lane bound over the soaks' receivers, and the record's own lane statistics say so.
      const soakBounds = record
        .analysis!.perNodePhase.filter((p) => record.result!.gradedPhases.includes(p.phase))
        .flatMap((p) => p.laneStats.map((l) => l.berUb95));
      expect(worst.value, scenario).toBe(Math.max(...soakBounds));
    }
  });

  it('a quick run is a set-up check everywhere: --json, the store, the terminal; it qualifies no cable', async () => {
    const api = JSON.parse(await get('/api/runs')) as { runs: Record<string, any>[] };
    for (const { scenario, json, record } of runs) {
      expect([json['kind'], json['qualification'], json['result'].qualifies], scenario).toEqual(['setup-check', false, false]);
      const row = api.runs.find((x) => x['runId'] === record.runId)!;
      expect([row['runKind'], row['qualifies']], scenario).toEqual(['setup-check', false]);
    }
    const parts = JSON.parse(await get('/api/parts?simulated=1')) as { parts: { cables: Record<string, number> }[] };
    for (const p of parts.parts) expect([p.cables['PASS'], p.cables['MARGINAL'], p.cables['FAIL']]).toEqual([0, 0, 0]);
  });

  it('every reason of --json, record.result and the store has the one shape', async () => {
    for (const { scenario, json, record } of runs) {
      expect(json['reasons'].length, scenario).toBe(record.reasons.length);
      for (const r of json['reasons'] as ReasonJson[]) expect(Object.keys(r), scenario).toEqual(REASON_KEYS);
      const deciding = record.result!.deciding;
      if (json['outcome'] === 'PASS') expect(deciding).toBeNull();
      else expect(Object.keys(deciding!), scenario).toEqual(REASON_KEYS);
      const detail = JSON.parse(await get(`/api/runs/${record.runId}`)) as Record<string, any>;
      expect(detail['decidingRule'] ?? null, scenario).toBe(deciding?.rule ?? null);
    }
  });
});

describe('a preflight is not a run of a cable', { timeout: 60_000 }, () => {
  it('is neither compared nor imported', async () => {
    const pre = await runCli(['preflight', '--sim', 'good-qsfp56', '--out', 'r'], { cwd: root, env });
    expect(pre.code, pre.err).toBe(0);
    const dirs = findRunDirs([join(root, 'r')]);
    const preflightDir = dirs.find((d) => d.includes('/preflight/'))!;
    expect(preflightDir).toBeDefined();
    const compared = await compareRuns(dirs, join(root, 'all.csv'));
    expect(compared.records.map((r) => r.runId).sort()).toEqual(runs.map((r) => r.record.runId).sort());
    expect(compared.warnings).toEqual([`skipped ${preflightDir}: a preflight (checks the nodes, qualifies no cable)`]);
    const imported = await runCli(['db', 'import', 'r'], { cwd: root, env });
    expect(imported.code, imported.err).toBe(0);
    expect(imported.out + imported.err).toMatch(/a preflight \(checks the nodes, qualifies no cable\): not imported/);
    const rows = await store.db.all<{ run_id: string }>('SELECT run_id FROM runs');
    expect(rows.map((r) => r.run_id).sort()).toEqual(runs.map((r) => r.record.runId).sort());
  });
});

describe('two cages, one reason shape', { timeout: 60_000 }, () => {
  it('--port both --json: each cable is the one-cable JSON, its reasons with every field', async () => {
    const r = await runCli(['run', '--sim', 'dual-cage', '--port', 'both', '--protocol', 'quick', '--out', 'd', '--json', '--db', 'off'], { cwd: root, env });
    const both = JSON.parse(r.out) as { cables: Record<string, any>[] };
    expect(both.cables).toHaveLength(2);
    for (const c of both.cables) {
      expect(c['reasons'].length).toBeGreaterThan(0);
      for (const x of c['reasons'] as ReasonJson[]) expect(Object.keys(x)).toEqual(REASON_KEYS);
      const record = JSON.parse(readFileSync(join(c['runDir'] as string, 'record.json'), 'utf8')) as RunRecord;
      expect(c['result']).toEqual(record.result);
      expect(c['reasons'].map((x: ReasonJson) => [x.rule, x.grade, x.node, x.phase, x.lane])).toEqual(
        record.reasons.map((x) => [x.rule, x.grade ?? null, x.node ?? null, x.phase ?? null, x.lane ?? null]),
      );
    }
  });
});

describe('short by default', { timeout: 60_000 }, () => {
  it('the final summary of run --sim failing-clone in an 80-column terminal: no line over 80, one line per reason, then the document', async () => {
    const r = await runCli(['run', '--sim', 'failing-clone', '--protocol', 'quick', '--seed', '3', '--out', 's', '--db', 'off'], {
      cwd: root,
      env,
      tty: { columns: 80 },
    });
    expect(r.code, r.err).toBe(1);
    const lines = r.out.trimEnd().split('\n');
    for (const l of lines) expect([...l].length, l).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^FAIL \(simulated lab\): /);
    expect(lines.filter((l) => /^ {2}(FAIL|MARGINAL|PASS) /.test(l)).length).toBeGreaterThanOrEqual(2);
    // The runaway is said once, on its own line.
    expect(lines.filter((l) => l.includes('ran away with heat'))).toHaveLength(1);
    expect(lines.at(-2)).toMatch(/^ {2}set-up check report: s\/ONT2403150117\/\S+\/setup-check\.html$/);
  });
});

describe('one clock', { timeout: 60_000 }, () => {
  it('status --json: elapsed + remaining is the whole procedure at every moment of a --speed run', async () => {
    const smoke = join(process.cwd(), 'test', 'fixtures', 'protocols', 'ssh-smoke.json');
    let done = false;
    const run = runCli(['run', '--sim', 'good-qsfp56', '--protocol', smoke, '--speed', '10', '--out', 'c', '--json', '--db', 'off'], {
      cwd: root,
      env,
    }).finally(() => (done = true));
    const seen: { phase: string; elapsedS: number; remainingS: number | null; phaseRemainingS: number | null }[] = [];
    while (!done) {
      const st = await runCli(['status', '--json', '--out', 'c'], { cwd: root, env });
      for (const x of JSON.parse(st.out || '[]') as (typeof seen)[number][]) if (x.phase) seen.push(x);
      await new Promise((r) => setTimeout(r, 100));
    }
    const r = await run;
    expect(r.code, r.err).toBe(0);
    const runDir = (JSON.parse(r.out) as { runDir: string }).runDir;
    const journal = readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; tS: number; phase?: string });
    const endS = journal.find((l) => l.type === 'phase-end' && l.phase === 'soak-loaded')!.tS;
    const soaks = seen.filter((s) => s.phase === 'soak-idle' || s.phase === 'soak-loaded');
    expect(soaks.length).toBeGreaterThan(0);
    // From the soaks on, nothing of unknown length is left: elapsed + remaining is when the procedure ended.
    for (const s of soaks) expect(Math.abs(s.elapsedS + s.remainingS! - endS), JSON.stringify(s)).toBeLessThanOrEqual(1.5);
    // Before, at least that much is left (the benchmarks' own time is not known ahead); never the phase's time alone.
    for (const s of seen) expect(s.elapsedS + (s.remainingS ?? 0)).toBeLessThanOrEqual(endS + 1.5);
    expect(seen.some((s) => s.phase === 'soak-loaded' && s.remainingS! > 0)).toBe(true);
  });
});

describe("a quick batch with a golden of a box cable's scenario", { timeout: 120_000 }, () => {
  it('tests the box cable, says set-up check in the terminal and batch.html, and qualifies 0 cables', async () => {
    writeFileSync(join(root, 'box.csv'), 'label\nc1\n');
    const r = await runCli(
      ['batch', '--manifest', 'box.csv', '--sim', 'good-qsfp56', '--golden', 'GOLD-7', '--protocol', 'quick', '--out', 'b', '--db', 'off'],
      {
        cwd: root,
        env,
      },
    );
    expect(r.code, r.err).toBe(0);
    const state = JSON.parse(readFileSync(join(root, 'b', 'batch-state.json'), 'utf8')) as { cables: { label: string; serial: string; outcome: string }[] };
    expect(state.cables.map((c) => [c.label, c.serial, c.outcome])).toEqual([
      ['golden-first', 'GOLD-7', 'PASS'],
      ['c1', 'MT2412VS01157', 'PASS'],
      ['golden-last', 'GOLD-7', 'PASS'],
    ]);
    expect(r.err).toMatch(/\[pair 1\] c1 \(serial MT2412VS01157\): set-up check \(not a qualification\)/);
    expect(r.out).toMatch(/^c1 +PASS \(set-up check\) MT2412VS01157 /m);
    expect(r.out).toMatch(/^throughput: 0 cable\(s\) qualified; 1 set-up check\(s\) \(they qualify no cable\) in /m);
    const html = readFileSync(join(root, 'b', 'batch.html'), 'utf8');
    expect(html).toContain('<p>No qualification in this batch: 0 cables qualified.</p>');
    expect(html).toContain('<h2>Set-up checks (not qualifications: they qualify no cable)</h2>');
    expect(html).toContain('<td class="PASS">PASS (set-up check)</td>');
  });
});
