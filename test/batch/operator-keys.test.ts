// The attended batch: the operator answers each "cable in?" prompt on the keyboard with Enter (the cable is in, go
// on), `s` (skip this cable) or `q` (stop; the state is saved and --resume continues); a `q` typed while a cable runs
// stops after that cable. Keystrokes go through the same line reader the CLI puts on stdin (streamOperator), into
// `cablequal batch` on the simulated lab (generated cables, not recordings).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { streamOperator } from '../../src/batch/operator.js';
import type { BatchState } from '../../src/batch/state.js';
import { batchCommand } from '../../src/cli/batch-command.js';
import type { CliIo } from '../../src/cli/io.js';
import { csvObjects } from '../helpers/csv.js';

const PROMPT = 'cable in? [Enter = continue, s = skip, q = stop] ';
const BOX = 'good-qsfp56=SIMKEY01,good-qsfp112=SIMKEY02,good-qsfp56=SIMKEY03,good-qsfp112=SIMKEY04';

function quietIo(cwd: string): CliIo {
  return { stdout: () => undefined, stderr: () => undefined, readStdin: async () => '', isTTY: false, cwd, env: {} };
}

// batch.csv as records.
const csvRows = (path: string) => csvObjects(readFileSync(path, 'utf8'));

// A keyboard that answers each prompt with the key planned for the cable just asked for (as many times as the
// prompt comes back, up to 3 times: the link may still be training), and types `q` while the cables in `quitWhileRunning` run.
// Keys are typed after the prompt is written, as a person would, never in the same tick.
function keyboard(plan: Record<string, string>, quitWhileRunning: string[] = []) {
  const keys = new PassThrough();
  const transcript: string[] = [];
  let asking: string | null = null;
  const asked = new Map<string, number>();
  const type = (k: string) => queueMicrotask(() => keys.write(`${k}\n`));
  const op = streamOperator(keys, (s) => {
    transcript.push(s);
    const plug = /^\[pair 1\] plug cable "([^"]+)"/.exec(s);
    if (plug) asking = plug[1]!;
    if (s === PROMPT) {
      const k = plan[asking!];
      if (k === undefined) throw new Error(`test: cable ${asking} was asked for, no key planned for it`);
      asked.set(asking!, (asked.get(asking!) ?? 0) + 1);
      if (asked.get(asking!)! > 3) throw new Error(`test: cable ${asking} asked for ${asked.get(asking!)} times: the key ${JSON.stringify(k)} is not taken`);
      type(k);
    }
    // The quick protocol: each run is a set-up check, and the batch says so (#31 item 3).
    const running = /^\[pair 1\] (\S+) \(serial \S+\): set-up check \(not a qualification\)/.exec(s);
    if (running && quitWhileRunning.includes(running[1]!)) type('q');
  });
  return { op, transcript, prompted: () => transcript.filter((l) => l === PROMPT).length };
}

const state = (cwd: string) => JSON.parse(readFileSync(join(cwd, 'b', 'batch-state.json'), 'utf8')) as BatchState;

describe('streamOperator: the attended keys', () => {
  it('Enter, s/skip, q/quit in any case; anything else asks again; q typed between prompts stops after the cable; end of input quits', async () => {
    const keys = new PassThrough();
    let written = '';
    const op = streamOperator(keys, (s) => void (written += s));
    // Typed at the prompt.
    const at = async (line: string) => {
      const a = op.ask('cable in?');
      keys.write(`${line}\n`);
      return a;
    };
    expect(await at('')).toBe('continue');
    expect(await at('  S ')).toBe('skip');
    expect(await at('skip')).toBe('skip');
    expect(await at('Q')).toBe('quit');
    expect(await at('quit')).toBe('quit');
    expect(written).toBe(PROMPT.repeat(5));
    const maybe = op.ask('cable in?');
    keys.write('maybe\n');
    await new Promise((r) => setImmediate(r));
    expect(written.slice(PROMPT.length * 5)).toBe(`${PROMPT}answer with Enter, s or q\n${PROMPT}`); // asked again
    keys.write('s\n');
    expect(await maybe).toBe('skip');
    // Typed ahead, nobody asking: Enter and s wait for the next prompt, q asks to stop after the running cable.
    keys.write('\ns\n');
    await new Promise((r) => setImmediate(r));
    expect(op.stopRequested()).toBe(false);
    keys.write('q\n');
    await new Promise((r) => setImmediate(r));
    expect(op.stopRequested()).toBe(true);
    expect(await op.ask('cable in?')).toBe('continue');
    expect(await op.ask('cable in?')).toBe('skip');
    // Keyboard gone (stdin closed): a pending prompt is a quit, never a hang.
    const pending = op.ask('cable in?');
    keys.end();
    expect(await pending).toBe('quit');
    expect(await op.ask('cable in?')).toBe('quit');
    op.close();
  });
});

