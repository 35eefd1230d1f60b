// The sampler's real shell path against the simulated lab: a real OpenSSH sshd per node, a real bash (the sampling
// shell), its persistent *_phy perl filter and $EPOCHREALTIME, and the lab's tools as executables on that node's PATH
// (test/helpers/lab-tools.ts). Each tick's samples must equal what the same sampler reads through the simulated runner.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeSample } from '../../src/domain/sample.js';
import { Sampler } from '../../src/sampling/sampler.js';
import { createLab, type SimLab } from '../../src/sim/lab.js';
import { exposeLabTools, type LabTools } from '../helpers/lab-tools.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { runSampleSet } from '../../src/run/tick-source.js';
import { cmd } from '../../src/transport/commands.js';
import type { SshRunner } from '../../src/transport/ssh-runner.js';
import { sshdAvailable, sshdRunner, startSshd, type Sshd } from '../helpers/sshd.js';
import { startGpuLoad, startLinkLoad } from './drive.js';

const RAILS = ['enp1s0f1np1', 'enP2p1s0f1np1'];
// The lab's clock starts years away from the real one, so a node time that comes from bash's $EPOCHREALTIME is plain.
const LAB_EPOCH = Date.UTC(2031, 0, 1);

// A sample without what legitimately differs between the two paths: when it was taken (controller and node clocks)
// and how long the round trip took.
function comparable(s: NodeSample): unknown {
  const { tMs: _t, controllerMs: _c, ...rest } = s;
  return JSON.parse(JSON.stringify(rest, (k, v) => (typeof v === 'bigint' ? v.toString() : /durationMs|roundTripMs|rttMs/.test(k) ? undefined : v)));
}

describe.skipIf(!sshdAvailable)("the sampler over real sshd + bash + the lab's tools on PATH", { timeout: 120_000 }, () => {
  let lab: SimLab;
  let clock: VirtualClock;
  let tools: LabTools;
  const sshds: Sshd[] = [];
  const runners: SshRunner[] = [];

  beforeAll(async () => {
    clock = new VirtualClock(LAB_EPOCH);
    lab = createLab({ scenario: 'failing-clone', clock, seed: 3 });
    tools = await exposeLabTools(lab, mkdtempSync(join(tmpdir(), 'cq-tools-')));
    for (const node of lab.nodes) {
      const sshd = await startSshd([`SetEnv PATH=${tools.binDir(node)}:/usr/local/bin:/usr/bin:/bin`]);
      sshds.push(sshd);
      runners.push(sshdRunner(sshd, { node }));
    }
  });
  afterAll(async () => {
    for (const r of runners) await r.close();
    for (const s of sshds) await s.stop();
    await tools?.close();
  });

  it('every tick reads the same counters, temperatures and GPU figures as through the simulated runner', async () => {
    const make = (runnerOf: (node: string, i: number) => SshRunner | ReturnType<SimLab['runner']>) =>
      new Sampler({ clock, nodes: lab.nodes.map((name, i) => ({ name, runner: runnerOf(name, i), sampleSet: runSampleSet(RAILS, 1) })) });
    const real = make((_n, i) => runners[i]!);
    const sim = make((n) => lab.runner(n));
    expect(await real.open()).toEqual([]);
    expect(await sim.open()).toEqual([]);
    await startLinkLoad(lab);
    await clock.sleep(600_000);
    await startGpuLoad(lab);
    let compared = 0;
    // Ticks 0..9 read every item at least once (link every 10 ticks, temperatures and GPU every 5), in the loaded soak
    // where the clone's lane 2 at spark-b climbs by the second.
    for (let tick = 0; tick < 10; tick++) {
      await clock.sleep(7_000);
      const before = Date.now();
      const a = await real.tick(tick);
      const b = await sim.tick(tick);
      for (const [i, node] of lab.nodes.entries()) {
        const ra = a.nodes[i]!;
        const rb = b.nodes[i]!;
        expect(ra.error, `${node} tick ${tick}`).toBeUndefined();
        expect(ra.sample, `${node} tick ${tick}: ${JSON.stringify(ra.raw).slice(0, 300)}`).not.toBeNull();
        expect(comparable(ra.sample!)).toEqual(comparable(rb.sample!));
        // The node time came from the real bash ($EPOCHREALTIME), not from the lab's clock.
        expect(Math.abs(ra.sample!.tMs - before)).toBeLessThan(60_000);
        expect(rb.sample!.tMs).toBeGreaterThanOrEqual(LAB_EPOCH);
        compared++;
      }
    }
    expect(compared).toBe(20);
    const last = (await real.tick(10)).nodes[1]!.sample!;
    expect(last.rails[0]!.phy.laneErrors[2]! > 1_000_000n).toBe(true); // the clone's bad lane, read through the real path
    await real.close();
    await sim.close();
  });

  it('the *_phy lines came through the persistent perl filter, from full dumps of the simulated ethtool', async () => {
    const dumps = tools.calls.filter((c) => c.argv[0] === 'ethtool' && c.argv[1] === '-S');
    expect(dumps.length).toBeGreaterThanOrEqual(2 * 2 * 10);
    const shell = await runners[0]!.openShell();
    try {
      const first = await shell.run(cmd.ethtoolStatsPhy(RAILS[0]!));
      expect(first.exitCode).toBe(0);
      const lines = first.stdout.trimEnd().split('\n');
      expect(lines[0]).toBe('NIC statistics:');
      expect(lines.slice(1).every((l) => /^ {5}[a-z0-9_]+_phy: \d+$/.test(l))).toBe(true);
      const full = await lab.runner(lab.nodes[0]!).run(cmd.ethtoolStats(RAILS[0]!));
      expect(full.stdout.split('\n').length).toBeGreaterThan(lines.length * 10); // the filter dropped the rest
      const fn = await shell.run('type __cq_phy');
      expect(fn.stdout).toContain('>&7'); // the fifo to the perl filter, not `| grep`
      const time = await shell.run(cmd.nodeTime());
      expect(time.stdout).toMatch(/^\d{10}\.\d{6}\n$/); // bash's $EPOCHREALTIME: microseconds, no fork of date
    } finally {
      await shell.close();
    }
  });
});
