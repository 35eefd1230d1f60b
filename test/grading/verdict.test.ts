// The verdict ladder (src/grading/verdict.ts): the first rung that holds decides, in the order a journal is trusted.
import { describe, expect, it } from 'vitest';
import type { Reason } from '../../src/domain/outcome.js';
import type { GradedJournal } from '../../src/grading/engine.js';
import { stopNote, verdictOf, type VerdictInput } from '../../src/grading/verdict.js';

const r = (rule: string): Reason => ({ rule, message: rule });
const graded = (outcome: GradedJournal['outcome']): GradedJournal => ({ outcome, reasons: [r(`graded-${outcome}`)] }) as GradedJournal;
const base: VerdictInput = {
  chainBreaks: [],
  integrity: [],
  setupErrors: [],
  aborted: null,
  preflightOnly: null,
  graded: graded('PASS'),
  setupChecks: [],
  incomplete: [],
  unsoaked: [],
  confirmsStop: true,
  decision: null,
};
const rules = (v: Partial<VerdictInput>) => {
  const x = verdictOf({ ...base, ...v });
  return [x.outcome, x.reasons.map((y) => y.rule)];
};

describe('the verdict ladder', () => {
  it('takes each rung before the ones below it', () => {
    const all: Partial<VerdictInput> = {
      chainBreaks: [r('journal-chain')],
      integrity: [r('journal-protocol')],
      setupErrors: [r('node-lost')],
      aborted: { why: 'SIGINT', lastTick: 3, tornTail: false },
      setupChecks: [r('soak-link-load')],
      incomplete: [r('phase-missing')],
    };
    expect(rules(all)).toEqual(['ERROR', ['journal-chain']]);
    expect(rules({ ...all, chainBreaks: [] })).toEqual(['ERROR', ['journal-protocol']]);
    expect(rules({ ...all, chainBreaks: [], integrity: [] })).toEqual(['ERROR', ['node-lost']]);
    expect(rules({ ...all, chainBreaks: [], integrity: [], setupErrors: [] })).toEqual(['ABORTED', ['aborted']]);
    expect(rules({ setupChecks: [r('soak-link-load')], incomplete: [r('phase-missing')] })).toEqual(['ERROR', ['soak-link-load']]);
    expect(rules({ incomplete: [r('phase-missing')] })).toEqual(['ERROR', ['phase-missing']]);
    expect(rules({})).toEqual(['PASS', ['graded-PASS']]);
  });

  it('a FAIL the samples prove stands over a procedure not complete; a stop not confirmed is ERROR', () => {
    expect(rules({ graded: graded('FAIL'), incomplete: [r('phase-missing')], unsoaked: ['soak-loaded'] })).toEqual(['FAIL', ['graded-FAIL']]);
    const stop = verdictOf({ ...base, unsoaked: ['soak-idle', 'soak-loaded'], decision: { reason: { ...r('lane-ratio'), node: 'b' }, journalVersion: 2 } });
    expect(stop.outcome).toBe('ERROR');
    expect(stop.reasons[0]!.message).toBe(
      'the run was stopped before soak-idle and soak-loaded ended (a FAIL decided by the rules version 2 watch: lane-ratio on b), and these rules find no FAIL in what was measured: the cable was not fully tested',
    );
    expect(rules({ unsoaked: ['soak-loaded'], confirmsStop: false })).toEqual(['PASS', ['graded-PASS']]);
  });

  it('says why a journal ends without its end, and what a preflight-only journal holds', () => {
    expect(verdictOf({ ...base, aborted: { why: null, lastTick: 41, tornTail: true } }).reasons[0]!.message).toBe(
      'journal ends without an end marker (controller stopped); last tick 41; torn last line dropped',
    );
    expect(rules({ graded: null, preflightOnly: { phaseBeyond: null, samples: 0 } })).toEqual(['PASS', ['preflight']]);
    expect(verdictOf({ ...base, preflightOnly: { phaseBeyond: 'soak-idle', samples: 3 } }).reasons[0]!.message).toBe(
      'a preflight-only journal holds phase soak-idle: not what cablequal preflight writes',
    );
    expect(rules({ graded: null })).toEqual(['ERROR', ['no-samples']]);
  });
});

describe('the note on a stop the rules decide otherwise', () => {
  const stopped = { ...r('lane-ratio'), node: 'b' };
  it('is none when the rules confirm it, and says what they decide otherwise', () => {
    expect(stopNote(stopped, 2, { ...r('lane-ratio'), node: 'b' })).toBeNull();
    expect(stopNote(stopped, 2, { ...r('fec-window'), node: 'b' })).toBe(
      'the run was stopped early (lane-ratio on b, by the rules version 2 watch); these rules decide fec-window on b',
    );
    expect(stopNote(stopped, 3, null)).toBe('the run was stopped early (lane-ratio on b, by the rules version 3 watch); these rules do not confirm it');
  });
});
