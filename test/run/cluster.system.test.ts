// Clusters end to end (system tier): `sim serve` of a triangle (one SSH host per node) mapped by `cablequal cabling`
// over real SSH, and `run --cluster` of the full procedure on the simulated triangle with one failing clone.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CablingMap } from '../../src/domain/cabling.js';
import { serveSimLab, type SimServe } from '../../src/sim/serve.js';
import { runCli } from '../helpers/cli.js';
import { missingProgram } from '../helpers/requires.js';
import { servedNodeArgs } from '../helpers/served-nodes.js';

const noSshClient = missingProgram('/usr/bin/ssh', 'the cluster `sim serve` test', 'openssh-client');

describe('sim serve of a triangle, mapped over real SSH', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cq-cluster-serve-'));
  let lab: SimServe;
  beforeAll(async () => {
    lab = await serveSimLab({ scenario: 'triangle', speed: 10, dir: join(dir, 'keys') });
  });
  afterAll(async () => {
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(noSshClient)('one SSH host per node; cabling --nodes a,b,c maps the three cables by serial, exit 0', async () => {
    expect(lab.nodes.map((n) => n.name)).toEqual(['spark-a', 'spark-b', 'spark-c']);
    expect(new Set(lab.nodes.map((n) => n.port)).size).toBe(3);
    const r = await runCli(['cabling', ...servedNodeArgs(lab), '--json'], { env: { HOME: dir } });
    expect([r.code, r.err]).toEqual([0, '']);
    const map = JSON.parse(r.out) as CablingMap;
    expect([map.topology, map.links.map((l) => `${l.id} ${l.serial}`)]).toEqual([
      'triangle',
      ['spark-a:0--spark-b:1 MT2412VS02101', 'spark-a:1--spark-c:0 MT2412VS02103', 'spark-b:0--spark-c:1 MT2412VS02102'],
    ]);
  });
});

describe('run --cluster, the full procedure', { timeout: 600_000 }, () => {
  it('triangle-one-bad: three cables, two PASS and the clone FAIL, each with its certificate, exit 1', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cq-cluster-full-'));
    const r = await runCli(['run', '--sim', 'triangle-one-bad', '--cluster', '--json', '--out', out, '--db', 'off']);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out) as {
      mode: string;
      topology: string;
      cables: { link: string; outcome: string; qualification: boolean; certificate: string | null }[];
    };
    expect([j.mode, j.topology]).toEqual(['cluster', 'triangle']);
    expect(j.cables.map((c) => [c.link, c.outcome, c.qualification])).toEqual([
      ['spark-a:0--spark-b:1', 'PASS', true],
      ['spark-a:1--spark-c:0', 'PASS', true],
      ['spark-b:0--spark-c:1', 'FAIL', true],
    ]);
    for (const c of j.cables) expect(c.certificate).toMatch(/certificate\.html$/);
    rmSync(out, { recursive: true, force: true });
  });
});

describe('run --cluster of two nodes', { timeout: 300_000 }, () => {
  it('dual-cage, a pair with two cables: --cluster is the --port both run (the same samples and benchmarks in each journal)', async () => {
    // A journal's samples and benchmarks without the wall-clock fields and the chain (run ids and start times differ).
    const measured = (runDir: string) =>
      readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => /"type":"(sample|benchmark)"/.test(l))
        .map((l) => l.replace(/"(tMs|controllerMs|prev|startedAt|at)":[^,}]*/g, ''));
    const run = async (mode: string[]) => {
      const out = mkdtempSync(join(tmpdir(), 'cq-cluster-pair-'));
      const r = await runCli(['run', '--sim', 'dual-cage', ...mode, '--protocol', 'quick', '--out', out, '--json', '--db', 'off']);
      return { code: r.code, cables: (JSON.parse(r.out) as { cables: { link: string; serial: string; outcome: string; runDir: string }[] }).cables };
    };
    const both = await run(['--port', 'both']);
    const cluster = await run(['--cluster']);
    expect([both.code, cluster.code]).toEqual([1, 1]);
    expect(cluster.cables.map((c) => [c.link, c.serial, c.outcome])).toEqual([
      ['spark-a:0--spark-b:0', 'MT2412VS01562', 'PASS'],
      ['spark-a:1--spark-b:1', 'ONT2403150203', 'FAIL'],
    ]);
    for (const [i, c] of cluster.cables.entries()) {
      const lines = measured(c.runDir);
      expect(lines.length).toBeGreaterThan(300);
      expect(lines).toEqual(measured(both.cables[i]!.runDir));
    }
  });
});
