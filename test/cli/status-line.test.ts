// The run's live status line fits the terminal (a wrapped line leaves stale rows at each `\r` redraw): detail is
// dropped from the right, and it says the whole run's time left as well as the phase's.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatStatus } from '../../src/cli/status.js';
import type { LiveStatus } from '../../src/run/context.js';
import { runCli } from '../helpers/cli.js';

// Mid loaded soak of the default protocol on two nodes, lane 2 of spark-b running away (figures made up here).
const STATUS: LiveStatus = {
  phase: 'soak-loaded',
  elapsedS: 1484,
  phaseRemainingS: 3119,
  runRemainingS: 3119,
  laneRates: { 'spark-a': [404, 389, 391, 424], 'spark-b': [407, 356, 123000, 455] },
  nicTempC: { 'spark-a': 69.2, 'spark-b': 68.7 },
  gpuTempC: { 'spark-a': 69, 'spark-b': 70 },
  gpuUtilPct: { 'spark-a': 97, 'spark-b': 98.4 },
  throughputGbps: 185.1,
};

describe('formatStatus', () => {
  it('at 200 columns: everything, the whole run and the phase time left, both nodes, throughput', () => {
    const line = formatStatus(STATUS, 200);
    expect(line).toBe(
      '[24:44, 51:59 left] soak-loaded (51:59 left) | spark-a lanes 404/389/391/424/s NIC 69C GPU 69C 97% | spark-b lanes 407/356/1.2e+5/455/s NIC 69C GPU 70C 98% | 185.1 Gb/s',
    );
    expect(line.length).toBeLessThan(200);
  });

  it('at 80 columns: under 80 characters; throughput, temperatures and the other lanes dropped; the worst lane kept', () => {
    const line = formatStatus(STATUS, 80);
    expect(line.length).toBeLessThanOrEqual(79);
    expect(line).toBe('[24:44, 51:59 left] soak-loaded (51:59 left) | spark-b lane 2 1.2e+5/s');
    // In between, detail goes from the right: throughput, then GPU and NIC, then all lanes but the worst.
    expect(formatStatus(STATUS, 160)).toMatch(/ \| spark-b lanes 407\/356\/1\.2e\+5\/455\/s NIC 69C GPU 70C 98%$/);
    expect(formatStatus(STATUS, 120)).toMatch(/ \| spark-a lanes 404\/389\/391\/424\/s \| spark-b lanes 407\/356\/1\.2e\+5\/455\/s$/);
    expect(formatStatus(STATUS, 100)).toBe('[24:44, 51:59 left] soak-loaded (51:59 left) | spark-b lane 2 1.2e+5/s | spark-a lane 3 424/s');
  });

  it('the run time left is the protocol left, not the phase left: earlier phases count the later ones', () => {
    const early = formatStatus({ ...STATUS, phase: 'soak-idle', elapsedS: 300, phaseRemainingS: 300, runRemainingS: 3960 }, 200);
    expect(early).toMatch(/^\[5:00, 1:06:00 left\] soak-idle \(5:00 left\) \| /);
    expect(formatStatus({ ...STATUS, phaseRemainingS: null, runRemainingS: null }, 200)).toMatch(/^\[24:44\] soak-loaded \| spark-a /);
  });

  it('a very narrow terminal: the head alone, cut with an ellipsis; node names from the lab are escaped and counted as shown', () => {
    const narrow = formatStatus(STATUS, 24);
    expect(narrow).toBe('[24:44, 51:59 left] so…');
    expect([...narrow].length).toBe(23);
    const hostile = formatStatus({ ...STATUS, laneRates: { 'spark-\u001b[2Ja': [1, 2, 3, 4] } }, 200);
    expect(hostile).not.toMatch(/\u001b/);
    expect(hostile).toContain('spark-\\x1b[2Ja lanes 1.0/2.0/3.0/4.0/s');
    for (const w of [40, 60, 80, 100, 120]) expect([...formatStatus({ ...STATUS, laneRates: { ['x'.repeat(90)]: [1, 2, 3, 4] } }, w)].length).toBeLessThan(w);
  });
});

describe('the live line of a run on an 80-column terminal', () => {
  it('every redraw fits in 79 characters and says the run time left', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cq-status-'));
    // At x30 on a protocol of about a simulated minute (test/fixtures/protocols/ssh-smoke.json): two seconds of wall time.
    const smoke = join(process.cwd(), 'test', 'fixtures', 'protocols', 'ssh-smoke.json');
    const r = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', smoke, '--speed', '30', '--out', out], { tty: { columns: 80 } });
    expect(r.code).toBe(0);
    const redraws = r.err
      .split('\r\u001b[2K')
      .map((l) => l.replace(/\n[\s\S]*$/, ''))
      // The run ends saying its set-up check is UNSIGNED (no lab key here): a line of its own, not a redraw.
      .filter((l) => l && !l.startsWith('cablequal: UNSIGNED: '));
    // Redrawn once a second of wall time (src/run/qualify.ts).
    expect(redraws.length).toBeGreaterThanOrEqual(1);
    for (const l of redraws) {
      expect(l.length, l).toBeLessThanOrEqual(79);
      expect(l).toMatch(/^\[\d+:\d\d, \d+:\d\d left\] [a-z-]+/);
    }
  });
});
