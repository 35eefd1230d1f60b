// The one sampling schedule: the run's loop (src/run/sampling-loop.ts) and the benchmark (measure.ts) both tick through it.
import type { Clock } from '../domain/clock.js';
import { UsageError } from '../domain/errors.js';

// When to tick and when to stop.
export interface ScheduleOptions {
  clock: Clock;
  // Tick k is due at start + k·intervalMs; 0 = back to back (the highest rate the ticks sustain).
  intervalMs: number;
  // Stops before the next tick once aborted (an abort also cuts the wait).
  signal?: AbortSignal;
  // Stops before the next tick when this returns true.
  stop?: () => boolean;
  // Stops after this many ticks.
  maxTicks?: number;
}

// What one schedule achieved.
export interface ScheduleSummary {
  ticks: number;
  // Deadlines skipped because a tick ran past them.
  missedDeadlines: number;
}

// Fixed rate: call tick(n) for n = 0, 1, 2, … on the deadlines start + k·intervalMs. After a tick that overran, the
// next one starts at once and the deadlines passed are skipped (and counted): the grid never drifts and never bursts
// to catch up. The time tick() takes counts toward the interval; an error it throws ends the schedule with that error.
export async function runOnSchedule(opts: ScheduleOptions, tick: (n: number) => Promise<void>): Promise<ScheduleSummary> {
  const { clock, intervalMs, signal } = opts;
  if (!(intervalMs >= 0) || !Number.isFinite(intervalMs)) throw new UsageError(`refusing sampling interval ${intervalMs} ms: expected >= 0`);
  const stopped = (n: number) => signal?.aborted === true || opts.stop?.() === true || (opts.maxTicks !== undefined && n >= opts.maxTicks);
  const start = clock.now();
  let due = 0; // index of the deadline the next tick starts on
  let n = 0;
  let missedDeadlines = 0;
  while (!stopped(n)) {
    await tick(n);
    n++;
    if (intervalMs === 0 || stopped(n)) continue;
    due++;
    const now = clock.now();
    const next = start + due * intervalMs;
    if (next > now) {
      try {
        await clock.sleep(next - now, signal);
      } catch (e) {
        if (signal?.aborted) break;
        throw e;
      }
    } else {
      const late = Math.ceil((now - start) / intervalMs);
      missedDeadlines += late - due;
      due = late;
    }
  }
  return { ticks: n, missedDeadlines };
}
