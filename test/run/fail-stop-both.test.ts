// Two cables at once (`run --port both`, #33 item 3): a FAIL decided on one cable stops that cable's run at once,
// whether it holds the benchmark turn or waits for it while the other cable benchmarks, and the other run goes on
// unhindered (the turn handed on at once). Simulated dual-cage lab (quick protocol, seed 7): the `uncorrectable`
// fault puts one uncorrectable codeword at spark-b's receiver of the lab's first cable, the clone in cage 1.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

type Line = Record<string, any>;
interface Cable {
  cage: number;
  outcome: string;
  reasons: { rule: string; node?: string; message: string }[];
  runDir: string;
}
const INTERVAL_S = 1;
const TAIL_S = 10;

async function bothWith(fault: string): Promise<{ cables: Cable[]; journals: Line[][] }> {
  const root = mkdtempSync(join(tmpdir(), 'cq-stop-both-'));
  const r = await runCli(['run', '--sim', 'dual-cage', '--port', 'both', '--protocol', 'quick', '--seed', '7', '--json', '--out', root, '--sim-fault', fault]);
  const out = JSON.parse(r.out) as { cables: Cable[] };
  const journals = out.cables.map((c) =>
    readFileSync(join(c.runDir, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line),
  );
  return { cables: out.cables, journals };
}

const find = (j: Line[], type: string, phase?: string) => j.find((l) => l['type'] === type && (phase === undefined || l['phase'] === phase));

// The stopped cable's run: one decision, no load started after it, the run's end after the tail; `grade` agrees.
async function expectStopped(c: Cable, j: Line[]): Promise<number> {
  const d = j.filter((l) => l['type'] === 'decision');
  expect(d).toHaveLength(1);
  const dS = d[0]!['tS'] as number;
  expect(j.slice(j.indexOf(d[0]!)).filter((l) => l['type'] === 'process-start')).toEqual([]);
  const end = find(j, 'run-end')!['tS'] as number;
  expect(end - dS).toBeGreaterThanOrEqual(TAIL_S);
  expect(end - dS).toBeLessThanOrEqual(INTERVAL_S + TAIL_S + INTERVAL_S);
  expect(c.outcome).toBe('FAIL');
  expect(c.reasons[0]).toMatchObject({ rule: 'post-fec-errors', node: 'spark-b' });
  const g = await runCli(['grade', c.runDir, '--json']);
  const graded = JSON.parse(g.out) as { outcome: string; reasons: Cable['reasons'] };
  expect([graded.outcome, graded.reasons.map((r) => r.message)]).toEqual([c.outcome, c.reasons.map((r) => r.message)]);
  return dS;
}

describe('run --port both: a FAIL on one cable', { timeout: 60_000 }, () => {
  it('while it waits for its turn (the other cable in its loopback): it never starts a benchmark; the other goes on at once', async () => {
    const { cables, journals } = await bothWith('uncorrectable@10s');
    const [good, clone] = [0, 1].map((i) => ({ c: cables.find((x) => x.cage === i)!, j: journals[cables.findIndex((x) => x.cage === i)]! }));
    const dS = await expectStopped(clone!.c, clone!.j);
    // Waiting at the loopback's gate when decided: no phase of the clone's ran after identity.
    expect(find(clone!.j, 'gate-wait', 'loopback')!['tS']).toBeLessThan(dS);
    expect(clone!.j.filter((l) => l['type'] === 'process-start')).toEqual([]);
    expect(clone!.j.filter((l) => l['type'] === 'phase-end' && l['status'] !== 'done').every((l) => l['status'] === 'skipped')).toBe(true);
    // The good cable: its loopback ran whole, its next turn came without a wait, PASS.
    expect(find(good!.j, 'phase-end', 'loopback')!['status']).toBe('done');
    expect(find(good!.j, 'phase-start', 'ib-write-bw')!['tS']).toBe(find(good!.j, 'gate-wait', 'ib-write-bw')!['tS']);
    expect(good!.c.outcome).toBe('PASS');
  });

  it('in its own benchmark turn: its loopback stops within an interval and the waiting cable takes the turn at once', async () => {
    const { cables, journals } = await bothWith('uncorrectable@30s');
    const [good, clone] = [0, 1].map((i) => ({ c: cables.find((x) => x.cage === i)!, j: journals[cables.findIndex((x) => x.cage === i)]! }));
    const dS = await expectStopped(clone!.c, clone!.j);
    const stopped = find(clone!.j, 'phase-end', 'loopback')!;
    expect(stopped['status']).toBe('stopped-early');
    expect((stopped['tS'] as number) - dS).toBeLessThanOrEqual(INTERVAL_S);
    // Both runs share the lab's clock from the same start: the good cable's ib-write-bw starts as the clone's stops.
    const started = find(good!.j, 'phase-start', 'ib-write-bw')!['tS'] as number;
    expect(started).toBeGreaterThanOrEqual(stopped['tS'] as number);
    expect(started - dS).toBeLessThanOrEqual(INTERVAL_S);
    expect(good!.c.outcome).toBe('PASS');
  });
});
