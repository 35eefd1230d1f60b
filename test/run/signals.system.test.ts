import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

// The controller stopped from outside, the real binary (node bin/cablequal.js, dist/ built by the system tier's
// setup): Ctrl-C and SIGTERM stop every load and leave an ABORTED record with the conventional exit code; SIGKILL
// leaves a journal that `cablequal grade` turns into ABORTED with everything up to the last tick.

const BIN = join(process.cwd(), 'bin', 'cablequal.js');

function journalPathIn(out: string): string | null {
  const label = join(out, 'sig');
  if (!existsSync(label)) return null;
  const runs = readdirSync(label);
  return runs[0] ? join(label, runs[0], 'journal.jsonl') : null;
}

// Start the real CLI on the simulated lab and resolve once its journal shows the idle soak under way.
async function spawnUntilSoak(out: string): Promise<{ child: ChildProcess; journal: string; exit: Promise<number | null>; stderr: () => string }> {
  const child = spawn(process.execPath, [BIN, 'run', '--sim', 'good-qsfp56', '--seed', '7', '--label', 'sig', '--out', out, '--json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout!.resume();
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ? -1 : code)));
  const deadline = Date.now() + 20_000;
  for (;;) {
    const p = journalPathIn(out);
    // At least ten idle-soak samples (five ticks on both nodes), so the soak has figures to keep.
    if (p && existsSync(p) && (readFileSync(p, 'utf8').match(/"type":"sample","tS":[\d.]+,"tick":\d+,"phase":"soak-idle"/g)?.length ?? 0) >= 10) {
      return { child, journal: p, exit, stderr: () => err };
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`the run never reached the soak: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('signals', { timeout: 60_000 }, () => {
  it('SIGKILL mid-soak: journal intact to the last tick, grade gives ABORTED (exit 4) with that tick', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cq-kill-'));
    const run = await spawnUntilSoak(out);
    run.child.kill('SIGKILL');
    expect(await run.exit).toBe(-1);
    const text = readFileSync(run.journal, 'utf8');
    const lines = text.split('\n');
    const last = lines.pop()!; // '' when the last line was complete, else the torn line
    const parsed = lines.map((l) => JSON.parse(l) as { type: string; tick?: number; node?: string; phase?: string });
    if (last !== '') expect(() => JSON.parse(last)).toThrow(); // torn mid-write: the only line allowed to be bad
    expect(parsed.some((l) => l.type === 'run-end')).toBe(false);
    expect(parsed.some((l) => l.type === 'phase-start' && l.phase === 'soak-idle')).toBe(true);
    // Every tick from 0 to the last one journaled is there, for both nodes (no gap in this scenario).
    const ticks = (node: string) => parsed.filter((l) => l.type === 'sample' && l.node === node).map((l) => l.tick!);
    const a = ticks('spark-a');
    const b = ticks('spark-b');
    expect(a.length).toBeGreaterThan(30);
    expect(a).toEqual(a.map((_, i) => i));
    expect(b).toEqual(b.map((_, i) => i).slice(0, b.length));
    const lastTick = Math.max(a[a.length - 1]!, b[b.length - 1] ?? -1);

    const g = await runCli(['grade', join(run.journal, '..'), '--json']);
    expect(g.code).toBe(4);
    const graded = JSON.parse(g.out) as { outcome: string; reasons: { rule: string; message: string }[] };
    expect(graded.outcome).toBe('ABORTED');
    expect(graded.reasons).toHaveLength(1);
    expect(graded.reasons[0]!.rule).toBe('aborted');
    expect(graded.reasons[0]!.message).toContain(`journal ends without an end marker (controller stopped); last tick ${lastTick}`);
    const record = JSON.parse(readFileSync(join(run.journal, '..', 'record.json'), 'utf8')) as {
      outcome: string;
      analysis: { perNodePhase: { phase: string }[] } | null;
    };
    expect(record.outcome).toBe('ABORTED');
    expect(record.analysis?.perNodePhase.some((p) => p.phase === 'soak-idle')).toBe(true);
  });

  it('SIGINT to the spawned CLI mid-soak: ABORTED record written, exit 130', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cq-int-'));
    const run = await spawnUntilSoak(out);
    run.child.kill('SIGINT');
    expect(await run.exit).toBe(130);
    expect(run.stderr()).toContain('SIGINT: stopping the loads on every node');
    const dir = join(run.journal, '..');
    const record = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as { outcome: string; reasons: { rule: string; message: string }[] };
    expect(record.outcome).toBe('ABORTED');
    expect(record.reasons).toEqual([{ rule: 'aborted', message: 'run stopped: interrupted by SIGINT' }]);
    const lines = readFileSync(run.journal, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; why?: string });
    expect(lines.find((l) => l.type === 'aborted')?.why).toBe('interrupted by SIGINT');
    expect(lines[lines.length - 1]!.type).toBe('run-end');
  });

  it('SIGTERM mid-soak: ABORTED record, exit 143 (SIGINT keeps 130)', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cq-term-'));
    const run = await spawnUntilSoak(out);
    run.child.kill('SIGTERM');
    expect(await run.exit).toBe(143);
    const record = JSON.parse(readFileSync(join(run.journal, '..', 'record.json'), 'utf8')) as { outcome: string; reasons: unknown[] };
    expect(record.outcome).toBe('ABORTED');
    expect(record.reasons).toEqual([{ rule: 'aborted', message: 'run stopped: interrupted by SIGTERM' }]);
  });
});
