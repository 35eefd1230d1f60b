// A certain FAIL stops every phase at once (#33 item 3): whatever phase runs when the sampling loop decides (the
// loopback guard, ib_write_bw in either direction, NCCL, a soak), its loads stop within one sampling interval, no load
// process starts after the decision, the run samples the protocol's 10 s tail and ends, and `cablequal grade` of the
// journal agrees with the live verdict. Simulated lab (quick protocol, 1 s sampling), one uncorrectable codeword at
// spark-b's receiver injected inside the phase (the `uncorrectable@<s>s` fault): a post-FEC error, certain in any phase.
import { describe, expect, it } from 'vitest';
import { PHASE_KINDS } from '../../src/protocol/types.js';
import type { JournalLine } from '../../src/run/journal.js';
import { runCli } from '../helpers/cli.js';
import { labRun } from '../faults/lab-run.js';

const INTERVAL_S = 1; // protocols/quick.json samplingIntervalS
const TAIL_S = 10; // its earlyStop.keepSamplingS

// Lab seconds inside each phase of the quick protocol on the simulated lab (loopback 0-21 s, ib-write-bw 21-52 s with
// the reverse direction from 36.5 s, nccl 52-58.7 s, soak-idle 58.7-118.7 s, soak-loaded from 118.7 s).
const CASES = [
  { kind: 'loopback', phase: 'loopback', atS: 5 },
  { kind: 'ib_write_bw', phase: 'ib-write-bw', atS: 27 },
  { kind: 'ib_write_bw', phase: 'ib-write-bw', atS: 40 }, // the reverse direction's turn
  { kind: 'nccl', phase: 'nccl', atS: 54 },
  { kind: 'soak', phase: 'soak-idle', atS: 80 },
  { kind: 'soak', phase: 'soak-loaded', atS: 150 },
] as const;

const of = (journal: JournalLine[], type: string) => journal.filter((l) => l.type === type);

describe('a FAIL decided in any phase stops its loads at once', { timeout: 60_000 }, () => {
  it('every phase kind is covered: the sampled ones below; preflight and identity carry no sample, so a codeword then is decided in the first sampled phase', async () => {
    const sampled = new Set(CASES.map((c) => c.kind));
    expect(PHASE_KINDS.filter((k) => !sampled.has(k as never))).toEqual(['preflight', 'identity']);
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['uncorrectable@0s'] });
    const identityEnd = r.journal.findIndex((l) => l.type === 'phase-end' && l['phase'] === 'identity');
    expect(r.journal[identityEnd]!['status']).toBe('done');
    // The watch starts with the first sample, after identity (preflight and identity take no simulated time).
    expect(r.journal.slice(0, identityEnd).some((l) => l.type === 'sample')).toBe(false);
    const d = of(r.journal, 'decision');
    expect(d.map((l) => (l['reason'] as { phase: string }).phase)).toEqual(['loopback']);
    expect(r.journal.slice(r.journal.indexOf(d[0]!)).filter((l) => l.type === 'process-start')).toEqual([]);
    expect(r.record.outcome).toBe('FAIL');
  });

  it.each(CASES)('$kind ($phase, codeword at $atS s)', async ({ phase, atS }) => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: [`uncorrectable@${atS}s`], lookAtS: [atS + 2 * INTERVAL_S + 1] });
    const j = r.journal;
    const decisions = of(j, 'decision');
    expect(decisions).toHaveLength(1);
    const d = decisions[0]!;
    const reason = d['reason'] as { rule: string; node: string; phase: string };
    expect(reason).toMatchObject({ rule: 'post-fec-errors', node: 'spark-b', phase });
    const dS = d.tS as number;
    // Decided at the first sample after the codeword (FEC counters are read every second).
    expect(dS).toBeGreaterThan(atS);
    expect(dS).toBeLessThanOrEqual(atS + 2 * INTERVAL_S);

    // No load starts after the decision, in file order or in time.
    const at = j.indexOf(d);
    expect(j.slice(at).filter((l) => l.type === 'process-start')).toEqual([]);
    expect(of(j, 'process-start').every((l) => (l.tS as number) <= dS)).toBe(true);
    // The phase under way ends within one interval of the decision, the run after the tail.
    const end = j.find((l) => l.type === 'phase-end' && l['phase'] === phase)!;
    expect(end['status']).toBe('stopped-early');
    expect((end.tS as number) - dS).toBeLessThanOrEqual(INTERVAL_S);
    const runEnd = of(j, 'run-end')[0]!;
    expect((runEnd.tS as number) - dS).toBeGreaterThanOrEqual(TAIL_S);
    expect((runEnd.tS as number) - dS).toBeLessThanOrEqual(INTERVAL_S + TAIL_S + INTERVAL_S);
    // The phases after it are skipped, never started.
    const later = j.slice(j.indexOf(end) + 1).filter((l) => l.type === 'phase-end');
    expect(later.every((l) => l['status'] === 'skipped')).toBe(true);
    // On the nodes: nothing of the run's loads runs once the phase stopped, nor at the end.
    for (const [, running] of r.runningAt) for (const n of r.lab.nodes) expect(running[n]).toEqual([]);
    for (const n of r.lab.nodes) expect(r.lab.processes(n)).toEqual([]);

    // The live verdict, and a re-grade of the journal, say the same.
    expect(r.record.outcome).toBe('FAIL');
    expect(r.record.reasons[0]).toMatchObject({ rule: 'post-fec-errors', node: 'spark-b' });
    const g = await runCli(['grade', r.runDir, '--json']);
    const graded = JSON.parse(g.out) as { outcome: string; reasons: { rule: string; node?: string; message: string }[] };
    expect(graded.outcome).toBe('FAIL');
    expect(graded.reasons.map((x) => [x.rule, x.node, x.message])).toEqual(r.record.reasons.map((x) => [x.rule, x.node, x.message]));
  });
});