describe('cablequal batch, attended, on the simulated lab', () => {
  it('Enter qualifies, s skips, q stops with a resumable state; --resume continues with the next cable; q during a run stops after it', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-batch-keys-'));
    writeFileSync(join(cwd, 'box.csv'), 'label\nc1\nc2\nc3\nc4\n');
    const args = { manifest: 'box.csv', sim: BOX, protocol: 'quick', autoDetect: false, out: 'b' };
    const signal = new AbortController().signal;

    // 1: Enter on c1, s on c2, q on c3.
    const k1 = keyboard({ c1: '', c2: 's', c3: 'q' });
    const first = await batchCommand({ ...args, resume: false, operator: k1.op }, quietIo(cwd), signal);
    k1.op.close();
    expect(first).toBe(4); // cables left: not finished
    const s1 = state(cwd);
    expect(s1.cables.map((c) => [c.label, c.status, c.serial, c.outcome, c.attempts])).toEqual([
      ['c1', 'done', 'SIMKEY01', 'PASS', 1],
      ['c2', 'skipped', null, null, 0],
      ['c3', 'pending', null, null, 0],
      ['c4', 'pending', null, null, 0],
    ]);
    expect(s1.cables[1]!.reason).toBe('skipped by the operator');
    // Enter came before c1 ran; nothing ran after the prompt answered with q.
    const t1 = k1.transcript.join('');
    expect(t1.indexOf(PROMPT)).toBeLessThan(t1.indexOf('[pair 1] c1 (serial SIMKEY01): set-up check (not a qualification)'));
    expect(t1).toContain('[pair 1] plug cable "c3"');
    expect(t1).not.toContain('[pair 1] c3 (serial');
    expect(t1).not.toContain('plug cable "c4"');
    const rows1 = csvRows(join(cwd, 'b', 'batch.csv'));
    expect(rows1.map((r) => [r.label, r.serial, r.outcome])).toEqual([
      ['c1', 'SIMKEY01', 'PASS'],
      ['c2', '', ''],
      ['c3', '', ''],
      ['c4', '', ''],
    ]);
    expect(rows1.slice(1).map((r) => r.reasons)).toEqual(['skipped by the operator', 'not tested yet', 'not tested yet']);

    // 2: --resume starts at c3 (the skipped c2 is not asked again); Enter, then q typed while c3 runs.
    const k2 = keyboard({ c3: '' }, ['c3']);
    const second = await batchCommand({ ...args, resume: true, operator: k2.op }, quietIo(cwd), signal);
    k2.op.close();
    expect(second).toBe(4);
    expect(state(cwd).cables.map((c) => [c.label, c.status, c.serial])).toEqual([
      ['c1', 'done', 'SIMKEY01'],
      ['c2', 'skipped', null],
      ['c3', 'done', 'SIMKEY03'],
      ['c4', 'pending', null],
    ]);
    const t2 = k2.transcript.join('');
    expect(t2).not.toContain('plug cable "c1"');
    expect(t2).not.toContain('plug cable "c2"');
    expect(t2).toContain('[pair 1] c3 (serial SIMKEY03): PASS');
    expect(t2).not.toContain('plug cable "c4"'); // stopped after c3, before asking for c4

    // 3: --resume, Enter on c4: the batch completes; the skip stays in the summary.
    const k3 = keyboard({ c4: '' });
    const third = await batchCommand({ ...args, resume: true, operator: k3.op }, quietIo(cwd), signal);
    k3.op.close();
    expect(third).toBe(0);
    expect(k3.transcript.join('')).not.toContain('plug cable "c3"');
    expect(state(cwd).cables.map((c) => [c.status, c.attempts])).toEqual([
      ['done', 1],
      ['skipped', 0],
      ['done', 1],
      ['done', 1],
    ]);
    const rows3 = csvRows(join(cwd, 'b', 'batch.csv'));
    expect(rows3.map((r) => [r.label, r.serial, r.outcome])).toEqual([
      ['c1', 'SIMKEY01', 'PASS'],
      ['c2', '', ''],
      ['c3', 'SIMKEY03', 'PASS'],
      ['c4', 'SIMKEY04', 'PASS'],
    ]);
    expect(rows3[1]!.reasons).toBe('skipped by the operator');
    expect(rows3[1]!.run_id).toBe(''); // no run for the skipped cable
  }, 60_000);
});
