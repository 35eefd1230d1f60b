// Section 8: the full default protocol over real SSH against `sim serve --speed 20`, the controller at --speed 20:
// how long the ~72 simulated minutes take in real time. It is the run test/run/ssh-full-protocol.system.test.ts makes
// (test/helpers/sim-speed.ts), which checks the verdict and that the run never outran the lab; how much faster than
// real time it went is this figure, not a test.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { overSsh, served, SPEED } from '../test/helpers/sim-speed.js';

export interface SshSpeedResult {
  speed: number;
  scenario: string;
  outcome: string;
  labS: number; // simulated seconds the lab ran
  realS: number; // wall seconds of the run
  ticks: number;
}

// One run of `cablequal run --nodes ... --ssh-config ... --speed N` against a served lab.
export async function benchSshSpeed(work: string, log: (s: string) => void, scenario = 'good-qsfp56'): Promise<SshSpeedResult> {
  const dir = mkdtempSync(join(work, 'ssh-speed-'));
  const s = await served(scenario, dir);
  try {
    const { result, realS } = await overSsh(s, dir);
    const res = { speed: SPEED, scenario, outcome: result.outcome, labS: s.lab.timeS(), realS, ticks: result.sampling.ticks };
    log(`  ${res.outcome}: ${res.labS.toFixed(0)} simulated s in ${res.realS.toFixed(0)} s (x${(res.labS / res.realS).toFixed(1)})`);
    return res;
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
