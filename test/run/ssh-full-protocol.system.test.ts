import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SimServe } from '../../src/sim/serve.js';
import { inVirtualTime, overSsh, served, SPEED, verdict } from '../helpers/sim-speed.js';

// CI runs the full default protocol (spark-burnin) over real SSH against `cablequal sim serve --speed 20`, with the
// controller at --speed 20: the ~72 simulated minutes take under 4 real ones, and the verdict is run --sim's.
describe(`the full default protocol over SSH at x${SPEED}`, () => {
  let s: SimServe | null = null;
  afterAll(async () => {
    await s?.close();
  });

  it('the full default protocol over SSH: PASS in 1/N of its simulated time, the verdict of run --sim', { timeout: 600_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-speed-'));
    s = await served('good-qsfp56', dir);
    const { code, result, err, realS } = await overSsh(s, dir);
    expect(result.outcome, err + JSON.stringify(result.reasons)).toBe('PASS');
    expect(code).toBe(0);
    expect(result.simulated).toBe(true);
    const labS = s.lab.timeS();
    // Preflight, benchmarks, 10 + 60 minutes of soak: more than 71 simulated minutes.
    expect(labS).toBeGreaterThan(71 * 60);
    expect(realS).toBeGreaterThanOrEqual(labS / SPEED - 5);
    expect(realS).toBeLessThan((2 * labS) / SPEED); // a controller in real time would take 20x as long
    expect(result.sampling.ticks).toBeGreaterThan(0.6 * labS); // sampled all along (1 s ticks, some missed under load)
    for (const n of s.nodes) expect(s.lab.processes(n.name)).toEqual([]);
    expect(verdict(result)).toEqual(verdict(await inVirtualTime('good-qsfp56', dir)));
  });
});
