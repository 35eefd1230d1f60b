import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RULES_VERSION } from '../../src/rules/versions.js';
import { runCli } from '../helpers/cli.js';

// The full 75-minute default procedure on the simulated lab, in virtual time, for every scenario.
interface JsonResult {
  outcome: string;
  reasons: { rule: string; message: string; grade?: string; node?: string; lane?: number; phase?: string }[];
  headline: { phase: string; receivers: { node: string; statement: string; laneRatio: string; berUb95: number; errors: number }[] } | null;
  rulesVersion: number;
  runDir: string;
  certificate: string | null;
  cable: { vendor: string | null; pn: string | null; serial: string | null };
  decidedAtS: number | null;
  simulated: boolean;
  sampling: { ticks: number; intervalP50Ms: number | null; intervalP99Ms: number | null; skewP99Ms: number | null };
}

async function runSim(scenario: string, extra: string[] = []): Promise<{ code: number; result: JsonResult; err: string }> {
  const out = mkdtempSync(join(tmpdir(), `cq-${scenario}-`));
  const r = await runCli(['run', '--sim', scenario, '--seed', '7', '--json', '--out', out, ...extra]);
  expect(r.out.trim().split('\n'), r.err).toHaveLength(1);
  return { code: r.code, result: JSON.parse(r.out) as JsonResult, err: r.err };
}

// The journal's lines, for phase times and statuses.
function journalOf(runDir: string): Record<string, any>[] {
  return readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}
const phaseStart = (j: Record<string, any>[], phase: string) => j.find((l) => l.type === 'phase-start' && l.phase === phase)!.tS as number;
const phaseStatus = (j: Record<string, any>[]) => Object.fromEntries(j.filter((l) => l.type === 'phase-end').map((l) => [l.phase, l.status]));
// The failing clone's link drops 3.1 min (186 s) into the loaded soak (samples/scenarios/failing-clone.json: the scenario's lane curves).
const DROP_INTO_LOADED_S = 186;

