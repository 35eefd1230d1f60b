import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serveSimLab, type SimServe } from '../../src/sim/serve.js';
import { runCli } from '../helpers/cli.js';
import { sshdAvailable, startSshd, type Sshd } from '../helpers/sshd.js';

// `cablequal sim serve --speed N` and `cablequal run --nodes ... --speed N` agree on time: the full default protocol
// (spark-burnin, ~72 simulated minutes) over real SSH in 1/N of the real time, with the verdict `run --sim` gives for
// the same scenario and seed. N = 20 keeps the run under 4 minutes on a 2-core machine: CI runs it.
const SPEED = 20;
const SEED = 7;

interface JsonResult {
  outcome: string;
  reasons: { rule: string; node?: string; lane?: number }[];
  simulated: boolean;
  decidedAtS: number | null;
  runDir: string;
  sampling: { ticks: number };
}

async function served(scenario: string, dir: string): Promise<SimServe> {
  return serveSimLab({ scenario, dir: join(dir, `keys-${scenario}`), speed: SPEED, seed: SEED });
}

async function overSsh(s: SimServe, dir: string, extra: string[] = []): Promise<{ code: number; result: JsonResult; err: string; realS: number }> {
  const t0 = Date.now();
  const r = await runCli(['run', '--nodes', s.nodes.map((n) => n.name).join(','), '--ssh-config', s.files.config, '--speed', String(SPEED), '--out', join(dir, 'reports'), '--json', ...extra]);
  return { code: r.code, result: JSON.parse(r.out || '{}') as JsonResult, err: r.err, realS: (Date.now() - t0) / 1000 };
}

async function inVirtualTime(scenario: string, dir: string): Promise<JsonResult> {
  const r = await runCli(['run', '--sim', scenario, '--seed', String(SEED), '--json', '--out', join(dir, 'reports-sim')]);
  return JSON.parse(r.out) as JsonResult;
}

// What a verdict is: the outcome and which rules gave it (their figures differ with where the ticks fall).
const verdict = (r: JsonResult) => ({ outcome: r.outcome, rules: [...new Set(r.reasons.map((x) => `${x.rule}${x.node ? `@${x.node}` : ''}${x.lane !== undefined ? `#${x.lane}` : ''}`))].sort() });

describe(`run --nodes --speed ${SPEED} against sim serve --speed ${SPEED}`, () => {
  const open: SimServe[] = [];
  afterAll(async () => {
    for (const s of open) await s.close();
  });

  it('the full default protocol over SSH: PASS in 1/N of its simulated time, the verdict of run --sim', { timeout: 600_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-speed-'));
    const s = await served('good-qsfp56', dir);
    open.push(s);
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

  it('failing-clone: the same FAIL, on the same lane of the same receiver, as run --sim with that seed', { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-speed-'));
    const s = await served('failing-clone', dir);
    open.push(s);
    const { code, result, err } = await overSsh(s, dir);
    expect(result.outcome, err + JSON.stringify(result.reasons)).toBe('FAIL');
    expect(code).toBe(1);
    const sim = await inVirtualTime('failing-clone', dir);
    expect(verdict(result)).toEqual(verdict(sim));
    expect(result.reasons.find((r) => r.rule === 'lane-ratio')).toMatchObject({ node: 'spark-b', lane: 2 });
    // Decided in the loaded soak, before the simulated drop, in both.
    expect(Math.abs(result.decidedAtS! - sim.decidedAtS!)).toBeLessThan(60);
  });

  it('a --speed other than the nodes\' is refused before anything runs (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-speed-'));
    const s = await served('good-qsfp56', dir);
    open.push(s);
    const r = await runCli(['run', '--nodes', s.nodes.map((n) => n.name).join(','), '--ssh-config', s.files.config, '--speed', '10', '--out', join(dir, 'reports'), '--json']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--speed 10: spark-a runs at speed x20 .*give the same --speed/);
    expect(readdirSync(dir)).not.toContain('reports');
    expect(s.lab.events.filter((e) => e.kind.endsWith('-start'))).toEqual([]);
  });

  it('--speed with --sim is a usage error: virtual time is already as fast as it gets', async () => {
    const r = await runCli(['run', '--sim', 'good-qsfp56', '--speed', '20']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--speed: --sim runs in virtual time already/);
  });
});

describe.skipIf(!sshdAvailable)('run --speed against a real node', () => {
  let sshd: Sshd | null = null;
  afterAll(async () => {
    await sshd?.stop();
  });

  it('is refused before any load starts: a real node runs in real time (exit 2, nothing written)', { timeout: 60_000 }, async () => {
    sshd = await startSshd();
    const dir = mkdtempSync(join(tmpdir(), 'cq-speed-real-'));
    const config = join(dir, 'config');
    writeFileSync(join(dir, 'known_hosts'), `${sshd.knownHostsLine}\n`);
    const host = (name: string) =>
      [`Host ${name}`, '  HostName 127.0.0.1', `  Port ${sshd!.port}`, `  User ${sshd!.user}`, `  IdentityFile ${sshd!.clientKey}`, `  UserKnownHostsFile ${join(dir, 'known_hosts')}`].join('\n');
    writeFileSync(config, `${host('real-a')}\n\n${host('real-b')}\n`);
    const r = await runCli(['run', '--nodes', 'real-a,real-b', '--ssh-config', config, '--speed', '20', '--out', join(dir, 'reports'), '--json']);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(/--speed 20: real-a is not a simulated node \(.*\); a real node runs in real time: drop --speed/);
    expect(readdirSync(dir)).not.toContain('reports');
  });
});
