// Ctrl-C with a command in flight over real SSH against `sim serve` ends ABORTED, never ERROR [transport] (a cut
// command used to surface so): the abort kills the command's channel, and that is the abort itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRunners } from '../../src/cli/transports.js';
import type { NodeSpec } from '../../src/domain/node.js';
import { serveSimLab, type SimServe } from '../../src/sim/serve.js';
import { systemClock } from '../../src/domain/clock.js';
import { expectCleanAbort, interrupt, type Trigger } from './interrupt.js';

// Over SSH the abort kills the command's channel: the call rejects, and that must read as the abort.
describe('Ctrl-C with the load in flight over SSH (sim serve): ABORTED, never ERROR [transport]', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cq-int-ssh-'));
  let lab: SimServe;
  beforeAll(async () => {
    lab = await serveSimLab({ scenario: 'good-qsfp56', speed: 1, seed: 7, dir: join(dir, 'keys') });
  });
  afterAll(async () => {
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['loopback', { start: /^loopback-client-/ }], // the client is a load the run starts (ctx.runLoad)
    ['nccl', { start: /-mpirun$/ }], // mpirun is a load the run starts (ctx.runLoad)
  ] as Array<[string, Trigger]>)('%s: the load stopped on its way', async (phase, trigger) => {
    const nodes: NodeSpec[] = lab.nodes.map((n) => ({ name: n.name, host: n.name, cage: 'auto' }));
    const runners = await makeRunners(nodes, { acceptNewHostKeys: false, env: {}, sshConfig: lab.files.config });
    try {
      // The abort comes a moment after the load went out: it runs on the node, and is then stopped.
      const r = await interrupt({
        clock: systemClock,
        runners,
        nodes,
        protocolPath: join(process.cwd(), 'test', 'fixtures', 'protocols', 'hangup-smoke.json'),
        phase,
        trigger,
        simulated: false,
        delayMs: 300,
      });
      expectCleanAbort(r, phase);
      const aborted = r.journal.find((l) => l.type === 'aborted')!;
      // The loopback client and mpirun are loads the run starts (ctx.runLoad), stopped through cq-stop on the abort:
      // a command is cut only when the abort finds one on its way (the load's start itself), kept then as evidence.
      if (aborted.cut !== undefined) expect(aborted.cut).toMatch(/cut short by the abort signal/);
      // The load had started (the abort came while it ran).
      expect(r.journal.some((l) => l.type === 'process-start' && trigger.start!.test(String((l as { name?: unknown }).name)))).toBe(true);
      // The killed channel's command ends on the node within moments (as the Ctrl-C test over OpenSSH allows, 5 s).
      for (let i = 0; i < 50 && lab.lab.nodes.some((n) => lab.lab.processes(n).length > 0); i++) await new Promise((res) => setTimeout(res, 100));
      for (const n of lab.lab.nodes) expect(lab.lab.processes(n), `${n} at ${lab.lab.timeS()} s`).toEqual([]);
    } finally {
      await Promise.all([...runners.values()].map((r) => r.close()));
    }
  });
});