describe('run --sim (default 75-minute protocol, virtual time)', { timeout: 120_000 }, () => {
  it('failing-clone: FAIL on one lane, decided before the simulated link drop', async () => {
    const { code, result } = await runSim('failing-clone');
    expect(result.outcome).toBe('FAIL');
    expect(code).toBe(1);
    expect(result.simulated).toBe(true);
    const lane = result.reasons.find((r) => r.rule === 'lane-ratio');
    expect(lane, JSON.stringify(result.reasons)).toBeDefined();
    expect(lane!.lane).toBeTypeOf('number');
    expect(result.reasons.some((r) => r.rule === 'link-down-events')).toBe(false);
    // idle soak ends at ~600 s after the benchmarks; the drop comes 3.1 min (186 s) into the loaded soak
    const journal = readFileSync(join(result.runDir, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const loadedStart = journal.find((l) => l.type === 'phase-start' && l.phase === 'soak-loaded').tS as number;
    expect(result.decidedAtS).not.toBeNull();
    expect(result.decidedAtS! - loadedStart).toBeGreaterThan(0);
    expect(result.decidedAtS! - loadedStart).toBeLessThan(DROP_INTO_LOADED_S);
    expect(result.cable.pn).toContain('ONT-DAC-QS56-0.5');
    expect(existsSync(join(result.runDir, 'record.json'))).toBe(true);
    // rules version 2 on: the FEC window of lane 2 at the receiver of the bad direction (spark-b), the runaway named,
    // the decision before the drop; spark-a, the clean direction, has no FAIL
    expect(result.rulesVersion).toBe(RULES_VERSION);
    const fw = result.reasons.find((r) => r.rule === 'fec-window' && r.grade === 'FAIL');
    expect(fw, JSON.stringify(result.reasons)).toMatchObject({ node: 'spark-b', lane: 2 });
    expect(fw!.message).toMatch(
      /^spark-b soak-loaded lane 2: window margin at most 0\.\d+ decades < 1 .*runaway: lane 2 grew \S+ decades .*the failing clone's signature/,
    );
    expect(result.reasons.filter((r) => r.grade === 'FAIL').every((r) => r.node === 'spark-b')).toBe(true);
    expect(phaseStatus(journal)['soak-loaded']).toBe('stopped-early');
  });

  it('rare-errors-qsfp56: a few hundred corrected bits an hour on one lane PASS (below the floor a ratio says nothing)', async () => {
    const { code, result } = await runSim('rare-errors-qsfp56');
    expect(result.outcome, JSON.stringify(result.reasons)).toBe('PASS');
    expect(code).toBe(0);
    expect(result.decidedAtS).toBeNull();
    expect(result.reasons.some((r) => r.rule === 'lane-ratio')).toBe(false);
    expect(result.headline!.phase).toBe('soak-loaded');
    for (const r of result.headline!.receivers) {
      expect(r.errors).toBeGreaterThan(100);
      expect(r.errors).toBeLessThan(600);
      expect(r.laneRatio).toMatch(/^at least \S+x \(lane 1, below the 1e-9 floor: not graded\)$/);
      expect(r.statement).toMatch(/FEC margin (8|9)\.\d decades/);
    }
  });

  it('steady-lane-qsfp56: one lane steady at ~5e-8 is MARGINAL, and the run goes to its end', async () => {
    const { code, result } = await runSim('steady-lane-qsfp56');
    expect(result.outcome, JSON.stringify(result.reasons)).toBe('MARGINAL');
    expect(code).toBe(0);
    expect(result.decidedAtS).toBeNull();
    const j = journalOf(result.runDir);
    expect(Object.values(phaseStatus(j)).every((s) => s === 'done')).toBe(true);
    expect(j.some((l) => l.type === 'decision')).toBe(false);
    const ratios = result.reasons.filter((r) => r.rule === 'lane-ratio');
    expect(ratios.map((r) => r.node).sort()).toEqual(['spark-a', 'spark-b']);
    for (const r of ratios) {
      expect(r).toMatchObject({ grade: 'MARGINAL', lane: 2 });
      expect(r.message).toMatch(/lane ratio at least \d+x .*steady: lane 2 grew 0\.0 decades/);
    }
    expect(result.reasons.every((r) => r.grade !== 'FAIL')).toBe(true);
  });

  it('uniform-heat-qsfp56: four lanes degrading together to ~1e-4 FAIL early on the FEC window, not at the end of the soak', async () => {
    const { code, result } = await runSim('uniform-heat-qsfp56');
    expect(result.outcome).toBe('FAIL');
    expect(code).toBe(1);
    const j = journalOf(result.runDir);
    const loaded = phaseStart(j, 'soak-loaded');
    expect(result.decidedAtS! - loaded).toBeGreaterThan(60);
    expect(result.decidedAtS! - loaded).toBeLessThan(600); // the soak is 3600 s
    const fails = result.reasons.filter((r) => r.grade === 'FAIL');
    expect(fails.length).toBeGreaterThan(0);
    expect(new Set(fails.map((r) => r.rule))).toEqual(new Set(['fec-window']));
    expect(result.reasons.some((r) => r.rule === 'lane-ratio')).toBe(false);
    expect(j.find((l) => l.type === 'decision')!.reason.rule).toBe('fec-window');
  });

  it('one-direction-runaway: a cable bad in one direction FAILs, naming that receiver only, before its link drops', async () => {
    const { code, result } = await runSim('one-direction-runaway');
    expect(result.outcome).toBe('FAIL');
    expect(code).toBe(1);
    const graded = result.reasons.filter((r) => r.grade === 'FAIL' || r.grade === 'MARGINAL');
    expect(new Set(graded.map((r) => r.node))).toEqual(new Set(['spark-a']));
    expect(graded.find((r) => r.grade === 'FAIL')).toMatchObject({ node: 'spark-a', lane: 2 });
    expect(graded.some((r) => /runaway: lane 2 .*the failing clone's signature/.test(r.message))).toBe(true);
    const loaded = phaseStart(journalOf(result.runDir), 'soak-loaded');
    expect(result.decidedAtS! - loaded).toBeLessThan(DROP_INTO_LOADED_S);
  });

  it.each(['good-qsfp56', 'good-qsfp112'])('%s: PASS, exit 0', async (scenario) => {
    const { code, result } = await runSim(scenario);
    expect(result.outcome, JSON.stringify(result.reasons)).toBe('PASS');
    expect(code).toBe(0);
    expect(result.sampling.ticks).toBeGreaterThan(4000);
    expect(result.decidedAtS).toBeNull();
  });

  it('marginal-qsfp112: MARGINAL on FEC margin, exit 0', async () => {
    const { code, result } = await runSim('marginal-qsfp112');
    expect(result.outcome, JSON.stringify(result.reasons)).toBe('MARGINAL');
    expect(code).toBe(0);
    expect(result.reasons.some((r) => r.rule === 'fec-margin')).toBe(true);
  });

  it.each([
    ['crc-errors', 'crc-errors'],
    ['link-flap', 'link-down-events'],
  ])('%s: FAIL with rule %s', async (scenario, rule) => {
    const { code, result } = await runSim(scenario);
    expect(result.outcome).toBe('FAIL');
    expect(code).toBe(1);
    expect(result.reasons.map((r) => r.rule)).toContain(rule);
  });

  it.each([
    ['throttled-nic', 'loopback-floor', /reboot/],
    ['single-rail', 'nccl-rails', /NCCL_IB_HCA/],
    ['gpu-not-loaded', 'gpu-util-min', /GPU/],
    ['eeprom-mismatch', 'identity-mismatch', /serial/],
  ])('%s: ERROR (%s), never a cable verdict, exit 3', async (scenario, rule, text) => {
    const { code, result } = await runSim(scenario);
    expect(result.outcome).toBe('ERROR');
    expect(code).toBe(3);
    expect(result.reasons.map((r) => r.rule)).toEqual([rule]);
    expect(result.reasons[0]!.message).toMatch(text);
    expect(result.certificate).toBeNull();
  });
});
