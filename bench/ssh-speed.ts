// Section 8: the full default protocol over real SSH against `sim serve --speed 20`, the controller at --speed 20:
// how long the ~72 simulated minutes take in real time (test/run/ssh-full-protocol.system.test.ts checks the verdict
// and that the run never outran the lab; how much faster than real time it went is this figure, not a test).
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../src/cli/main.js';
import type { CliIo } from '../src/cli/io.js';
import { serveSimLab } from '../src/sim/serve.js';

export interface SshSpeedResult {
  speed: number;
  scenario: string;
  outcome: string;
  labS: number; // simulated seconds the lab ran
  realS: number; // wall seconds of the run
  ticks: number;
}

// One run of `cablequal run --nodes ... --ssh-config ... --speed N` against a served lab.
export async function benchSshSpeed(work: string, log: (s: string) => void, speed = 20, scenario = 'good-qsfp56'): Promise<SshSpeedResult> {
  const dir = mkdtempSync(join(work, 'ssh-speed-'));
  const s = await serveSimLab({ scenario, dir: join(dir, 'keys'), speed, seed: 7 });
  try {
    let out = '';
    const io: CliIo = { stdout: (x) => void (out += x), stderr: () => undefined, readStdin: async () => '', isTTY: false, cwd: dir, env: {} };
    const argv = [
      'run',
      '--nodes',
      s.nodes.map((n) => n.name).join(','),
      '--ssh-config',
      s.files.config,
      '--speed',
      String(speed),
      '--out',
      'reports',
      '--json',
    ];
    const t0 = performance.now();
    await main(argv, io);
    const realS = (performance.now() - t0) / 1000;
    const r = JSON.parse(out) as { outcome: string; sampling: { ticks: number } };
    const res = { speed, scenario, outcome: r.outcome, labS: s.lab.timeS(), realS, ticks: r.sampling.ticks };
    log(`  ${res.outcome}: ${res.labS.toFixed(0)} simulated s in ${res.realS.toFixed(0)} s (x${(res.labS / res.realS).toFixed(1)})`);
    return res;
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
