import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchCommand } from '../../src/cli/batch-command.js';
import type { CliIo } from '../../src/cli/io.js';
import type { Operator } from '../../src/batch/operator.js';
import type { BatchState } from '../../src/batch/state.js';
import { runCli } from '../helpers/cli.js';
import { csvObjects } from '../helpers/csv.js';

// Simulated box of 5 cables (generated scenarios, not recordings): c4 repeats c1's simulated serial.
const BOX = 'good-qsfp56=SIMBOX01,failing-clone,good-qsfp112,good-qsfp56=SIMBOX01,marginal-qsfp112';

function io(cwd: string, signal?: AbortSignal): CliIo & { out: () => string } {
  let out = '';
  return {
    stdout: (s) => void (out += s),
    stderr: () => undefined,
    readStdin: async () => '',
    isTTY: false,
    cwd,
    env: {},
    ...(signal ? { signal } : {}),
    out: () => out,
  };
}

// batch.csv as records (an RFC 4180 reader: node facts such as the OS release hold commas).
const csvRows = (path: string): Record<string, string>[] => csvObjects(readFileSync(path, 'utf8'));

describe('cablequal batch on the simulated lab', () => {
  it('5 cables, an interruption on the third, --resume: 5 rows with the expected outcomes, reports linked', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-batch-'));
    writeFileSync(join(cwd, 'box.csv'), 'label,pn\nc1,MCP1650-V00AE30\nc2,\nc3,\nc4,\nc5,WRONG-PN\n');
    const ac = new AbortController();
    const said: string[] = [];
    const op: Operator = {
      say: (l) => {
        said.push(l);
        // The quick protocol runs set-up checks, and the batch says so (#31 item 3).
        if (l.startsWith('[pair 1] c3 (serial LX24301188): set-up check (not a qualification)')) ac.abort('test interrupts c3');
      },
      ask: async () => 'continue',
      stopRequested: () => false,
    };
    const first = await batchCommand(
      { manifest: 'box.csv', sim: BOX, protocol: 'quick', autoDetect: true, resume: false, out: 'b', operator: op },
      io(cwd, ac.signal),
      ac.signal,
    );
    expect(first).toBe(130);
    const mid = JSON.parse(readFileSync(join(cwd, 'b', 'batch-state.json'), 'utf8')) as BatchState;
    expect(mid.cables.map((c) => c.status)).toEqual(['done', 'done', 'running', 'pending', 'pending']);
    expect(mid.cables[2]!.attempts).toBe(1);
    expect(said).toContain('[pair 1] plug cable "c2" into spark-a cage 1 and spark-b cage 1');

    const again = await runCli(['batch', '--manifest', 'box.csv', '--sim', BOX, '--protocol', 'quick', '--out', 'b'], { cwd });
    expect(again.code).toBe(2);
    expect(again.err).toContain('already holds a batch: add --resume');

    const resumed = await runCli(['batch', '--manifest', 'box.csv', '--sim', BOX, '--protocol', 'quick', '--out', 'b', '--resume'], { cwd });
    expect(resumed.code).toBe(1); // a FAIL in the box
    const state = JSON.parse(readFileSync(join(cwd, 'b', 'batch-state.json'), 'utf8')) as BatchState;
    expect(state.cables.map((c) => c.status)).toEqual(['done', 'done', 'done', 'refused', 'done']);
    expect(state.cables[2]!.attempts).toBe(2); // re-run from the start

    const rows = csvRows(join(cwd, 'b', 'batch.csv'));
    expect(rows.map((r) => [r.label, r.serial, r.outcome])).toEqual([
      ['c1', 'SIMBOX01', 'PASS'],
      ['c2', 'ONT2403150117', 'FAIL'],
      ['c3', 'LX24301188', 'PASS'],
      ['c4', 'SIMBOX01', 'ERROR'],
      ['c5', 'LX24301577', 'MARGINAL'], // marginal-qsfp112 stays MARGINAL even on the quick protocol (seed 1)
    ]);
    expect(state.cables[3]!.reason).toBe('repeated serial: SIMBOX01 was already tested in this batch as "c1"');
    // The hot-plug trap: every cable the scripted operator swapped into the running nodes (c2, c3, c5; c4 was refused
    // before anything ran) was measured only after both nodes rebooted; c1 and the resumed c3 were in at boot.
    const log = readFileSync(join(cwd, 'b', 'bench.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { step: string; node?: string; exitCode?: number });
    expect(log.filter((e) => e.step === 'reboot').map((e) => [e.node, e.exitCode])).toEqual([
      ['spark-a', 0],
      ['spark-b', 0],
      ['spark-a', 0],
      ['spark-b', 0],
      ['spark-a', 0],
      ['spark-b', 0],
    ]);
    expect(log.filter((e) => e.step === 'rebooted')).toHaveLength(3);
    expect(readFileSync(join(cwd, 'b', 'batch.csv'), 'utf8')).toContain('"refused: repeated serial: SIMBOX01 was already tested in this batch as ""c1"""');
    expect(state.cables[4]!.warnings).toEqual(['manifest expects part number WRONG-PN, the EEPROM says LMTQF022-SD-R']);

    const html = readFileSync(join(cwd, 'b', 'batch.html'), 'utf8');
    for (const c of state.cables.filter((x) => x.status === 'done')) {
      // quick-protocol runs: a set-up check, or a run report for ERROR/ABORTED, never a certificate
      expect(c.report).toMatch(new RegExp(`^runs/${c.label}/[^/]+/(setup-check|run-report)\\.html$`));
      expect(existsSync(join(cwd, 'b', c.report!))).toBe(true);
      expect(html).toContain(`href="${c.report}"`);
    }
    expect(html).toContain('SIMULATED LAB');
    expect(html).not.toMatch(/<script|src="http/);
  }, 120_000);

  it('two pairs run concurrently from one controller, one summary', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-batch2-'));
    writeFileSync(join(cwd, 'box.csv'), 'label,scenario\nx1,good-qsfp56=SIMX1\nx2,good-qsfp112=SIMX2\nx3,failing-clone\nx4,good-qsfp56=SIMX4\n');
    const wallStart = Math.floor(Date.now() / 1000) * 1000;
    const r = await runCli(
      [
        'batch',
        '--manifest',
        'box.csv',
        '--sim',
        'manifest',
        '--pair',
        'spark-a:1,spark-b:1',
        '--pair',
        'spark-c:1,spark-d:1',
        '--protocol',
        'quick',
        '--out',
        'b',
      ],
      { cwd },
    );
    expect(r.code).toBe(1);
    const state = JSON.parse(readFileSync(join(cwd, 'b', 'batch-state.json'), 'utf8')) as BatchState;
    expect(state.cables.map((c) => [c.label, c.pair, c.serial, c.outcome])).toEqual([
      ['x1', 0, 'SIMX1', 'PASS'],
      ['x2', 1, 'SIMX2', 'PASS'],
      ['x3', 0, 'ONT2403150117', 'FAIL'],
      ['x4', 1, 'SIMX4', 'PASS'],
    ]);
    const rec = (i: number) => JSON.parse(readFileSync(join(cwd, 'b', state.cables[i]!.runDir!, 'record.json'), 'utf8'));
    expect(rec(1).nodes.map((n: { name: string }) => n.name)).toEqual(['spark-c', 'spark-d']);
    expect(rec(1).sharedNodes).toBeUndefined();
    // Concurrent: the first cables of both pairs started at the same moment of the lab's (virtual) clock; their
    // startedAt is the wall clock, when each started.
    const runStart = (i: number) =>
      JSON.parse(readFileSync(join(cwd, 'b', state.cables[i]!.runDir!, 'journal.jsonl'), 'utf8').split('\n')[0]!) as {
        clockStartedAt: string;
        startedAt: string;
      };
    expect(runStart(0).clockStartedAt).toBe(runStart(1).clockStartedAt);
    // Never in the future: each run is stamped with the wall clock while the batch ran, though the lab's virtual
    // clock ran ahead of it (the third cable started, on that clock, later than the wall clock is now).
    for (const i of [0, 1, 2, 3]) {
      expect(rec(i).startedAt).toBe(runStart(i).startedAt);
      expect(Date.parse(rec(i).startedAt)).toBeGreaterThanOrEqual(wallStart);
      expect(Date.parse(rec(i).startedAt)).toBeLessThanOrEqual(Date.now());
    }
    expect(Date.parse(runStart(2).clockStartedAt)).toBeGreaterThan(Date.now());
    expect(
      readFileSync(join(cwd, 'b', 'batch.csv'), 'utf8')
        .trim()
        .split('\n'),
    ).toHaveLength(5);
  }, 120_000);

  it('--sim puts the cable in the cages --pair names (the triangle wiring a:0,b:1)', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-batch3-'));
    writeFileSync(join(cwd, 'box.csv'), 'label\nt1\n');
    const r = await runCli(['batch', '--manifest', 'box.csv', '--sim', 'good-qsfp56', '--pair', 'spark-a:0,spark-b:1', '--protocol', 'quick', '--out', 'b'], {
      cwd,
    });
    expect(r.code).toBe(0);
    const state = JSON.parse(readFileSync(join(cwd, 'b', 'batch-state.json'), 'utf8')) as BatchState;
    const rec = JSON.parse(readFileSync(join(cwd, 'b', state.cables[0]!.runDir!, 'record.json'), 'utf8'));
    expect(rec.outcome).toBe('PASS');
    expect(rec.nodes.map((n: { name: string; cage: { index: number } }) => [n.name, n.cage.index])).toEqual([
      ['spark-a', 0],
      ['spark-b', 1],
    ]);
  }, 60_000);
});
