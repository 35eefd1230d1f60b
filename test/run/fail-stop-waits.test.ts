// The waits between phases a decided FAIL cuts (src/run/fail-stop.ts): the benchmark turn of two cables at once, and
// the signal that cuts a soak's wait for the other cable. Constructed turns (the run's Mutex), no lab.
import { describe, expect, it } from 'vitest';
import type { RunContext } from '../../src/run/context.js';
import { anySignal, untilDecided } from '../../src/run/fail-stop.js';
import { Mutex } from '../../src/run/turns.js';

const ctxWith = (decided: AbortController) => ({ decided: decided.signal }) as unknown as RunContext;

describe('untilDecided', () => {
  it('gives the turn when it comes first', async () => {
    const turns = new Mutex();
    const release = await untilDecided(ctxWith(new AbortController()), turns.lock());
    expect(typeof release).toBe('function');
    release!();
  });

  it('a FAIL decided while waiting: null, and the turn is handed on as soon as it comes', async () => {
    const turns = new Mutex();
    const holder = await turns.lock(); // the other cable benchmarks
    const decided = new AbortController();
    const waiting = untilDecided(ctxWith(decided), turns.lock());
    decided.abort();
    expect(await waiting).toBeNull();
    const third = turns.lock(); // the other cable's next benchmark
    holder();
    expect(typeof (await third)).toBe('function'); // reached: the decided run let its turn go at once
  });

  it('already decided: null at once, the turn handed on', async () => {
    const turns = new Mutex();
    const decided = new AbortController();
    decided.abort();
    expect(await untilDecided(ctxWith(decided), turns.lock())).toBeNull();
    expect(typeof (await turns.lock())).toBe('function');
  });
});

describe('anySignal', () => {
  it('aborts when any source does, at once if one has; dispose lets go of the sources', () => {
    const a = new AbortController();
    const b = new AbortController();
    const one = anySignal([a.signal, b.signal]);
    expect(one.signal.aborted).toBe(false);
    b.abort();
    expect(one.signal.aborted).toBe(true);
    expect(anySignal([b.signal]).signal.aborted).toBe(true);
    const c = new AbortController();
    const gone = anySignal([c.signal]);
    gone.dispose();
    c.abort();
    expect(gone.signal.aborted).toBe(false);
  });
});
