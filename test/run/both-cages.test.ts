// `run --port both` (issue 25 item 1): the cables in cage 0 and cage 1 between the same two nodes qualified at once, on
// the simulated lab's dual-cage scenario (a good QSFP56 in cage 0, a failing clone in cage 1) with the quick protocol
// (the full default protocol: both-cages.system.test.ts). Each cable its own journal, record, document and store row;
// benchmarks one cable at a time; soaks together, each cable judged on its share of the nodes' traffic; one GPU load
// per node; the clone's FAIL stops only its own load.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliRunDeps, loadProtocolArg } from '../../src/cli/run-command.js';
import { keygen } from '../../src/report/sign.js';
import { runBothCages } from '../../src/run/both-cages.js';
import type { RunDeps } from '../../src/run/qualify.js';
import { createLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { runCli } from '../helpers/cli.js';

type Line = Record<string, any>;
interface Cable {
  cage: number;
  serial: string;
  outcome: string;
  qualification: boolean;
  reasons: { rule: string; node?: string }[];
  decidedAtS: number | null;
  certificate: string | null;
  document: string | null;
  runDir: string;
}

const root = mkdtempSync(join(tmpdir(), 'cq-both-'));
const env = () => ({ CABLEQUAL_LAB_KEY: join(root, 'lab', 'lab-key.pem') });
let out: { mode: string; simulated: boolean; cables: Cable[] };
let code = -1;
const journal = (c: Cable): Line[] =>
  readFileSync(join(c.runDir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
const record = (c: Cable): Line => JSON.parse(readFileSync(join(c.runDir, 'record.json'), 'utf8')) as Line;
// A journal's lab time (ms) of a line: its run's simulated clock at the start plus its tS.
const labMs = (j: Line[], tS: number) => Date.parse(j[0]!['clockStartedAt'] as string) + tS * 1000;
const span = (j: Line[], phase: string): [number, number] => [
  labMs(j, j.find((l) => l['type'] === 'phase-start' && l['phase'] === phase)!['tS']),
  labMs(j, j.find((l) => l['type'] === 'phase-end' && l['phase'] === phase)!['tS']),
];

beforeAll(async () => {
  await keygen(join(root, 'lab'));
  const r = await runCli(['run', '--sim', 'dual-cage', '--port', 'both', '--protocol', 'quick', '--seed', '7', '--json', '--out', join(root, 'reports')], {
    env: env(),
  });
  code = r.code;
  expect(r.out.trim().split('\n'), r.err).toHaveLength(1);
  out = JSON.parse(r.out);
}, 120_000);

describe('run --sim dual-cage --port both (quick protocol)', () => {
  it('prints one object with a line per cable: the good cable PASS in cage 0, the clone FAIL in cage 1, exit 1', () => {
    expect(out.mode).toBe('both-cages');
    expect(out.simulated).toBe(true);
    expect(out.cables.map((c) => [c.cage, c.serial, c.outcome])).toEqual([
      [0, 'MT2412VS01562', 'PASS'],
      [1, 'ONT2403150203', 'FAIL'],
    ]);
    expect(code).toBe(1);
    const clone = out.cables[1]!;
    expect(clone.reasons.map((r) => r.rule)).toContain('fec-window');
    expect(clone.reasons.every((r) => r.node === 'spark-b')).toBe(true);
    // A quick run is a set-up check: its document is setup-check.html, never a certificate.
    for (const c of out.cables) {
      expect(c.qualification).toBe(false);
      expect(c.certificate).toBeNull();
      expect(c.document).toBe(join(c.runDir, 'setup-check.html'));
      expect(c.runDir).toContain(join('reports', c.serial));
    }
  });

  it('journals the mode: each run names its cage and the other cable’s run', () => {
    const [a, b] = out.cables as [Cable, Cable];
    const runIdOf = (c: Cable) => journal(c)[0]!['runId'];
    expect(journal(a)[0]!['together']).toEqual({ cage: 0, with: [{ cage: 1, runId: runIdOf(b) }] });
    expect(record(b)['together']).toEqual({ cage: 1, with: [{ cage: 0, runId: runIdOf(a), serial: a.serial }] });
  });

  it('benchmarks one cable at a time, then starts each soak on both cables together', () => {
    const [ja, jb] = out.cables.map(journal) as [Line[], Line[]];
    const benchmarks = ['loopback', 'ib-write-bw', 'nccl'].flatMap((p) => [span(ja, p), span(jb, p)]).sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < benchmarks.length; i++) expect(benchmarks[i]![0]).toBeGreaterThanOrEqual(benchmarks[i - 1]![1]);
    for (const soak of ['soak-idle', 'soak-loaded']) expect(span(ja, soak)[0]).toBe(span(jb, soak)[0]);
    // The second cable's link-load streams listen 10 ports above the first's (both cables' servers run on the nodes).
    const ports = (j: Line[]) =>
      j.filter((l) => l['type'] === 'process-start' && /^soak-idle-server/.test(l['name'])).map((l) => Number(/-p (\d+)/.exec(l['command'])![1]));
    expect(ports(ja).sort()).toEqual([18515, 18516, 18517, 18518]);
    expect(ports(jb).sort()).toEqual([18525, 18526, 18527, 18528]);
  });

  it("runs the pair's cluster check once, before the soaks, over both cages' devices at each node; both journals keep it", () => {
    const [ja, jb] = out.cables.map(journal) as [Line[], Line[]];
    const check = (j: Line[]) => j.find((l) => l['type'] === 'cluster-check')!;
    const { tS: _a, prev: _pa, ...a } = check(ja);
    const { tS: _b, prev: _pb, ...b } = check(jb);
    expect(a).toEqual(b);
    expect(a['topology']).toBe('pair');
    // Each node's rank lists cage 0's two RoCE devices, then cage 1's.
    expect(a['ranks'].map((r: Line) => [r.node, r.devices])).toEqual([
      ['spark-a', ['rocep1s0f0', 'roceP2p1s0f0', 'rocep1s0f1', 'roceP2p1s0f1']],
      ['spark-b', ['rocep1s0f0', 'roceP2p1s0f0', 'rocep1s0f1', 'roceP2p1s0f1']],
    ]);
    expect(check(ja)['tS']).toBeLessThanOrEqual(span(ja, 'soak-idle')[0]);
    // One process ran it, in the journal of the run that launched it.
    expect([...ja, ...jb].filter((l) => l['type'] === 'process-start' && l['name'] === 'cluster-all-gather')).toHaveLength(1);
    expect(record(out.cables[0]!)['result'].clusterCheck).toMatchObject({ topology: 'pair', minBusbwGBs: 21.875, met: true });
  });

  it('labels no sample with a phase before that phase starts (the samples taken while waiting a turn stay with the phase before)', () => {
    for (const c of out.cables) {
      const started = new Set<string>();
      const early: string[] = [];
      for (const l of journal(c)) {
        if (l['type'] === 'phase-start') started.add(l['phase']);
        if (l['type'] === 'sample' && !started.has(l['phase'])) early.push(`${l['phase']} at ${l['tS']} s`);
      }
      expect(early, c.serial).toEqual([]);
      // Each run waited its turn at least once (the other cable benchmarked meanwhile).
      expect(journal(c).some((l) => l['type'] === 'gate-wait')).toBe(true);
    }
  });

  it('judges each cable’s soak load against its half of its own benchmark figure, and says so', () => {
    for (const [i, c] of out.cables.entries()) {
      const other = out.cables[1 - i]!;
      const starts = journal(c).filter((l) => l['type'] === 'load-start' && l['load'] === 'link');
      expect(starts.map((l) => l['sharedWith'])).toEqual([
        [{ cage: other.cage, serial: other.serial, runId: journal(other)[0]!['runId'] }],
        [{ cage: other.cage, serial: other.serial, runId: journal(other)[0]!['runId'] }],
      ]);
      const idle = (record(c)['soakLoad'].link as Line[]).filter((d) => d['phase'] === 'soak-idle');
      expect(idle).toHaveLength(2);
      for (const d of idle) {
        expect(d['sharedBy']).toBe(2);
        // About half of each direction's ~185 Gb/s one-cable figure, and so ~100 % of its share.
        expect(d['medianGbps']).toBeGreaterThan(90);
        expect(d['medianGbps']).toBeLessThan(95);
        expect(d['pctOfBenchmark']).toBeGreaterThan(99);
        expect(d['pctOfBenchmark']).toBeLessThan(101);
      }
    }
    const html = readFileSync(out.cables[0]!.document!, 'utf8');
    expect(html).toContain('qualified at once with the cable in cage 1 (serial ONT2403150203');
    expect(html).toMatch(/spark-a → spark-b 92\.\d Gb\/s median \((99|100)\.\d % of its share \(1\/2\) of its ib_write_bw 185\.\d\)/);
  });

  it('soaks under one GPU load per node, and the clone’s FAIL stops only its own load: the good cable’s streams go on, at the whole rails', () => {
    const [ja, jb] = out.cables.map(journal) as [Line[], Line[]];
    const gpuStarts = [...ja, ...jb].filter((l) => l['type'] === 'process-start' && l['name'] === 'soak-loaded-gpu');
    expect(gpuStarts.map((l) => l['node']).sort()).toEqual(['spark-a', 'spark-b']);
    // Both runs judged the GPU load from its start on their own journal.
    for (const j of [ja, jb]) expect(j.filter((l) => l['type'] === 'load-start' && l['load'] === 'gpu').map((l) => l['node'])).toEqual(['spark-a', 'spark-b']);
    const clone = out.cables[1]!;
    expect(jb.find((l) => l['type'] === 'phase-end' && l['phase'] === 'soak-loaded')!['status']).toBe('stopped-early');
    expect(ja.find((l) => l['type'] === 'phase-end' && l['phase'] === 'soak-loaded')!['status']).toBe('done');
    const stopped = labMs(jb, jb.find((l) => l['type'] === 'load-stop' && l['phase'] === 'soak-loaded')!['tS']);
    expect(stopped).toBeLessThan(labMs(jb, clone.decidedAtS! + 5));
    // The good cable's rows after the clone's load stopped: each rail's whole ~92.5 Gb/s per direction.
    const late = ja
      .filter((l) => l['type'] === 'load-rows' && l['phase'] === 'soak-loaded' && labMs(ja, l['tS']) > stopped + 20_000)
      .flatMap((l) => (l['streams'] as Line[]).flatMap((s) => s['gbps'] as number[]));
    expect(late.length).toBeGreaterThan(10);
    for (const g of late) expect(g).toBeGreaterThan(90);
    // The good cable's journal says when it had the rails alone (within a tick of the clone's stop), and its rows are
    // judged so: before, against half its benchmark figure; after, against all of it: ~100 % either way.
    const alone = ja.filter((l) => l['type'] === 'load-sharing');
    expect(alone.map((l) => [l['phase'], l['sharedWith']])).toEqual([['soak-loaded', []]]);
    expect(labMs(ja, alone[0]!['tS']) - stopped).toBeGreaterThanOrEqual(0);
    expect(labMs(ja, alone[0]!['tS']) - stopped).toBeLessThanOrEqual(1000);
    const loaded = (record(out.cables[0]!)['soakLoad'].link as Line[]).filter((d) => d['phase'] === 'soak-loaded');
    for (const d of loaded) {
      expect(d['sharedBy']).toBe(2);
      expect(d['sharedUntilS']).toBe(alone[0]!['tS']);
      expect(d['pctOfBenchmark']).toBeGreaterThan(99);
      expect(d['pctOfBenchmark']).toBeLessThan(101);
    }
    // The clone's own journal never says so: the good cable's load ran to the soak's end.
    expect(jb.some((l) => l['type'] === 'load-sharing')).toBe(false);
  });

  it('each cable’s journal grades on its own to the verdict the run gave, and its document verifies', async () => {
    for (const c of out.cables) {
      const before = record(c);
      const g = await runCli(['grade', c.runDir], { env: env() });
      expect(g.code, g.err).toBe(c.outcome === 'FAIL' ? 1 : 0);
      const after = record(c);
      expect([after['outcome'], after['reasons'], after['soakLoad'], after['together']]).toEqual([
        before['outcome'],
        before['reasons'],
        before['soakLoad'],
        before['together'],
      ]);
      const v = await runCli(['verify', join(c.runDir, 'setup-check.json')], { env: env() });
      expect(v.out + v.err).toMatch(/SET-UP CHECK \(not a qualification\)/);
      expect(v.code, v.out + v.err).toBe(0);
    }
  });

  it('writes a store row per cable', () => {
    const db = new Database(join(root, 'reports', 'cablequal.db'), { readonly: true });
    try {
      const rows = db.prepare('SELECT run_id, outcome FROM runs ORDER BY run_id').all() as { run_id: string; outcome: string }[];
      expect(rows.map((r) => r.outcome).sort()).toEqual(['FAIL', 'PASS']);
      expect(rows.map((r) => r.run_id).sort()).toEqual(out.cables.map((c) => journal(c)[0]!['runId']).sort());
    } finally {
      db.close();
    }
  });
});

describe('run --port both refuses what it cannot do', () => {
  it('nodes given with their cages', async () => {
    const r = await runCli(['run', '--nodes', 'a:0,b:1', '--port', 'both', '--out', join(root, 'x')]);
    expect(r.code).toBe(2);
    expect(r.err).toBe('cablequal: --port both: give the nodes without cages (--nodes a,b): each node has one cable in cage 0 and one in cage 1\n');
  });

  it('a dry run of both (each cage is planned on its own)', async () => {
    const r = await runCli(['run', '--sim', 'dual-cage', '--port', 'both', '--dry-run']);
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err).toMatch(/^cablequal: --dry-run --port both: plan each cage on its own \(--port 0, then --port 1\)/);
  });
});

describe('two cables at once, interrupted', () => {
  it('Ctrl-C in the loaded soak: both runs ABORTED, every load on both nodes stopped (the shared GPU load too)', async () => {
    const clock = new VirtualClock(Date.parse('2026-12-01T10:00:00Z'));
    const lab = createLab({ scenario: 'dual-cage', clock, seed: 7 });
    const { protocol, protocolText } = loadProtocolArg('quick', process.cwd());
    const ac = new AbortController();
    const runs = ([0, 1] as const).map((cage) =>
      cliRunDeps({
        clock,
        runners: new Map(lab.nodes.map((n) => [n, lab.runner(n)])),
        nodes: lab.nodes.map((name) => ({ name, host: name, cage })),
        protocol,
        protocolText,
        outDir: join(root, 'interrupted'),
        label: null,
        signal: ac.signal,
        sim: 'dual-cage',
      }),
    ) as [RunDeps, RunDeps];
    let loadedAt: number | null = null;
    void (async () => {
      // 30 s after both cables' GPU-loaded soak has started (the lab's GPU load runs on both nodes).
      while (lab.state('spark-a').gpuUtilPct < 50) await clock.sleep(1000);
      loadedAt = lab.timeS();
      await clock.sleep(30_000);
      ac.abort('SIGINT');
    })();
    const settled = await runBothCages({ runs });
    expect(loadedAt).not.toBeNull();
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value.record.outcome : String(s.reason)))).toEqual(['ABORTED', 'ABORTED']);
    for (const n of lab.nodes) expect(lab.processes(n)).toEqual([]);
    expect(
      lab.events
        .filter((e) => e.kind === 'gpu-load-stop')
        .map((e) => e.node)
        .sort(),
    ).toEqual(['spark-a', 'spark-b']);
  });
});
