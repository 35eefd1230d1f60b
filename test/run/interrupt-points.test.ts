// Ctrl-C at every interrupt point of the protocol ends ABORTED, never ERROR: a command cut by the abort signal is the
// abort itself (its channel killed, its output cut short), not a transport or setup fault. Each point is hit exactly:
// the abort fires as the phase's command goes out (in flight when the signal comes). On the simulated lab in process
// here; over real SSH against `sim serve` (where a cut command used to surface as ERROR [transport]) in the .system twin.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { expectCleanAbort, interrupt, type Trigger } from './interrupt.js';

// Every phase of the quick protocol, each at the command or load that does its work.
const POINTS: Array<[phase: string, trigger: Trigger]> = [
  ['preflight', { run: /^ibdev2netdev/ }],
  ['identity', { run: /ethtool -m \S+ page 0 offset 0 length 128 hex on$/ }],
  ['loopback', { start: /^loopback-server-/ }],
  ['loopback', { start: /^loopback-client-/ }], // the client is a load the run starts (ctx.runLoad)
  ['ib-write-bw', { start: /^bw-client-/ }],
  ['ib-write-bw', { stop: /^bw-/ }],
  ['nccl', { start: /-mpirun$/ }], // mpirun is a load the run starts (ctx.runLoad)
  ['soak-idle', { start: /^soak-idle-/ }],
  ['soak-idle', { atS: 60 }],
  ['soak-idle', { stop: /^soak-idle-/ }],
  ['soak-loaded', { start: /^soak-loaded-gpu/ }],
  ['soak-loaded', { atS: 150 }],
];

describe('Ctrl-C at every interrupt point: ABORTED, loads stopped (simulated lab)', () => {
  const named = POINTS.map(
    ([phase, t]) =>
      [
        phase,
        t.atS !== undefined
          ? `${t.atS} s into the run`
          : t.run
            ? `command ${t.run.source}`
            : t.start
              ? `start of ${t.start.source}`
              : `stop of ${t.stop!.source}`,
        t,
      ] as const,
  );
  it.each(named)('%s: at %s', async (phase, _at, trigger) => {
    const clock = new VirtualClock(Date.UTC(2026, 5, 1));
    const lab = createLab({ scenario: 'good-qsfp56', seed: 7, faults: [], clock });
    const r = await interrupt({
      clock,
      runners: new Map(lab.nodes.map((n) => [n, lab.runner(n)])),
      nodes: lab.nodes.map((name) => ({ name, host: name, cage: 'auto' as const })),
      protocolPath: join(process.cwd(), 'protocols', 'quick.json'),
      phase,
      trigger,
      simulated: true,
    });
    expectCleanAbort(r, phase);
    for (const n of lab.nodes) expect(lab.processes(n)).toEqual([]);
  });
});
