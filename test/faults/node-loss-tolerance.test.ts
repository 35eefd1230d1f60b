import { describe, expect, it } from 'vitest';
import { labRun } from './lab-run.js';

// The node-loss tolerance is protocol data (maxSampleGapS): the same ssh drop on the simulated lab is a recorded
// gap or ERROR node-lost depending only on the protocol. Quick protocol, virtual time; the loaded soak runs from
// ~94 s to ~274 s, so drops at 150 s land in it with all loads running.
describe('node-loss tolerance from the protocol (simulated lab, quick protocol)', { timeout: 60_000 }, () => {
  it('a 20 s ssh drop under maxSampleGapS 10: ERROR node-lost once 10 s are exceeded, loads stopped', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['ssh-drop@150s+20s'], editProtocol: (p) => (p['maxSampleGapS'] = 10) });
    expect(r.record.outcome).toBe('ERROR');
    expect(r.record.reasons.map((x) => [x.rule, x.node])).toEqual([['node-lost', 'spark-a']]);
    expect(r.record.reasons[0]!.message).toMatch(/no sample for 11 s .*ECONNRESET.*more than the 10 s tolerated/);
    const err = r.journal.find((l) => l.type === 'setup-error');
    expect(err?.phase).toBe('soak-loaded');
    // Decided inside the drop (150..170 s), not after the node came back.
    expect(err?.tS).toBeGreaterThan(160);
    expect(err?.tS).toBeLessThan(163);
    // The gaps were still open when sampling stopped: the record has them, ending there.
    expect(r.record.sampling.gaps).toEqual(
      ['spark-a', 'spark-b'].map((node) => ({ node, fromS: 150, toS: 162, reason: 'no sample (transport) until sampling stopped' })),
    );
    for (const n of r.lab.nodes) expect(r.lab.processes(n)).toEqual([]);
  });

  it('the same 20 s drop under the default (quick.json names no tolerance, so 60 s): only a recorded gap, PASS', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['ssh-drop@150s+20s'] });
    expect(r.record.outcome, JSON.stringify(r.record.reasons)).toBe('PASS');
    expect(r.journal.filter((l) => l.type === 'setup-error')).toEqual([]);
    expect(r.record.sampling.gaps.map((g) => [g.node, g.fromS, g.toS])).toEqual([
      ['spark-a', 150, 170],
      ['spark-b', 150, 170],
    ]);
  });

  it('a 90 s drop (ERROR under the default) under maxSampleGapS 120: a recorded gap, the run goes on to PASS', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['ssh-drop@150s+90s'], editProtocol: (p) => (p['maxSampleGapS'] = 120) });
    expect(r.record.outcome, JSON.stringify(r.record.reasons)).toBe('PASS');
    expect(r.record.sampling.gaps.map((g) => [g.node, g.fromS, g.toS])).toEqual([
      ['spark-a', 150, 240],
      ['spark-b', 150, 240],
    ]);
    expect(r.journal.find((l) => l.type === 'phase-end' && l.phase === 'soak-loaded')?.status).toBe('done');
  });
});
