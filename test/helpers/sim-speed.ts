// `cablequal sim serve --speed N` and `cablequal run --nodes ... --speed N` in tests: serve a scenario, run over SSH,
// and the same scenario and seed in virtual time (run --sim) to compare verdicts with.
import { join } from 'node:path';
import { serveSimLab, type SimServe } from '../../src/sim/serve.js';
import { runCli } from './cli.js';
import { servedNodeArgs } from './served-nodes.js';

// x20: the full default protocol (~72 simulated minutes) in under 4 minutes on a 2-core machine.
export const SPEED = 20;
export const SEED = 7;

export interface JsonResult {
  outcome: string;
  reasons: { rule: string; node?: string; lane?: number }[];
  simulated: boolean;
  decidedAtS: number | null;
  runDir: string;
  sampling: { ticks: number };
}

export async function served(scenario: string, dir: string): Promise<SimServe> {
  return serveSimLab({ scenario, dir: join(dir, `keys-${scenario}`), speed: SPEED, seed: SEED });
}

export async function overSsh(s: SimServe, dir: string, extra: string[] = []): Promise<{ code: number; result: JsonResult; err: string; realS: number }> {
  const t0 = Date.now();
  const r = await runCli(['run', ...servedNodeArgs(s), '--speed', String(SPEED), '--out', join(dir, 'reports'), '--json', ...extra]);
  return { code: r.code, result: JSON.parse(r.out || '{}') as JsonResult, err: r.err, realS: (Date.now() - t0) / 1000 };
}

export async function inVirtualTime(scenario: string, dir: string): Promise<JsonResult> {
  const r = await runCli(['run', '--sim', scenario, '--seed', String(SEED), '--json', '--out', join(dir, 'reports-sim')]);
  return JSON.parse(r.out) as JsonResult;
}

// What a verdict is: the outcome and which rules gave it, where (their figures differ with where the ticks fall).
export const verdict = (r: JsonResult) => ({
  outcome: r.outcome,
  rules: [...new Set(r.reasons.map((x) => `${x.rule}${x.node ? `@${x.node}` : ''}${x.lane !== undefined ? `#${x.lane}` : ''}`))].sort(),
});
