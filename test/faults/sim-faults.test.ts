import { describe, expect, it } from 'vitest';
import { labRun, numbersIn } from './lab-run.js';

// Fault injection on the simulated lab, quick protocol, virtual time. The quick protocol's loaded soak runs from
// ~94 s to ~274 s of the run, so faults at 150 s land in it with both link loads and the GPU loads running.
describe('fault injection (simulated lab, quick protocol)', { timeout: 60_000 }, () => {
  it('ssh drop of 20 s mid-soak: the gap is recorded on both nodes, loads survive, the run ends PASS', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['ssh-drop@150s'] });
    expect(r.record.outcome, JSON.stringify(r.record.reasons)).toBe('PASS');
    expect(r.record.sampling.gaps).toEqual([
      { node: 'spark-a', fromS: 150, toS: 170, reason: 'no sample (transport)' },
      { node: 'spark-b', fromS: 150, toS: 170, reason: 'no sample (transport)' },
    ]);
    const gapStarts = r.journal.filter((l) => l.type === 'gap-start');
    expect(gapStarts.map((l) => [l.node, l.tS, l.phase])).toEqual([
      ['spark-a', 150, 'soak-loaded'],
      ['spark-b', 150, 'soak-loaded'],
    ]);
    expect(String(gapStarts[0]!.error)).toContain('ECONNRESET');
    expect(r.journal.filter((l) => l.type === 'gap-end').map((l) => l.tS)).toEqual([170, 170]);
    // No sample journaled inside the gap, sampling resumes at its end.
    const ticksA = r.journal.filter((l) => l.type === 'sample' && l.node === 'spark-a').map((l) => l.tS!);
    expect(ticksA.filter((t) => t > 150 && t < 170)).toEqual([]);
    expect(ticksA).toContain(170);
    // The drop did not kill the loads: one start per load process in the loaded soak, none restarted.
    const loadedStarts = r.journal.filter((l) => l.type === 'process-start' && String(l.name).startsWith('soak-loaded'));
    expect(loadedStarts.map((l) => l.name).sort()).toEqual([
      'soak-loaded-client-0',
      'soak-loaded-client-0-rev',
      'soak-loaded-client-1',
      'soak-loaded-client-1-rev',
      'soak-loaded-gpu',
      'soak-loaded-gpu',
      'soak-loaded-server-0',
      'soak-loaded-server-0-rev',
      'soak-loaded-server-1',
      'soak-loaded-server-1-rev',
    ]);
    expect(r.journal.find((l) => l.type === 'phase-end' && l.phase === 'soak-loaded')?.status).toBe('done');
    for (const n of r.lab.nodes) expect(r.lab.processes(n)).toEqual([]);
  });

  it('ssh drop longer than the 60 s tolerance: ERROR node-lost, never a cable verdict, loads stopped', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['ssh-drop@150s+90s'] });
    expect(r.record.outcome).toBe('ERROR');
    expect(r.record.reasons.map((x) => [x.rule, x.node])).toEqual([['node-lost', 'spark-a']]);
    expect(r.record.reasons[0]!.message).toMatch(/no sample for 61 s .*ECONNRESET.*more than the 60 s tolerated/);
    const err = r.journal.find((l) => l.type === 'setup-error');
    expect(err?.phase).toBe('soak-loaded');
    expect(err?.tS).toBeGreaterThan(211);
    expect(err?.tS).toBeLessThan(213);
    for (const n of r.lab.nodes) expect(r.lab.processes(n)).toEqual([]);
  });

  it('node reboot (back after 30 s): counter reset detected, ERROR node-reset, no negative figure in the analysis', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['node-reboot@150s+30s'] });
    expect(r.record.outcome).toBe('ERROR');
    expect(r.record.reasons.map((x) => [x.rule, x.node])).toEqual([['node-reset', 'spark-b']]);
    // Back from the reboot the port counts only the kernel-stack frames of its first seconds (ARP and the like):
    // far below the bytes of the load before it, and far below one second of RDMA load.
    const [, before, after] = /rx_bytes_phy (\d+) -> (\d+)/.exec(r.record.reasons[0]!.message)!.map(Number) as [number, number, number];
    expect(after).toBeLessThan(1e6);
    expect(before).toBeGreaterThan(1e9);
    expect(r.record.sampling.gaps).toEqual([{ node: 'spark-b', fromS: 150, toS: 180, reason: 'no sample (transport)' }]);
    expect(r.journal.filter((l) => l.type === 'counter-reset').map((l) => [l.node, l.tS])).toEqual([['spark-b', 180]]);
    // The peer's reboot dropped the link on spark-a too: that is not the cable, so no FAIL decision was taken.
    expect(r.journal.filter((l) => l.type === 'decision')).toEqual([]);
    expect(r.record.analysis).not.toBeNull();
    const loaded = r.record.analysis!.perNodePhase.filter((p) => p.phase === 'soak-loaded');
    expect(loaded.map((p) => p.node).sort()).toEqual(['spark-a', 'spark-b']);
    const negatives = numbersIn(r.record.analysis!.perNodePhase).filter((x) => x.value < 0);
    expect(negatives).toEqual([]);
    for (const n of r.lab.nodes) expect(r.lab.processes(n)).toEqual([]);
  });

  it('node reboot of 90 s (default): ERROR node-lost before it returns, not a link-down FAIL', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['node-reboot@150s'] });
    expect(r.record.outcome).toBe('ERROR');
    expect(r.record.reasons.map((x) => [x.rule, x.node])).toEqual([['node-lost', 'spark-b']]);
    expect(r.record.reasons[0]!.message).toContain('ECONNREFUSED (simulated node rebooting)');
    expect(r.journal.filter((l) => l.type === 'decision')).toEqual([]);
    expect(numbersIn(r.record.analysis!.perNodePhase).filter((x) => x.value < 0)).toEqual([]);
  });

  it('garbage output for one tick: recorded with its text, the tick skipped, the run ends PASS', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['garbage-output@60s'] });
    expect(r.record.outcome, JSON.stringify(r.record.reasons)).toBe('PASS');
    const skipped = r.journal.filter((l) => l.type === 'sample-skipped');
    expect(skipped.map((l) => [l.node, l.tS, l.phase])).toEqual([['spark-a', 60, 'soak-idle']]);
    expect(skipped[0]!.missing).toContain('enp1s0f1np1:rx_err_lane_0_phy');
    const errors = (skipped[0]!.sample as { errors: string[] }).errors;
    expect(errors).toEqual(['stats:enp1s0f1np1: ethtool-stats: line 38: counter rx_err_lane_0_phy: "-1" is not an unsigned 64-bit integer']);
    const raw = r.journal.find((l) => l.type === 'raw' && l.what === 'tick-with-errors');
    expect(raw?.errors).toEqual(errors);
    expect((raw?.raw as Record<string, string>)['stats:enp1s0f1np1']).toContain('rx_err_lane_0_phy: -1');
    // The skipped tick is not a sample: spark-a has none at 60 s, spark-b has its own.
    const at60 = r.journal.filter((l) => l.type === 'sample' && l.tS === 60).map((l) => l.node);
    expect(at60).toEqual(['spark-b']);
    expect(r.record.sampling.gaps).toEqual([]);
  });
});
