// `run --sim <scenario> --speed N`: the simulated lab in process at N times real time (src/sim/scaled-clock.ts), so a
// person can watch the run's live line, the dashboard's live page and --metrics-port; without --speed, --sim runs in
// virtual time. A short protocol (test/fixtures/protocols/ssh-smoke.json: about a simulated minute) at x20.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const SMOKE = join(process.cwd(), 'test', 'fixtures', 'protocols', 'ssh-smoke.json');

// The journal's lines of a run directory.
const journalOf = (runDir: string) =>
  readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; tS?: number; startedAt?: string });

describe('run --sim --speed N', { timeout: 60_000 }, () => {
  it('runs the lab at N times real time: the simulated minute takes at least a twentieth of it, stamped with the wall clock', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cq-simspeed-'));
    const wallStart = Date.now();
    const r = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', SMOKE, '--speed', '20', '--out', out, '--json']);
    const realS = (Date.now() - wallStart) / 1000;
    expect(r.code, r.err).toBe(0);
    const result = JSON.parse(r.out) as { outcome: string; simulated: boolean; runDir: string };
    expect(result).toMatchObject({ outcome: 'PASS', simulated: true });
    const journal = journalOf(result.runDir);
    const simulatedS = journal.at(-1)!.tS!;
    expect(simulatedS).toBeGreaterThan(45); // the smoke protocol's phases add up to about a minute
    // On the lab's scaled clock the run cannot be faster than 1/20 of its simulated time (in virtual time it would
    // take a fraction of that); load only makes it slower.
    expect(realS).toBeGreaterThanOrEqual(simulatedS / 20 - 0.2);
    // Stamped with the wall clock when it started.
    const startedAt = Date.parse(journal[0]!.startedAt!);
    expect(startedAt).toBeGreaterThanOrEqual(Math.floor(wallStart / 1000) * 1000);
    expect(startedAt).toBeLessThanOrEqual(Date.now());
    // Progress was told as it went (with --json, a line per phase on stderr).
    expect(r.err).toMatch(/^\[\d+:\d\d, \d+:\d\d left\] [a-z-]+ /m);
  });

  it('above x100 it is refused before anything runs: the controller would fall behind its own sampling', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cq-simspeed-'));
    const r = await runCli(['run', '--sim', 'good-qsfp56', '--speed', '200', '--out', join(out, 'reports')]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      "cablequal: --speed 200: with --sim at most 100 (the controller's own work would take simulated minutes and miss samples); leave --speed out to run in virtual time\n",
    );
  });
});
