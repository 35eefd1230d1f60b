import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../src/batch/manifest.js';
import { Mutex, NodeMutexes } from '../../src/batch/mutex.js';
import { initialState, sharedNodesOf, type Bench } from '../../src/batch/campaign.js';
import { batchCsv, summaryRows } from '../../src/batch/summary.js';
import { UsageError } from '../../src/domain/errors.js';

describe('manifest', () => {
  it('reads labels, part numbers and serials', () => {
    expect(parseManifest('# box 7\nlabel,pn,serial\nA1,NJAAKK0006,\nA2,,APF24150032K7N\n', 'm.csv')).toEqual([
      { label: 'A1', line: 3, expectedPn: 'NJAAKK0006' },
      { label: 'A2', line: 4, expectedSerial: 'APF24150032K7N' },
    ]);
  });
  it.each([
    ['label,pn\nA1,X,Y\n', 'm.csv:2: expected 2 fields (label,pn), got 3'],
    ['label,colour\nA1,red\n', 'm.csv:1: unknown column "colour"'],
    ['pn\nX\n', 'm.csv:1: the header has no "label" column'],
    ['label\nA 1\n', 'm.csv:2: field "label": "A 1" must be'],
    ['label\nA1\nA1\n', 'm.csv:3: field "label": "A1" already used on line 2'],
    ['label,serial\nA1,"x"\n', 'm.csv:2: quoted fields are not supported'],
    ['label\n', 'm.csv:1: the manifest lists no cable'],
  ])('refuses %j with one line naming file, line and field', (text, msg) => {
    let e: unknown;
    try {
      parseManifest(text, 'm.csv');
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(UsageError);
    expect((e as Error).message.startsWith(msg)).toBe(true);
    expect((e as Error).message).not.toContain('\n');
  });
});

describe('node sharing', () => {
  it('finds the node two benches share and serialises its holders in order', async () => {
    const b = (x: string, y: string): Bench => ({
      nodes: [
        { name: x, host: x, cage: 0 },
        { name: y, host: y, cage: 1 },
      ],
      runners: new Map(),
    });
    const benches = [b('a', 'b'), b('b', 'c'), b('d', 'e')];
    expect(sharedNodesOf(benches, 0)).toEqual(['b']);
    expect(sharedNodesOf(benches, 1)).toEqual(['b']);
    expect(sharedNodesOf(benches, 2)).toEqual([]);
    const m = new NodeMutexes();
    const order: string[] = [];
    const r1 = await m.lockAll(['b']);
    const second = m.lockAll(['b']).then((r) => (order.push('second'), r));
    await new Promise((r) => setImmediate(r));
    order.push('first-releases');
    r1();
    (await second)();
    expect(order).toEqual(['first-releases', 'second']);
    const mu = new Mutex();
    (await mu.lock())();
    (await mu.lock())(); // free again after release
  });
});

describe('golden drift', () => {
  it('marks every verdict of the batch ERROR and says why', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-gold-'));
    const s = initialState({ manifestFile: 'm.csv', manifest: parseManifest('label\nA1\nA2\n', 'm.csv'), pairs: ['a,b'], protocol: 'quick', golden: 'G1' });
    expect(s.cables.map((c) => c.label)).toEqual(['golden-first', 'A1', 'A2', 'golden-last']);
    // A1 refused, A2 untested; the drift override applies to records, refusals stay ERROR.
    s.cables[1]!.status = 'refused';
    s.cables[1]!.serial = 'X';
    s.cables[1]!.reason = 'repeated serial';
    s.goldenDrift = { ok: false, detail: 'ib_write_bw_sum_gbps out-of-tolerance' };
    const rows = await summaryRows(dir, s);
    expect(rows.map((r) => [r.cable.label, r.outcome, r.reason])).toEqual([
      ['A1', 'ERROR', 'refused: repeated serial'],
      ['A2', '', 'not tested yet'],
    ]);
    expect(batchCsv(rows).split('\n')[1]).toContain('A1');
  });
});

describe('batch --sim with a node in two pairs', () => {
  it('runs both queues, benchmarks of the shared node take turns, and every record names the shared node', async () => {
    const { runCli } = await import('../helpers/cli.js');
    const { mkdtempSync, writeFileSync, readFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'cq-batch-shared-'));
    writeFileSync(join(dir, 'm.csv'), 'label\nc1\nc2\n');
    const r = await runCli([
      'batch',
      '--manifest',
      join(dir, 'm.csv'),
      '--sim',
      'good-qsfp56=S1,good-qsfp56=S2',
      '--pair',
      'a:0,b:1',
      '--pair',
      'c:1,b:0',
      '--protocol',
      'quick',
      '--out',
      join(dir, 'out'),
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/b in two pairs: benchmarks take turns/);
    const state = JSON.parse(readFileSync(join(dir, 'out', 'batch-state.json'), 'utf8')) as { cables: { runDir: string; outcome: string }[] };
    expect(state.cables.map((c) => c.outcome)).toEqual(['PASS', 'PASS']);
    const journals = state.cables.map((c) =>
      readFileSync(join(dir, 'out', c.runDir, 'journal.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    );
    for (const [i, c] of state.cables.entries()) {
      expect(JSON.parse(readFileSync(join(dir, 'out', c.runDir, 'record.json'), 'utf8')).sharedNodes).toEqual(['b']);
      expect(readFileSync(join(dir, 'out', c.runDir, 'setup-check.html'), 'utf8')).toContain('shared nodes');
      void i;
    }
    // Each benchmark phase (loopback, ib_write_bw, nccl) of one cable never overlaps one of the other's.
    // On the lab's clock the two runs share (their startedAt is the wall clock, nearly the same for both).
    const spans = (j: { type: string; phase?: string; tS: number; clockStartedAt?: string }[]) => {
      const t0 = Date.parse(j[0]!.clockStartedAt!);
      return ['loopback', 'ib-write-bw', 'nccl'].map((ph) => [
        t0 + j.find((l) => l.type === 'phase-start' && l.phase === ph)!.tS * 1000,
        t0 + j.find((l) => l.type === 'phase-end' && l.phase === ph)!.tS * 1000,
      ]);
    };
    const [a, b] = journals.map((j) => spans(j as never));
    for (const [s1, e1] of a!) for (const [s2, e2] of b!) expect(e1! <= s2! || e2! <= s1!, `${s1}-${e1} vs ${s2}-${e2}`).toBe(true);
    expect(journals.some((j) => (j as { type: string }[]).some((l) => l.type === 'gate-wait'))).toBe(true);
    // The soaks overlap on b, the second node of both pairs (it receives both pairs' first direction): each pair's
    // ib_write_bw servers there listen on TCP ports of their own.
    const portsOnB = journals.map(
      (j) =>
        new Set(
          (j as { type: string; node?: string; name?: string; command?: string }[])
            .filter((l) => l.type === 'process-start' && l.node === 'b' && /^soak-.*-server-/.test(l.name ?? ''))
            .map((l) => Number(/-p (\d+)/.exec(l.command!)![1])),
        ),
    );
    expect(portsOnB[0]!.size).toBeGreaterThan(0);
    expect(portsOnB[1]!.size).toBeGreaterThan(0);
    expect([...portsOnB[0]!].filter((p) => portsOnB[1]!.has(p))).toEqual([]);
  });
});
