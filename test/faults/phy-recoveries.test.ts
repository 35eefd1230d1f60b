// Issue #33 item 5: successful PHY recoveries without a link drop (total_success_recovery_phy), read where the kernel
// has the counter and graded by rules version 5 (docs/protocol.md "PHY recoveries"). Quick protocol, virtual time:
// the loaded soak runs from ~104 s to ~284 s. Everything the lab prints is generated.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/domain/record.js';
import { runCli } from '../helpers/cli.js';
import { labRun } from './lab-run.js';

const NOT_EXPOSED = /^total_success_recovery_phy: not exposed on /;

async function regrade(runDir: string, rules: number): Promise<RunRecord> {
  const dir = mkdtempSync(join(tmpdir(), 'cq-recov-'));
  writeFileSync(join(dir, 'journal.jsonl'), readFileSync(join(runDir, 'journal.jsonl'), 'utf8'));
  const r = await runCli(['grade', dir, '--json', '--rules', String(rules)]);
  expect(r.err).toBe('');
  return JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as RunRecord;
}

describe('PHY recoveries in a simulated run', { timeout: 60_000 }, () => {
  it('one recovery at spark-b (recovery-qsfp56): MARGINAL naming the receiver and the phase; the journal and the record carry it', async () => {
    const r = await labRun({ scenario: 'recovery-qsfp56' });
    expect(r.record.outcome).toBe('MARGINAL');
    expect(r.record.reasons).toEqual([
      expect.objectContaining({
        rule: 'phy-recoveries',
        grade: 'MARGINAL',
        node: 'spark-b',
        value: 1,
        message: 'spark-b: PHY recoveries 1 recoveries >= 1 (marginal at 1 or more, fail at 2 or more) (1 in soak-loaded)',
      }),
    ]);
    const per = r.record.analysis!.perNodePhase;
    expect(per.filter((p) => p.recoveries! > 0).map((p) => [p.node, p.phase, p.recoveries])).toEqual([['spark-b', 'soak-loaded', 1]]);
    expect(per.every((p) => p.recoveries !== undefined)).toBe(true);
    expect(r.record.rules?.notes ?? []).not.toContainEqual(expect.stringMatching(NOT_EXPOSED));
    // The counter travels in the samples under its ethtool name.
    const samples = r.journal.filter((l) => l.type === 'sample');
    expect(JSON.stringify(samples.at(-1))).toContain('"total_success_recovery_phy"');
    // Rules version 4 did not read it: the same journal is PASS there.
    expect((await regrade(r.runDir, 4)).outcome).toBe('PASS');
    expect((await regrade(r.runDir, 5)).reasons.map((x) => x.rule)).toEqual(['phy-recoveries']);
  });

  it('a second recovery (the phy-recovery fault) FAILs; the link never went down', async () => {
    const r = await labRun({ scenario: 'recovery-qsfp56', faults: ['phy-recovery@200s:spark-b'] });
    expect(r.record.outcome).toBe('FAIL');
    expect(r.record.reasons[0]).toMatchObject({ rule: 'phy-recoveries', grade: 'FAIL', node: 'spark-b', value: 2 });
    expect(r.record.analysis!.perNodePhase.reduce((a, p) => a + p.linkDownEvents, 0)).toBe(0);
  });

  it('a kernel without the counter (good-qsfp56): PASS, said once in the record, never an error', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['phy-recovery@200s:spark-b'] });
    expect(r.record.outcome).toBe('PASS');
    const notes = (r.record.rules?.notes ?? []).filter((n) => NOT_EXPOSED.test(n));
    expect(notes).toEqual([
      'total_success_recovery_phy: not exposed on any receiver (spark-a, spark-b) (mlx5 before the 2025-03 patch, or firmware without the PPCNT recovery group): recoveries without a link drop were not counted there',
    ]);
    expect(r.record.analysis!.perNodePhase.some((p) => p.recoveries !== undefined)).toBe(false);
  });
});
