// Section 8: sampling while another process holds the results store. A real-time run (speed 1) against `sim serve`
// (good-qsfp56, one soak), the embedded SQLite store held under `BEGIN EXCLUSIVE` by a child process from the soak's
// start (test/helpers/store-lock.ts, the same run the system test makes with a shorter lock): the longest interval
// between a node's consecutive samples while the lock was held, and how long the soak and the run took.
import { loadavg } from 'node:os';
import { runWithStoreLocked } from '../test/helpers/store-lock.js';

// What section 8 runs: the lock the issue measured (60 s), a soak that outlasts it.
export const STORE_BUSY_PLAN = { lockS: 60, soakS: 90, samplingIntervalS: 1 };

// What section 8 measured (one run: it takes real time).
export interface StoreBusyBenchResult {
  plan: typeof STORE_BUSY_PLAN;
  date: string;
  loadAvg: { start: number[]; end: number[] };
  lockS: number;
  longestTickMs: number;
  ticksDuringLock: number;
  soakS: number;
  runWallS: number;
  outcome: string;
  storeWarnings: number;
  gaps: { node: string; fromS: number; toS: number; reason: string }[];
  note?: string; // what else was seen (written into bench/results.json by hand)
}

// Section 8.
export async function benchStoreBusy(work: string, log: (s: string) => void): Promise<StoreBusyBenchResult> {
  const start = loadavg();
  const r = await runWithStoreLocked(work, { soakS: STORE_BUSY_PLAN.soakS, lock: { engine: 'sqlite', holdS: STORE_BUSY_PLAN.lockS } });
  log(
    `  lock ${r.lockS.toFixed(1)} s: longest tick interval ${r.longestTickMs} ms, soak ${r.soakS.toFixed(1)} s, run ${r.runWallS.toFixed(1)} s, ${r.outcome}`,
  );
  return {
    plan: STORE_BUSY_PLAN,
    date: new Date().toISOString(),
    loadAvg: { start, end: loadavg() },
    lockS: r.lockS,
    longestTickMs: r.longestTickMs,
    ticksDuringLock: r.ticksDuringLock,
    soakS: r.soakS,
    runWallS: r.runWallS,
    outcome: r.outcome,
    storeWarnings: r.storeWarnings.length,
    gaps: r.gaps,
  };
}
