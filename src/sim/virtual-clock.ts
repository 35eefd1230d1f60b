import type { Clock } from '../domain/clock.js';

interface Timer {
  at: number;
  seq: number;
  resolve: () => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

// Discrete-event clock: sleeping jumps straight to the earliest wake-up, so 75 simulated minutes take seconds.
// Timers fire one per macrotask, in (time, creation) order, so runs are deterministic.
export class VirtualClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];
  private scheduled = false;

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      // Wake-ups land on whole milliseconds, so that a stream of sub-millisecond sleeps still moves time forward.
      const timer: Timer = { at: this.t + Math.max(0, Math.ceil(Number.isFinite(ms) ? ms : 0)), seq: this.seq++, resolve, reject };
      if (signal) {
        timer.signal = signal;
        timer.onAbort = () => {
          this.timers = this.timers.filter((x) => x !== timer);
          reject(signal.reason ?? new Error('aborted'));
        };
        signal.addEventListener('abort', timer.onAbort, { once: true });
      }
      this.timers.push(timer);
      this.schedule();
    });
  }

  // Pending sleepers (for tests).
  get pending(): number {
    return this.timers.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.fire());
  }

  private fire(): void {
    this.scheduled = false;
    if (this.timers.length === 0) return;
    let best = 0;
    for (let i = 1; i < this.timers.length; i++) {
      const a = this.timers[i]!;
      const b = this.timers[best]!;
      if (a.at < b.at || (a.at === b.at && a.seq < b.seq)) best = i;
    }
    const timer = this.timers.splice(best, 1)[0]!;
    if (timer.at > this.t) this.t = timer.at;
    if (timer.signal && timer.onAbort) timer.signal.removeEventListener('abort', timer.onAbort);
    timer.resolve();
    if (this.timers.length > 0) this.schedule();
  }
}
