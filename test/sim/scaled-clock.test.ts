// ScaledClock: the simulated lab's time at K times real time (`sim serve --speed K`).
import { describe, expect, it } from 'vitest';
import { ScaledClock } from '../../src/sim/scaled-clock.js';

describe('ScaledClock', () => {
  it('runs K times faster than its base clock', async () => {
    let t = 1_000;
    const slept: number[] = [];
    const base = { now: () => t, sleep: async (ms: number) => void slept.push(ms) };
    const c = new ScaledClock(60, base);
    t += 1_000; // one real second
    expect(c.now()).toBe(1_000 + 60_000);
    await c.sleep(120_000);
    expect(slept).toEqual([2_000]);
    expect(() => new ScaledClock(0)).toThrow(RangeError);
  });
});
