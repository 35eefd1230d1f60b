// The verdict ladder: from what a journal shows (its chain and integrity, the run's own stops, the samples graded by
// a rules version, the evidence the procedure ran) to the run's outcome and its reasons. ERROR and ABORTED keep runs
// that could not judge the cable apart from PASS, MARGINAL and FAIL. Pure: the record builder reads the journal and
// hands each rung's facts in, first rung first.
import type { Outcome, Reason } from '../domain/outcome.js';
import type { GradedJournal } from './engine.js';

// What each rung of the ladder reads, as the record builder found it in the journal.
export interface VerdictInput {
  chainBreaks: Reason[]; // the hash chain's breaks (a line deleted, inserted, reordered or edited); none when it holds
  integrity: Reason[]; // the protocol, the chain or the samples are not what the run wrote
  setupErrors: Reason[]; // the setup-error lines the run stopped on
  // The run did not end (an `aborted` line's why, or the journal just ends), with the last tick sampled.
  aborted: { why: string | null; lastTick: number | null; tornTail: boolean } | null;
  // `cablequal preflight`: what the journal holds beyond preflight (a phase's name, a sample count).
  preflightOnly: { phaseBeyond: string | null; samples: number } | null;
  graded: GradedJournal | null; // the samples graded with a rules version (null: no sample)
  setupChecks: Reason[]; // setup checks the live run stops on, failed on the journal's own evidence
  incomplete: Reason[]; // what the procedure lacks for any verdict better than a FAIL
  unsoaked: string[]; // soaks skipped or stopped early
  confirmsStop: boolean; // the rules version makes a stop its watch does not confirm ERROR
  decision: { reason: Reason; journalVersion: number } | null; // the journal's decision line, and the version that wrote it
}

const named = (r: Reason) => `${r.rule}${r.node ? ` on ${r.node}` : ''}`;

// The outcome and its reasons: the first rung that holds decides.
export function verdictOf(v: VerdictInput): { outcome: Outcome; reasons: Reason[] } {
  if (v.chainBreaks.length) return { outcome: 'ERROR', reasons: v.chainBreaks };
  if (v.integrity.length) return { outcome: 'ERROR', reasons: v.integrity };
  // The run stopped on what it recorded (what came after the stop, a load it ended, is not a further reason).
  if (v.setupErrors.length) return { outcome: 'ERROR', reasons: v.setupErrors };
  if (v.aborted) {
    const a = v.aborted;
    const message =
      a.why !== null
        ? `run stopped: ${a.why}`
        : `journal ends without an end marker (controller stopped)${a.lastTick !== null ? `; last tick ${a.lastTick}` : ''}${a.tornTail ? '; torn last line dropped' : ''}`;
    return { outcome: 'ABORTED', reasons: [{ rule: 'aborted', message }] };
  }
  if (v.preflightOnly) return preflightVerdict(v.preflightOnly);
  if (!v.graded) return { outcome: 'ERROR', reasons: [{ rule: 'no-samples', message: 'the run ended without a single sample: nothing to judge' }] };
  // A setup check the live run stops on fails on the journal's own evidence: ERROR, whether or not a line says so.
  if (v.setupChecks.length) return { outcome: 'ERROR', reasons: v.setupChecks };
  const { outcome, reasons } = v.graded;
  // A run stopped early by a watch these rules do not confirm never ran its soaks: no verdict can be stated.
  if (v.confirmsStop && outcome !== 'FAIL' && v.unsoaked.length) {
    const d = v.decision;
    return {
      outcome: 'ERROR',
      reasons: [
        {
          rule: 'not-soaked',
          message: `the run was stopped before ${v.unsoaked.join(' and ')} ended${d ? ` (a FAIL decided by the rules version ${d.journalVersion} watch: ${named(d.reason)})` : ''}, and these rules find no FAIL in what was measured: the cable was not fully tested`,
          advice: 'qualify the cable again',
        },
      ],
    };
  }
  // A FAIL proven by the samples stands; anything better needs the whole procedure in the journal.
  if (outcome !== 'FAIL' && v.incomplete.length) return { outcome: 'ERROR', reasons: v.incomplete };
  return { outcome, reasons };
}

// The note a record carries when the run was stopped early by a decision these rules decide otherwise (another rule or
// node, or none); null when they confirm it.
export function stopNote(stopped: Reason, journalVersion: number, decided: Reason | null): string | null {
  if (decided?.rule === stopped.rule && decided.node === stopped.node) return null;
  return `the run was stopped early (${named(stopped)}, by the rules version ${journalVersion} watch); ${decided ? `these rules decide ${decided.rule} on ${decided.node}` : 'these rules do not confirm it'}`;
}

// `cablequal preflight`: the nodes are ready; no cable was judged (no certificate is written for it).
function preflightVerdict(p: NonNullable<VerdictInput['preflightOnly']>): { outcome: Outcome; reasons: Reason[] } {
  if (p.phaseBeyond === null && p.samples === 0) {
    return {
      outcome: 'PASS',
      reasons: [
        {
          rule: 'preflight',
          message: 'preflight passed on every node (tools, rails Up at 200G, RS-FEC, addresses, sudo for ethtool -m); no cable was judged',
        },
      ],
    };
  }
  return {
    outcome: 'ERROR',
    reasons: [
      {
        rule: 'journal-inconsistent',
        message: `a preflight-only journal holds ${p.phaseBeyond !== null ? `phase ${p.phaseBeyond}` : 'samples'}: not what cablequal preflight writes`,
      },
    ],
  };
}
