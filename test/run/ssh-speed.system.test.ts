import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SimServe } from '../../src/sim/serve.js';
import { runCli } from '../helpers/cli.js';
import { sshdAvailable, startSshd, type Sshd } from '../helpers/sshd.js';
import { inVirtualTime, overSsh, served, SPEED, verdict } from '../helpers/sim-speed.js';
import { servedNodeArgs } from '../helpers/served-nodes.js';

// `run --nodes --speed N` against `sim serve --speed N`: the clone's verdict over SSH is run --sim's; a speed that
// does not match the nodes', --speed with --sim, and --speed against a real node are refused before anything runs.
describe(`run --nodes --speed ${SPEED} against sim serve --speed ${SPEED}`, () => {
  const open: SimServe[] = [];
  afterAll(async () => {
    for (const s of open) await s.close();
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
    // Decided in the loaded soak, before the simulated drop (3.1 min into it), in both.
    for (const r of [result, sim]) {
      const journal = readFileSync(join(r.runDir, 'journal.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; phase?: string; tS: number });
      const loadedStart = journal.find((l) => l.type === 'phase-start' && l.phase === 'soak-loaded')!.tS;
      expect(r.decidedAtS! - loadedStart).toBeGreaterThan(0);
      expect(r.decidedAtS! - loadedStart).toBeLessThan(186);
    }
  });

  it("a --speed other than the nodes' is refused before anything runs (exit 2)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-speed-'));
    const s = await served('good-qsfp56', dir);
    open.push(s);
    const r = await runCli(['run', ...servedNodeArgs(s), '--speed', '10', '--out', join(dir, 'reports'), '--json']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--speed 10: spark-a runs at speed x20 .*give the same --speed/);
    expect(readdirSync(dir)).not.toContain('reports');
    expect(s.lab.events.filter((e) => e.kind.endsWith('-start'))).toEqual([]);
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
      [
        `Host ${name}`,
        '  HostName 127.0.0.1',
        `  Port ${sshd!.port}`,
        `  User ${sshd!.user}`,
        `  IdentityFile ${sshd!.clientKey}`,
        `  UserKnownHostsFile ${join(dir, 'known_hosts')}`,
      ].join('\n');
    writeFileSync(config, `${host('real-a')}\n\n${host('real-b')}\n`);
    const r = await runCli(['run', '--nodes', 'real-a,real-b', '--ssh-config', config, '--speed', '20', '--out', join(dir, 'reports'), '--json']);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(/--speed 20: real-a is not a simulated node \(.*\); a real node runs in real time: drop --speed/);
    expect(readdirSync(dir)).not.toContain('reports');
  });
});
