import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { CABLEQUAL_VERSION } from '../domain/version.js';
import type { Outcome } from '../domain/outcome.js';
import { writeJsonAtomic } from '../io/atomic-write.js';
import { readInputText } from '../io/read-input.js';

export const STATE_FILE = 'batch-state.json';

// pending: not started; running: started, not finished (re-run from the start on --resume);
// done: a run finished (any outcome); refused: serial already tested in this batch; skipped: the operator said `s`.
export type CableStatus = 'pending' | 'running' | 'done' | 'refused' | 'skipped';

export interface CableState {
  label: string;
  golden?: 'first' | 'last';
  pair: number; // index of the pair (queue) it belongs to
  status: CableStatus;
  serial: string | null;
  outcome: Outcome | null;
  runDir: string | null; // relative to the batch directory
  report: string | null; // certificate.html, setup-check.html or run-report.html, relative to the batch directory
  reason: string | null; // main reason (refusal, skip, or the run's first reason)
  warnings: string[];
  attempts: number; // runs started (an interrupted one counts)
  // The bench could not be brought into a measurable state for this cable (reboot refused or timed out, links or
  // loopback not back): the cable stays pending for --resume, the summary shows ERROR with this reason.
  benchError?: string | undefined;
  // The batch rebooted the other node after this cable's swap and asked the operator to reboot the machine the batch
  // runs on (`node`, then with boot id `bootId`); --resume checks that it was before qualifying the cable.
  controllerReboot?: { node: string; bootId: string } | undefined;
}

// One swap of a pair, on the batch's clock: its cable(s) asked for, seen in on both ends (swapped: plugged while the
// batch waited, not in from the start), the nodes rebooted and settled, the cable(s) qualified.
export interface CycleRecord {
  pair: number;
  labels: string[];
  askedAt: string;
  swapped: boolean;
  inAt: string | null;
  settledAt: string | null;
  rebootS: number | null; // from the reboot command until both nodes answered with new boot ids (null: no reboot)
  endedAt: string | null;
  qualified: number; // cables of the cycle a qualification judged (PASS, MARGINAL or FAIL); golden runs not counted
  setupChecks?: number; // cables of the cycle a set-up check judged (they qualify none); absent in states before it
}

// The batch's memory across interruptions: written atomically after every change.
export interface BatchState {
  schema: 'cablequal.batch/1';
  // The cablequal that last wrote the file (absent in batches started before it was recorded).
  cablequalVersion?: string;
  manifest: string;
  labels: string[]; // manifest order, to refuse a resume with another manifest
  pairs: string[];
  // Each pair holds a cable in both cages, two per swap (--port both).
  both?: boolean;
  protocol: string;
  golden: string | null;
  cables: CableState[];
  goldenDrift: { ok: boolean; detail: string } | null;
  // Every swap cycle that qualified cables (what the batch's throughput is measured from); absent before any.
  cycles?: CycleRecord[];
}

export function statePath(dir: string): string {
  return join(dir, STATE_FILE);
}

export function saveState(dir: string, s: BatchState): void {
  mkdirSync(dir, { recursive: true });
  writeJsonAtomic(statePath(dir), { ...s, cablequalVersion: CABLEQUAL_VERSION });
}

// Read the state of an earlier batch in `dir`, or null when none was started there.
export function loadState(dir: string): BatchState | null {
  const p = statePath(dir);
  if (!existsSync(p)) return null;
  let s: BatchState;
  try {
    s = JSON.parse(readInputText(p, 'batchState')) as BatchState;
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`${p}: not valid JSON (${(e as Error).message})`);
  }
  if (s.schema !== 'cablequal.batch/1' || !Array.isArray(s.cables)) throw new UsageError(`${p}: not a cablequal batch state file`);
  return s;
}
