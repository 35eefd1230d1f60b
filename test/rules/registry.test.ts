import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnalysisRecord, BenchmarkRecord, NodePhaseStats } from '../../src/domain/record.js';
import { UsageError } from '../../src/domain/errors.js';
import { gradeRun } from '../../src/grading/grade-run.js';
import { validateProtocol } from '../../src/protocol/validate.js';
import { limitsSchema, verdictTable } from '../../src/rules/docs.js';
import { checkLimit } from '../../src/rules/in-range.js';
import { LIMIT_KEYS, RULE_DEFINITIONS, defaultLimit, type RuleDeclaration } from '../../src/rules/definitions.js';
import { RULES, RULES_VERSION, RULES_VERSIONS, ruleOf, rulesOf, rulesVersionOf } from '../../src/rules/versions.js';

const PROTOCOL = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'protocols', 'spark-burnin.json'), 'utf8'));
const NO_BENCH: BenchmarkRecord = { loopback: [], ibWriteBw: null, nccl: null };

// GENERATED stats of one receiver over the loaded soak: clean but for what a test sets.
function stats(over: Partial<NodePhaseStats>): NodePhaseStats {
  const laneStats = [0, 1, 2, 3].map((lane) => ({
    node: 'spark-b',
    phase: 'soak-loaded',
    lane,
    errors: 0,
    seconds: 3600,
    ratePerS: 0,
    ber: 0,
    berUb95: 2.9957 / (3600 * 53.125e9),
    berLb95: 0,
  }));
  return {
    node: 'spark-b',
    phase: 'soak-loaded',
    seconds: 3600,
    lanes: 4,
    laneStats,
    correctedBits: 0,
    preFecBer: 0,
    preFecBerUb95: 2.9957 / (3600 * 212.5e9),
    correctedBitsBerUb95: null,
    postFecErrors: 0,
    crcErrors: 0,
    symbolErrors: 0,
    linkDownEvents: 0,
    counterResets: 0,
    worstLane: null,
    worstLaneRatio: 0,
    ratioAgainstZero: false,
    worstLaneBerLb95: 0,
    nicTempMaxC: 82,
    nicTempMeanC: 81,
    gpuUtilMeanPct: 97,
    gpuTempMaxC: 70,
    ...over,
  };
}
const analysisOf = (s: NodePhaseStats[]): AnalysisRecord => ({
  perNodePhase: s,
  fecMarginDecades: null,
  maxLaneRatio: null,
  loadedVsIdleRatio: null,
  logRateVsTempSlope: null,
  gradedPhases: ['soak-idle', 'soak-loaded'],
  windows: [],
  laneTemp: [],
});

