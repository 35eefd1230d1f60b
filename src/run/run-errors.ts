import type { Reason } from '../domain/outcome.js';

// A step found the run cannot judge the cable (setup fault, lost node, throttled NIC): ends the run as ERROR.
export class SetupError extends Error {
  override readonly name = 'SetupError';
  constructor(readonly reason: Reason) {
    super(reason.message);
  }
}

// The operator or a signal stopped the run: ends as ABORTED with what was collected.
export class RunAborted extends Error {
  override readonly name = 'RunAborted';
  constructor(readonly why: string) {
    super(why);
  }
}

// The sampling loop decided a certain FAIL: the phase under way stops its loads at once and the run ends after its
// tail of sampling (src/run/qualify.ts). Thrown by the run's sleeps and load starts once the decision is made.
export class FailDecided extends Error {
  override readonly name = 'FailDecided';
  constructor() {
    super('a FAIL was decided: the loads stop');
  }
}

// Build a setup-fault reason (ERROR), never a cable grade.
export function setupReason(rule: string, message: string, extra: Partial<Reason> = {}): Reason {
  return { rule, message, ...extra };
}

// A preflight check failed on one node: ERROR with the node named first and what to do.
export function failOnNode(rule: string, node: string, message: string, advice: string): never {
  throw new SetupError(setupReason(rule, `${node}: ${message}`, { node, advice }));
}
