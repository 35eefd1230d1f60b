// `cablequal run --cluster` on the simulated clusters with the quick protocol (the full procedure is in
// test/run/cluster.system.test.ts): one run per cable of the map, each with its own journal and verdict; a cabling
// problem refuses the run with the map's words.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getRun } from '../../src/dashboard/queries.js';
import { runPage } from '../../src/dashboard/run-page.js';
import { chooseStore, openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/cli.js';

interface ClusterJson {
  mode: string;
  topology: string;
  simulated: boolean;
  clusterCheck?: { topology: string; nodes: string[]; busbwGBs: number; minBusbwGBs: number; met: boolean; text: string };
  cables: {
    link: string;
    a: { node: string; cage: number };
    b: { node: string; cage: number };
    serial: string;
    outcome: string;
    runDir: string;
    result: { clusterCheck?: unknown };
  }[];
}

describe('run --cluster --sim', () => {
  it('triangle-one-bad (quick): three cables, each its own run between its two ends; the clone FAILs, the others PASS; exit 1', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cq-cluster-'));
    const r = await runCli(['run', '--sim', 'triangle-one-bad', '--cluster', '--protocol', 'quick', '--out', out, '--json', '--db', 'off']);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out) as ClusterJson;
    expect([j.mode, j.topology, j.simulated]).toEqual(['cluster', 'triangle', true]);
    expect(j.cables.map((c) => [c.link, c.a, c.b, c.serial, c.outcome])).toEqual([
      ['spark-a:0--spark-b:1', { node: 'spark-a', cage: 0 }, { node: 'spark-b', cage: 1 }, 'MT2412VS02111', 'PASS'],
      ['spark-a:1--spark-c:0', { node: 'spark-a', cage: 1 }, { node: 'spark-c', cage: 0 }, 'MT2412VS02113', 'PASS'],
      ['spark-b:0--spark-c:1', { node: 'spark-b', cage: 0 }, { node: 'spark-c', cage: 1 }, 'ONT2403150301', 'FAIL'],
    ]);
    // Each record is its cable's: its two nodes, each at its cage; its run-start names the other two cables' runs.
    for (const c of j.cables) {
      const record = JSON.parse(readFileSync(join(c.runDir, 'record.json'), 'utf8')) as {
        nodes: { name: string; cage: { index: number } }[];
        together: { topology: string; link: string; with: { link: string }[] };
      };
      // The record (and so the certificate) names the topology, this cable's two ends and the cluster's other cables.
      expect([record.together.topology, record.together.link]).toEqual(['triangle', c.link]);
      expect(record.together.with.map((o) => o.link).sort()).toEqual(j.cables.map((x) => x.link).filter((l) => l !== c.link));
      expect(record.nodes.map((n) => [n.name, n.cage.index])).toEqual([
        [c.a.node, c.a.cage],
        [c.b.node, c.b.cage],
      ]);
      const start = JSON.parse(readFileSync(join(c.runDir, 'journal.jsonl'), 'utf8').split('\n')[0]!) as { together: { with: unknown[] } };
      expect(start.together.with).toHaveLength(2);
    }
    expect(
      readdirSync(out)
        .filter((d) => !d.startsWith('.') && !d.endsWith('.db'))
        .sort(),
    ).toEqual(['MT2412VS02111', 'MT2412VS02113', 'ONT2403150301']); // The cluster check ran once across the three nodes before the soaks, with the triangle's environment; every cable's
    // record states the same figure, against NVIDIA's 10 GB/s for the 3-node ring, and it grades no cable (the clone FAILs).
    const check = j.clusterCheck!;
    expect([check.topology, [...check.nodes].sort(), check.minBusbwGBs, check.met]).toEqual(['triangle', ['spark-a', 'spark-b', 'spark-c'], 10, true]);
    expect(check.busbwGBs).toBeGreaterThan(11.2);
    expect(check.busbwGBs).toBeLessThan(11.8);
    for (const c of j.cables) expect(c.result.clusterCheck).toEqual(check);
    const lines = j.cables.map((c) =>
      readFileSync(join(c.runDir, 'journal.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; phase?: string; command?: string; env?: Record<string, string> }),
    );
    for (const journal of lines) {
      const at = journal.findIndex((l) => l.type === 'cluster-check');
      expect(journal.findIndex((l) => l.type === 'phase-start' && l.phase === 'soak-idle')).toBeGreaterThan(at);
      expect(journal[at]!.env).toMatchObject({ NCCL_CROSS_NIC: '1', NCCL_IB_SUBNET_AWARE_ROUTING: '1' });
      expect(journal[at]!.command!.split(' : ')).toHaveLength(3);
    }
    const html = readFileSync(join(j.cables[0]!.runDir, 'setup-check.html'), 'utf8');
    expect(html).toMatch(/<th>cluster check<\/th><td>cluster check \(triangle, 3 nodes: [^<]*all_gather_perf bus bandwidth [\d.]+ GB\/s[^<]*: met</);
    const text = await runCli(['grade', j.cables[2]!.runDir, '--json']);
    expect((JSON.parse(text.out) as { result: { clusterCheck: unknown } }).result.clusterCheck).toEqual(check);
    // Imported into a store, the run page states it from the stored result.
    const store = join(out, 'store');
    expect((await runCli(['db', 'import', out, '--out', store])).code).toBe(0);
    const db = await openStore(chooseStore({ out: store }));
    try {
      const runId = (JSON.parse(readFileSync(join(j.cables[0]!.runDir, 'record.json'), 'utf8')) as { runId: string }).runId;
      const page = runPage({ run: (await getRun(db.db, runId))!, live: null, links: [], seriesUrl: null, journalNote: null });
      expect(page).toContain(`<th>cluster check</th><td><span id="cluster-check">${check.text.replace(/'/g, '&#39;')}</span>`);
    } finally {
      await db.close();
    }
  });

  it('triangle-miswired: not started, the map problems and their fixes on stderr, exit 3', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cq-cluster-'));
    const r = await runCli(['run', '--sim', 'triangle-miswired', '--cluster', '--protocol', 'quick', '--out', out, '--db', 'off']);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/^cablequal: run --cluster: not started: the cabling of spark-a, spark-b, spark-c \(triangle\) has 2 problems/m);
    expect(r.err).toMatch(/^ {2}miswired: spark-a:0--spark-b:0 joins port 0 to port 0/m);
    expect(r.err).toMatch(/^ {4}fix: swap the two cables at spark-b \(cage 0 <-> cage 1\)$/m);
    expect(readdirSync(out)).toEqual([]);
  });

  it('switch4: mapped and checked, but not qualified by --cluster: refused in one line, exit 3, nothing run', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cq-cluster-'));
    const r = await runCli(['run', '--sim', 'switch4', '--cluster', '--protocol', 'quick', '--out', out, '--db', 'off']);
    expect([r.code, r.err.trim().split('\n').length, readdirSync(out)]).toEqual([3, 1, []]);
    expect(r.err).toMatch(/a switch cluster is mapped and checked \(cablequal cabling\) but not qualified by --cluster yet/);
  });

  it('usage: --port or cages with --cluster, one node: one line, exit 2', async () => {
    for (const argv of [
      ['--sim', 'triangle', '--cluster', '--port', '1'],
      ['--nodes', 'a:0,b:1', '--cluster'],
      ['--nodes', 'a', '--cluster'],
    ]) {
      const r = await runCli(['run', ...argv, '--protocol', 'quick', '--out', mkdtempSync(join(tmpdir(), 'cq-cluster-')), '--db', 'off']);
      expect([argv.join(' '), r.code, r.err.trim().split('\n').length]).toEqual([argv.join(' '), 2, 1]);
    }
  });
});