describe('the rule registry', () => {
  it('declares each rule once: unique ids, a measure for every cable rule and none for setup rules', () => {
    for (const v of RULES_VERSIONS) {
      const rules = rulesOf(v.version);
      expect(new Set(rules.map((r) => r.id)).size).toBe(rules.length);
      for (const r of rules) expect(typeof r.measure === 'function', `${v.version} ${r.id}`).toBe(r.kind === 'cable');
    }
    expect(new Set(RULE_DEFINITIONS.map((r) => r.id)).size).toBe(RULE_DEFINITIONS.length);
  });

  it('version 1 and version 2 grade with the rules they shipped with, each with its own way of measuring', () => {
    expect(Object.fromEntries(rulesOf(1).map((r) => [r.id, r.variant]))).toEqual({
      'crc-errors': 'count',
      'post-fec-errors': 'count',
      'link-down-events': 'count',
      'fec-margin': 'worst-upper-bound',
      'lane-ratio': 'rate-ratio',
      'ib-write-bw-sum': 'sum-of-rails',
      'loopback-floor': 'per-rail',
      'gpu-util-min': 'mean',
    });
    expect(rulesOf(2).map((r) => r.id)).toEqual([
      'crc-errors',
      'post-fec-errors',
      'link-down-events',
      'fec-margin',
      'fec-window',
      'lane-ratio',
      'ib-write-bw-sum',
      'loopback-floor',
      'gpu-util-min',
    ]);
  });

  it('every default limit is one the protocol loader accepts, marginal on the good side, settings in range', () => {
    for (const r of RULES) {
      const d = defaultLimit(r);
      if (d.marginal !== undefined) expect(r.direction === 'max' ? d.marginal < d.fail : d.marginal > d.fail, r.id).toBe(true);
      for (const [k, p] of Object.entries(r.params)) expect(p.minExclusive ? p.default > p.min : p.default >= p.min, `${r.id}.${k}`).toBe(true);
      for (const k of Object.keys(r.params)) expect(LIMIT_KEYS.required as readonly string[]).not.toContain(k);
    }
  });

  it('labels and advice are the declarations`: in-range prints the label, grading gives the advice', () => {
    expect(checkLimit(defaultLimit(ruleOf('fec-window')!), 0.5).text).toBe(
      'window margin 0.5 decades < 1 (marginal below 2, fail below 1; 60-s windows held 10 s)',
    );
    const v = gradeRun(analysisOf([stats({ crcErrors: 2 })]), NO_BENCH, { limits: RULES.map(defaultLimit), phases: [] });
    expect(v.reasons[0]).toMatchObject({ rule: 'crc-errors', advice: ruleOf('crc-errors')!.advice });
  });
});

// Worked example: a rule that FAILs a cable on rx_symbol_err_phy (packets dropped for physical coding errors). Adding
// it to cablequal is this declaration in src/rules/definitions.ts (RULES) plus this test; everything below follows from it.
describe('adding a rule: its declaration plus its test (worked example: symbol-errors)', () => {
  const symbolErrors: RuleDeclaration = {
    id: 'symbol-errors',
    kind: 'cable',
    since: RULES_VERSION + 1,
    variant: 'count',
    unit: 'errors',
    direction: 'max',
    label: 'symbol errors',
    fail: 1,
    range: { min: 1, max: 1_000_000, integer: true, why: 'a count: FAIL at 0 would fail every cable' },
    params: {},
    measured: 'rx_symbol_err_phy counted on each receiver in every phase',
    earlyStop: 'no',
    advice: 'packets were dropped for physical coding errors: replace the cable',
    measure: (m) => m.analysis.perNodePhase.map((s) => ({ value: s.symbolErrors, ...m.check(s.symbolErrors), node: s.node, phase: s.phase })),
  };
  const rules = [...RULES, symbolErrors];
  const TODAY = rulesVersionOf(RULES_VERSION)!;

  it('a protocol written before it loads with its default, and says so', () => {
    const p = validateProtocol(PROTOCOL, 'spark-burnin.json', { rules });
    expect(p.limits.find((l) => l.rule === 'symbol-errors')).toEqual({ rule: 'symbol-errors', direction: 'max', fail: 1, unit: 'errors' });
    expect(p.notes).toEqual([`limits: no limit for symbol-errors (added in rules version ${RULES_VERSION + 1}): its default applies`]);
  });

  it('a protocol that sets it is checked against the declaration', () => {
    const bad = { ...PROTOCOL, limits: [...PROTOCOL.limits, { rule: 'symbol-errors', direction: 'min', fail: 1 }] };
    expect(() => validateProtocol(bad, 'x.json', { rules })).toThrow(
      new UsageError(`x.json: limits[${PROTOCOL.limits.length}].direction: expected "max" for symbol-errors, got "min"`),
    );
    const ok = { ...PROTOCOL, limits: [...PROTOCOL.limits, { rule: 'symbol-errors', fail: 3 }] };
    expect(validateProtocol(ok, 'x.json', { rules }).limits.at(-1)).toEqual({ rule: 'symbol-errors', direction: 'max', fail: 3, unit: 'errors' });
  });

  it('it grades: its value, label, limit and advice in the reason', () => {
    const protocol = validateProtocol(PROTOCOL, 'spark-burnin.json', { rules });
    const v = gradeRun(analysisOf([stats({ symbolErrors: 4 })]), NO_BENCH, protocol, TODAY, rules);
    expect(v.outcome).toBe('FAIL');
    expect(v.reasons[0]).toEqual({
      rule: 'symbol-errors',
      grade: 'FAIL',
      node: 'spark-b',
      phase: 'soak-loaded',
      value: 4,
      unit: 'errors',
      limit: 'fail at 1 or more',
      message: 'spark-b soak-loaded: symbol errors 4 errors >= 1 (fail at 1 or more)',
      advice: 'packets were dropped for physical coding errors: replace the cable',
    });
    expect(gradeRun(analysisOf([stats({})]), NO_BENCH, protocol, TODAY, rules).outcome).toBe('PASS');
  });

  it('README`s table and the schema carry it', () => {
    expect(verdictTable(rules)).toContain('| `symbol-errors` | >= 1 errors | — | rx_symbol_err_phy counted on each receiver in every phase | no |');
    const items = (limitsSchema(rules) as { items: { properties: { rule: { enum: string[] } } } }).items;
    expect(items.properties.rule.enum).toContain('symbol-errors');
  });
});

