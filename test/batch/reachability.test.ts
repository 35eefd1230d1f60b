// --auto-detect polling a node that does not answer: said at once, then every minute while it lasts, and when it answers again.
import { describe, expect, it } from 'vitest';
import { unreachableReporter } from '../../src/batch/reachability.js';
import type { EndView } from '../../src/batch/cable-ends.js';

describe('unreachable nodes while polling for a cable', () => {
  it('are said at once, every 60 s while they stay so, and when they answer again', () => {
    let now = 0;
    const said: string[] = [];
    const report = unreachableReporter({ now: () => now, sleep: async () => undefined }, (l) => said.push(l), '[pair 1] ');
    const down: EndView = {
      up: false,
      serial: null,
      partNumber: null,
      note: 'spark-b: cannot connect to 10.0.0.2:22: connect ECONNREFUSED',
      unreachable: true,
    };
    const idle: EndView = { up: false, serial: null, partNumber: null, note: 'no cable EEPROM readable' };
    for (; now <= 130_000; now += 5_000) report(['spark-a', 'spark-b'], [idle, down]);
    report(['spark-a', 'spark-b'], [idle, idle]);
    expect(said).toEqual([
      '[pair 1] spark-b is unreachable (spark-b: cannot connect to 10.0.0.2:22: connect ECONNREFUSED); still polling for the cable',
      '[pair 1] spark-b is unreachable (spark-b: cannot connect to 10.0.0.2:22: connect ECONNREFUSED); still polling for the cable',
      '[pair 1] spark-b is unreachable (spark-b: cannot connect to 10.0.0.2:22: connect ECONNREFUSED); still polling for the cable',
      '[pair 1] spark-b answers again',
    ]);
  });
});

describe('runBatch --auto-detect with a node down', () => {
  it('keeps polling, says which node is unreachable and why every minute, then gives the cable up as before', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { VirtualClock } = await import('../../src/sim/virtual-clock.js');
    const { initialState, runBatch } = await import('../../src/batch/campaign.js');
    const { loadProtocol } = await import('../../src/protocol/index.js');
    const { TransportError } = await import('../../src/transport/types.js');
    const clock = new VirtualClock(0);
    const runner = (node: string, down: boolean) => ({
      node,
      simulated: false,
      run: async (command: string) => {
        if (down) throw new TransportError(node, 'cannot connect to 10.0.0.2:22: connect ECONNREFUSED');
        return { command, stdout: '', stderr: 'ibdev2netdev: not found', exitCode: 127, signal: null, durationMs: 0 };
      },
      start: () => Promise.reject(new Error('not used')),
      openShell: () => Promise.reject(new Error('not used')),
      close: async () => undefined,
    });
    const said: { t: number; line: string }[] = [];
    const manifest = [{ label: 'c1', line: 2 }];
    const state = await runBatch({
      dir: mkdtempSync(join(tmpdir(), 'cq-reach-')),
      clock,
      signal: new AbortController().signal,
      state: initialState({ manifestFile: 'box.csv', manifest, pairs: ['spark-a:1,spark-b:1'], protocol: 'quick', golden: null }),
      manifest,
      benches: [
        {
          nodes: [
            { name: 'spark-a', host: 'spark-a', cage: 1 },
            { name: 'spark-b', host: 'spark-b', cage: 1 },
          ],
          runners: new Map([
            ['spark-a', runner('spark-a', false)],
            ['spark-b', runner('spark-b', true)],
          ]),
        },
      ],
      protocol: loadProtocol(join(process.cwd(), 'protocols', 'quick.json')),
      autoDetect: true,
      operator: { say: (line) => said.push({ t: clock.now(), line }), ask: async () => 'continue', stopRequested: () => false },
      runCable: () => Promise.reject(new Error('no cable ever comes up')),
      reboot: 'manual',
      benchLog: () => undefined,
      pollMs: 5_000,
      swapTimeoutMs: 150_000,
    });
    const down = said.filter((s) => s.line.includes('unreachable'));
    expect(down.map((s) => s.t)).toEqual([0, 60_000, 120_000]);
    expect(down[0]!.line).toBe('[pair 1] spark-b is unreachable (spark-b: cannot connect to 10.0.0.2:22: connect ECONNREFUSED); still polling for the cable');
    expect(state.cables[0]).toMatchObject({ status: 'skipped', reason: 'no cable swap detected in time' });
  });
});
