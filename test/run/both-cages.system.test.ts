// `run --port both` with the full default protocol (issue 25 item 1, done-when): on the simulated lab's dual-cage
// scenario in virtual time, one PASS (the good QSFP56 in cage 0) and one FAIL (the failing clone in cage 1), each with
// its certificate that grades on its own to the run's verdict and verifies; and the same two verdicts over real SSH
// against `cablequal sim serve --scenario dual-cage --speed 20`. System tier: full-length procedures, sshd-free but SSH.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keygen } from '../../src/report/sign.js';
import { serveSimLab, type SimServe } from '../../src/sim/serve.js';
import { runCli } from '../helpers/cli.js';
import { SEED, SPEED } from '../helpers/sim-speed.js';
import { servedNodeArgs } from '../helpers/served-nodes.js';

interface Cable {
  cage: number;
  serial: string;
  outcome: string;
  qualification: boolean;
  reasons: { rule: string; node?: string }[];
  certificate: string | null;
  runDir: string;
}

const root = mkdtempSync(join(tmpdir(), 'cq-both-full-'));
const env = () => ({ CABLEQUAL_LAB_KEY: join(root, 'lab', 'lab-key.pem') });
// Which cable, what it concluded and on which rules (their figures differ with where the ticks fall).
const verdicts = (cables: Cable[]) =>
  cables.map((c) => ({ cage: c.cage, serial: c.serial, outcome: c.outcome, rules: [...new Set(c.reasons.map((r) => `${r.rule}@${r.node ?? ''}`))].sort() }));

let inProcess: Cable[] = [];
beforeAll(async () => {
  await keygen(join(root, 'lab'));
  const r = await runCli(['run', '--sim', 'dual-cage', '--port', 'both', '--seed', String(SEED), '--json', '--out', join(root, 'sim')], { env: env() });
  expect(r.code, r.err).toBe(1);
  inProcess = (JSON.parse(r.out) as { cables: Cable[] }).cables;
}, 300_000);

describe('run --sim dual-cage --port both, full default protocol', () => {
  it('one PASS and one FAIL, each a qualification with its certificate', () => {
    expect(inProcess.map((c) => [c.cage, c.serial, c.outcome, c.qualification])).toEqual([
      [0, 'MT2412VS01562', 'PASS', true],
      [1, 'ONT2403150203', 'FAIL', true],
    ]);
    for (const c of inProcess) expect(c.certificate).toBe(join(c.runDir, 'certificate.html'));
    // The clone fails on its runaway lane before its link drops, as alone; the good cable is not touched by it.
    expect(inProcess[1]!.reasons.map((r) => r.rule)).not.toContain('link-down-events');
    const html = readFileSync(inProcess[0]!.certificate!, 'utf8');
    expect(html).toContain('qualified at once with the cable in cage 1 (serial ONT2403150203');
    // The clone stopped early: the good cable had the rails alone from then on, and says so.
    expect(html).toMatch(
      /load in soak-loaded<\/th><td>spark-a → spark-b [\d.]+ Gb\/s median \((99|100)\.\d % of its share \(1\/2, all of it from \d+ s when the other cable's load stopped\) of its ib_write_bw 185\.\d\)/,
    );
  });

  it('each certificate grades on its own to the run’s verdict and verifies', async () => {
    for (const c of inProcess) {
      const before = JSON.parse(readFileSync(join(c.runDir, 'record.json'), 'utf8'));
      const g = await runCli(['grade', c.runDir], { env: env() });
      expect(g.code, g.err).toBe(c.outcome === 'FAIL' ? 1 : 0);
      const after = JSON.parse(readFileSync(join(c.runDir, 'record.json'), 'utf8'));
      expect([after.outcome, after.reasons, after.soakLoad]).toEqual([before.outcome, before.reasons, before.soakLoad]);
      const v = await runCli(['verify', join(c.runDir, 'certificate.json')], { env: env() });
      expect(v.code, v.out + v.err).toBe(0);
      expect(v.out).toMatch(new RegExp(`OK.*${c.outcome}|${c.outcome}.*OK`, 's'));
    }
  });
});

describe(`run --port both over SSH against sim serve --scenario dual-cage at x${SPEED}`, () => {
  let s: SimServe | null = null;
  afterAll(async () => {
    await s?.close();
  });

  it('gives the verdicts of the run in virtual time, and leaves no process on either node', { timeout: 900_000 }, async () => {
    s = await serveSimLab({ scenario: 'dual-cage', dir: join(root, 'keys'), speed: SPEED, seed: SEED });
    const r = await runCli(['run', ...servedNodeArgs(s), '--port', 'both', '--speed', String(SPEED), '--out', join(root, 'ssh'), '--json']);
    const cables = (JSON.parse(r.out || '{"cables":[]}') as { cables: Cable[] }).cables;
    expect(verdicts(cables), r.err).toEqual(verdicts(inProcess));
    expect(r.code).toBe(1);
    for (const n of s.nodes) expect(s.lab.processes(n.name)).toEqual([]);
  });
});
