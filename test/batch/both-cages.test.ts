// `batch --port both` (issue 25 items 2-3): a pair takes two cables per swap, one in each cage, with one reboot of both
// nodes per swap, and qualifies them at once; the batch prints and records its measured throughput. Simulated lab,
// quick protocol, the scripted operator taking 2 min per cable and the nodes 3 min to reboot.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BatchState } from '../../src/batch/state.js';
import { runCli } from '../helpers/cli.js';

const cwd = mkdtempSync(join(tmpdir(), 'cq-batch-both-'));
let r: { code: number; out: string; err: string };
let state: BatchState;
const journalStart = (runDir: string) => JSON.parse(readFileSync(join(cwd, 'b', runDir, 'journal.jsonl'), 'utf8').split('\n')[0]!) as Record<string, any>;
const record = (runDir: string) => JSON.parse(readFileSync(join(cwd, 'b', runDir, 'record.json'), 'utf8')) as Record<string, any>;

beforeAll(async () => {
  writeFileSync(
    join(cwd, 'box.csv'),
    'label,scenario\nx1,good-qsfp56=SIMB1\nx2,failing-clone=SIMB2\nx3,good-qsfp112=SIMB3\nx4,good-qsfp56=SIMB4\nx5,good-qsfp56=SIMB5\n',
  );
  r = await runCli(
    ['batch', '--manifest', 'box.csv', '--sim', 'manifest', '--port', 'both', '--protocol', 'quick', '--out', 'b', '--sim-swap', '120', '--sim-reboot', '180'],
    { cwd },
  );
  state = JSON.parse(readFileSync(join(cwd, 'b', 'batch-state.json'), 'utf8')) as BatchState;
}, 120_000);

describe('batch --port both (simulated lab, quick protocol)', () => {
  it('ends with the dashboard command that shows its runs: the store beside the batch directory (#34 item 6)', () => {
    expect(r.out).toContain(`\ndashboard:     cablequal dashboard --out ${cwd}\n`);
    expect(existsSync(join(cwd, 'cablequal.db'))).toBe(true);
    expect(existsSync(join(cwd, 'b', 'cablequal.db'))).toBe(false);
  });

  it('qualifies two cables per swap, cage 0 then cage 1, each with its own verdict; an odd one last alone', () => {
    expect(r.code, r.err).toBe(1);
    expect(state.both).toBe(true);
    expect(state.cables.map((c) => [c.label, c.serial, c.outcome])).toEqual([
      ['x1', 'SIMB1', 'PASS'],
      ['x2', 'SIMB2', 'FAIL'],
      ['x3', 'SIMB3', 'PASS'],
      ['x4', 'SIMB4', 'PASS'],
      ['x5', 'SIMB5', 'PASS'],
    ]);
    expect(state.cycles!.map((c) => c.labels)).toEqual([['x1', 'x2'], ['x3', 'x4'], ['x5']]);
    // The cables of a swap started at the same moment of the lab's clock, each naming the other; x5 ran alone.
    const [x1, x2, , , x5] = state.cables.map((c) => c.runDir!);
    expect(journalStart(x1!).clockStartedAt).toBe(journalStart(x2!).clockStartedAt);
    expect(record(x1!).together).toEqual({ cage: 0, with: [{ cage: 1, runId: journalStart(x2!).runId, serial: 'SIMB2' }] });
    expect(record(x2!).nodes.map((n: any) => n.cage.index)).toEqual([1, 1]);
    expect(record(x5!).together).toBeUndefined();
    expect(record(x5!).nodes.map((n: any) => n.cage.index)).toEqual([0, 0]);
  });

  it('reboots both nodes once per swap (none for the cables in from the start)', () => {
    const reboots = readFileSync(join(cwd, 'b', 'bench.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { at: string; node?: string; step: string })
      .filter((e) => e.step === 'reboot');
    expect(reboots.map((e) => e.node)).toEqual(['spark-a', 'spark-b', 'spark-a', 'spark-b']);
    expect(state.cycles!.map((c) => [c.swapped, c.rebootS !== null])).toEqual([
      [false, false],
      [true, true],
      [true, true],
    ]);
    // The simulated nodes take 3 min to come back (polled every 5 s).
    for (const c of state.cycles!.slice(1)) {
      expect(c.rebootS).toBeGreaterThanOrEqual(180);
      expect(c.rebootS).toBeLessThan(195);
    }
  });

  it('prints and records its throughput: cables per hour, per pair per day, and the swap, reboot and settle times it saw', () => {
    const lines = r.out.split('\n');
    const total = lines.find((l) => l.startsWith('throughput: '))!;
    // The quick protocol runs set-up checks: they qualify no cable, and the pace is of set-up checks (#31 item 3).
    expect(total).toMatch(
      /^throughput: 0 cable\(s\) qualified; 5 set-up check\(s\) \(they qualify no cable\) in 0\.\d\d h on 1 pair\(s\): \d+\.\d\d set-up checks per hour, \d+\.\d per pair per day$/,
    );
    const cycle = lines[lines.indexOf(total) + 1]!;
    // Two swapped cycles: 2 cables (2 x 2 min of swapping) and 1 (2 min), so a mean of 1.5 cables and ~3 min of swap.
    expect(cycle).toMatch(
      /^ {2}a swap cycle of 1\.5 cable\(s\) \(mean of 2\): swap 3\.\d min, reboot 3\.\d min, settle \d\.\d min \(reboot included\), set-up check \d\.\d min: \d+\.\d cables per pair per day$/,
    );
    const swaps = state.cycles!.slice(1).map((c) => (Date.parse(c.inAt!) - Date.parse(c.askedAt)) / 1000);
    expect(swaps[0]).toBeGreaterThanOrEqual(240);
    expect(swaps[0]).toBeLessThan(260);
    expect(swaps[1]).toBeGreaterThanOrEqual(120);
    expect(swaps[1]).toBeLessThan(140);
    expect(readFileSync(join(cwd, 'b', 'batch.html'), 'utf8')).toContain(total);
  });

  it('refuses nodes given with cages, a node in two pairs, a resume in the other mode', async () => {
    const x = await runCli(['batch', '--manifest', 'box.csv', '--sim', 'manifest', '--port', 'both', '--nodes', 'a:0,b:1', '--out', 'c'], { cwd });
    expect([x.code, x.err]).toEqual([2, 'cablequal: --port both: give the nodes without cages (a,b): each pair has one cable in cage 0 and one in cage 1\n']);
    const y = await runCli(['batch', '--manifest', 'box.csv', '--sim', 'manifest', '--port', 'both', '--pair', 'a,b', '--pair', 'b,c', '--out', 'c'], { cwd });
    expect([y.code, y.err]).toEqual([2, 'cablequal: --port both: b is in two pairs, but each pair uses both cages of its nodes\n']);
    const z = await runCli(['batch', '--manifest', 'box.csv', '--sim', 'manifest', '--protocol', 'quick', '--out', 'b', '--resume'], { cwd });
    expect([z.code, z.err]).toEqual([2, 'cablequal: --resume: the batch ran with --port both (two cables per swap): give the same --port\n']);
  });
});