// Rules version 5 (issue #33 item 5, docs/protocol.md "PHY recoveries"): generated stats in, the grade and sentence out.
describe('phy-recoveries: successful PHY recoveries per receiver over the run (rules version 5)', () => {
  const V5 = rulesVersionOf(5)!;
  const protocol = validateProtocol(PROTOCOL, 'spark-burnin.json', { rules: rulesOf(5), lenient: true });
  const grade = (s: NodePhaseStats[]) => gradeRun(analysisOf(s), NO_BENCH, protocol, V5, rulesOf(5));
  const idle = (recoveries?: number) => stats({ phase: 'soak-idle', ...(recoveries !== undefined ? { recoveries } : {}) });
  const loaded = (recoveries?: number) => stats({ ...(recoveries !== undefined ? { recoveries } : {}) });

  it('none is PASS; one is MARGINAL with the phase it came in', () => {
    expect(grade([idle(0), loaded(0)]).outcome).toBe('PASS');
    const v = grade([idle(0), loaded(1)]);
    expect(v.outcome).toBe('MARGINAL');
    expect(v.reasons).toEqual([
      {
        rule: 'phy-recoveries',
        grade: 'MARGINAL',
        node: 'spark-b',
        value: 1,
        unit: 'recoveries',
        limit: 'marginal at 1 or more, fail at 2 or more',
        message: 'spark-b: PHY recoveries 1 recoveries >= 1 (marginal at 1 or more, fail at 2 or more) (1 in soak-loaded)',
        advice: ruleOf('phy-recoveries')!.advice,
      },
    ]);
  });

  it('a second on the same receiver FAILs, also when the two came in different phases', () => {
    const v = grade([idle(1), loaded(1)]);
    expect(v.outcome).toBe('FAIL');
    expect(v.reasons[0]).toMatchObject({
      rule: 'phy-recoveries',
      grade: 'FAIL',
      value: 2,
      message: expect.stringMatching(/\(1 in soak-idle, 1 in soak-loaded\)$/),
    });
    // One on each receiver is one per receiver: MARGINAL.
    expect(grade([loaded(1), stats({ node: 'spark-a', recoveries: 1 })]).outcome).toBe('MARGINAL');
  });

  it('a receiver whose kernel does not expose the counter is not judged (version 4 did not read it at all)', () => {
    expect(grade([idle(), loaded()]).outcome).toBe('PASS');
    expect(grade([idle(), loaded()]).measurements.some((m) => m.rule === 'phy-recoveries')).toBe(false);
    const v4 = rulesVersionOf(4)!;
    const p4 = validateProtocol(PROTOCOL, 'spark-burnin.json', { rules: rulesOf(4), lenient: true });
    expect(gradeRun(analysisOf([loaded(5)]), NO_BENCH, p4, v4, rulesOf(4)).outcome).toBe('PASS');
  });
});
