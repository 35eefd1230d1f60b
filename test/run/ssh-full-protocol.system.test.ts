import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SimServe } from '../../src/sim/serve.js';
import { inVirtualTime, overSsh, served, SPEED, verdict } from '../helpers/sim-speed.js';

// CI runs the full default protocol (spark-burnin) over real SSH against `cablequal sim serve --speed 20`, with the
// controller at --speed 20: the verdict is run --sim's, and the run never outran the lab. How fast it went (the ~72
// simulated minutes in under 4 real ones) is a benchmark figure: BENCHMARKS.md §8 (bench/ssh-speed.ts).
describe(`the full default protocol over SSH at x${SPEED}`, () => {
  let s: SimServe | null = null;
  afterAll(async () => {
    await s?.close();
  });

  it("the full default protocol over SSH: PASS at the lab's pace, the verdict of run --sim", { timeout: 600_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-speed-'));
    s = await served('good-qsfp56', dir);
    const { code, result, err, realS } = await overSsh(s, dir);
    expect(result.outcome, err + JSON.stringify(result.reasons)).toBe('PASS');
    expect(code).toBe(0);
    expect(result.simulated).toBe(true);
    const labS = s.lab.timeS();
    // Preflight, benchmarks, 10 + 60 minutes of soak: more than 71 simulated minutes.
    expect(labS).toBeGreaterThan(71 * 60);
    // The controller waited on the lab's scaled clock (it did not skip its waits); load can only make it slower.
    expect(realS).toBeGreaterThanOrEqual(labS / SPEED - 5);
    expect(result.sampling.ticks).toBeGreaterThan(0.6 * labS); // sampled all along (1 s ticks, some missed under load)
    for (const n of s.nodes) expect(s.lab.processes(n.name)).toEqual([]);
    expect(verdict(result)).toEqual(verdict(await inVirtualTime('good-qsfp56', dir)));
  });
});
