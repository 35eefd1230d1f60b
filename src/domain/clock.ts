// Injected so the 75-minute procedure runs in virtual time under the simulator and in tests.
export interface Clock {
  // Milliseconds since the Unix epoch.
  now(): number;
  // Resolves after ms of this clock's time (virtual clocks advance instantly).
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

// Real wall-clock time.
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      const t = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      const onAbort = () => {
        clearTimeout(t);
        reject(signal?.reason ?? new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

// `work`, or the error `late()` makes once `ms` of the clock's time pass first: a wait that must not hang, on the
// injected clock (so it is virtual time under the simulator). `work` itself goes on; the timer never outlives this.
export async function within<T>(clock: Clock, ms: number, work: Promise<T>, late: () => Error): Promise<T> {
  const ac = new AbortController();
  const timer = clock.sleep(ms, ac.signal).then(
    () => {
      throw late();
    },
    () => undefined as never,
  );
  try {
    return await Promise.race([work, timer]);
  } finally {
    ac.abort();
  }
}
