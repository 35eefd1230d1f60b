import { describe, expect, it } from 'vitest';
import { loadProtocol } from '../../src/protocol/index.js';
import { createLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { findCables } from '../../src/watch/cables.js';
import type { WatchEvent } from '../../src/watch/events.js';
import { serviceSettingsOf } from '../../src/watch/settings.js';
import { watchCables, type ReceiverFigures } from '../../src/watch/watcher.js';
import { cmd } from '../../src/transport/commands.js';
import type { CommandRunner } from '../../src/transport/types.js';
import { sample } from '../helpers/samples.js';

const settings = serviceSettingsOf(loadProtocol('protocols/spark-burnin.json'));

// Watch a simulated pair for `hours` of virtual time; every event and tick.
async function watchSim(scenario: string, hours: number, faults: string[] = []) {
  const clock = new VirtualClock(Date.UTC(2026, 0, 1));
  const lab = createLab({ scenario, clock, faults });
  const nodes = lab.nodes.map((name) => ({ name, runner: lab.runner(name) }));
  const { links, problems } = await findCables(nodes);
  const events: WatchEvent[] = [];
  const ticks: ReceiverFigures[][] = [];
  await watchCables({ nodes, links, clock, settings, forS: hours * 3600, sinks: { event: (e) => events.push(e), tick: (_s, _a, f) => ticks.push(f) } });
  return { lab, links, problems, events, ticks };
}

describe('watch on the simulated lab in service', () => {
  it('in-service-clone: the cable found by its serial at both ends; a lane alarm naming serial, node and lane before the first drop; the drop snapshot taken while down', async () => {
    const { links, problems, events } = await watchSim('test/fixtures/scenarios/service-clone-early.json', 1.2);
    expect(problems).toEqual([]);
    expect(links.map((l) => [l.id, l.serial, l.matchedBy])).toEqual([['spark-a:1--spark-b:1', 'ONT2403150288', 'serial']]);
    const firstDrop = events.findIndex((e) => e.type === 'link-down');
    expect(firstDrop).toBeGreaterThan(0);
    const lane = events.slice(0, firstDrop).find((e) => e.type === 'alarm' && e.lane !== null);
    expect(lane).toMatchObject({
      type: 'alarm',
      rule: 'lane-ratio',
      grade: 'MARGINAL',
      serial: 'ONT2403150288',
      node: 'spark-b',
      cage: 1,
      lane: 2,
      unit: 'x',
      limit: 100,
    });
    // minutes of warning at least (the seed's cable gave none that a tool read)
    expect(events[firstDrop]!.atS - lane!.atS).toBeGreaterThan(600);
    const down = events[firstDrop]!;
    if (down.type !== 'link-down') throw new Error('not a link-down');
    expect(down.snapshot.ends.map((e) => [e.node, e.link.detected])).toEqual([
      ['spark-a', false],
      ['spark-b', false],
    ]);
    for (const e of down.snapshot.ends) {
      expect(e.link.raw).toMatch(/\tLink detected: no \(Bad signal integrity, Large number of physical errors\)/);
      expect(e.link.reason).toBe('Bad signal integrity, Large number of physical errors');
      expect(e.stats.raw).toMatch(/rx_err_lane_2_phy: \d+/);
      expect(e.module.raw).toMatch(/Vendor SN\s+: ONT2403150288/);
    }
    const up = events.find((e) => e.type === 'link-up');
    expect(up).toMatchObject({ resets: 1 });
    expect(up!.type === 'link-up' && up!.downS).toBeGreaterThanOrEqual(40);
  });

  it('in-service-good: status lines, no alarm, no drop', async () => {
    const { events, ticks } = await watchSim('in-service-good', 1.2);
    const kinds = new Set(events.map((e) => e.type));
    expect([...kinds].sort()).toEqual(['start', 'status']);
    expect(events.filter((e) => e.type === 'status')).toHaveLength(3); // at 0 and 1 h, and at the end
    // every tick's interval counted the faint noise on every lane of both receivers, never a negative count
    expect(ticks.length).toBe(432);
    const figures = ticks.flat();
    expect(figures.every((f) => f.laneErrors.length === 4 && f.laneErrors.every((n) => n >= 0))).toBe(true);
    expect(figures.reduce((n, f) => n + f.laneErrors[0]!, 0)).toBeGreaterThan(1000);
  });

  it('a node reboot: the node lost and back, its counters counted from zero, the drop said to be the node’s and no link-down alarm', async () => {
    const { events } = await watchSim('in-service-good', 1, ['node-reboot@1200s+120s:spark-a']);
    const seq = events.filter((e) => e.type !== 'status').map((e) => `${e.type}${'node' in e ? ` ${e.node}` : ''}`);
    expect(seq).toContain('node-lost spark-a');
    expect(seq).toContain('node-back spark-a');
    expect(seq).toContain('link-down spark-b');
    expect(seq).toContain('counter-reset spark-a');
    expect(events.some((e) => e.type === 'alarm')).toBe(false);
    const reset = events.find((e) => e.type === 'counter-reset');
    expect(reset).toMatchObject({ rebooted: true });
  });

  it('two cables between the same nodes (dual-cage): both found by serial, each receiver of each cage counted on its own', async () => {
    const { links, events, ticks } = await watchSim('dual-cage', 0.25);
    expect(links.map((l) => [l.id, l.serial])).toEqual([
      ['spark-a:0--spark-b:0', 'MT2412VS01562'],
      ['spark-a:1--spark-b:1', 'ONT2403150203'],
    ]);
    expect(events.filter((e) => e.type === 'status').map((e) => e.type === 'status' && `${e.cable} ${e.link}`)).toEqual([
      'spark-a:0--spark-b:0 up',
      'spark-a:1--spark-b:1 up',
      'spark-a:0--spark-b:0 up',
      'spark-a:1--spark-b:1 up',
    ]);
    const last = ticks.at(-1)!;
    expect(last.map((f) => `${f.node}:${f.cage}`).sort()).toEqual(['spark-a:0', 'spark-a:1', 'spark-b:0', 'spark-b:1']);
    // the good cable counts nothing; the clone's lane 2 at spark-b (its bad direction) far more than at spark-a
    const sum = (node: string, cage: number, lane: number) =>
      ticks
        .flat()
        .filter((f) => f.node === node && f.cage === cage)
        .reduce((n, f) => n + f.laneErrors[lane]!, 0);
    expect(sum('spark-b', 0, 2)).toBe(0);
    expect(sum('spark-b', 1, 2)).toBeGreaterThan(50 * sum('spark-a', 1, 2)); // ~72x with idle GPUs (failing-clone: <100x)
  });

  it("an active cable's module temperature (ethtool -m) is in each status line; a passive DAC's is null", async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const lab = createLab({ scenario: 'in-service-good', clock });
    // spark-b answers `ethtool -m` with a real optic's decode (samples/ethtool-module/qsfp28-sr4-...: 30.56 degrees C)
    const optic = sample('ethtool-module/qsfp28-sr4-optic-mellanox-mma1b00-cumulus-dom-thresholds.txt');
    const wrap = (name: string): CommandRunner => {
      const r = lab.runner(name);
      if (name !== 'spark-b') return r;
      return new Proxy(r, {
        get: (t, k) =>
          k === 'run'
            ? async (command: string, o?: Parameters<CommandRunner['run']>[1]) =>
                command === cmd.ethtoolModule('enp1s0f1np1')
                  ? { command, stdout: optic, stderr: '', exitCode: 0, signal: null, durationMs: 1 }
                  : t.run(command, o)
            : (t as unknown as Record<string | symbol, unknown>)[k],
      });
    };
    const nodes = lab.nodes.map((name) => ({ name, runner: wrap(name) }));
    const { links } = await findCables(nodes);
    const events: WatchEvent[] = [];
    await watchCables({ nodes, links, clock, settings, forS: 600, sinks: { event: (e) => events.push(e) } });
    const temps = events.flatMap((e) => (e.type === 'status' ? [[e.node, e.moduleTempC]] : []));
    expect(temps.length).toBe(2);
    for (const [node, t] of temps) expect(t).toBe(node === 'spark-b' ? 30.56 : null);
  });

  it('counters cleared under the watch (mlxlink --pc): a counter-reset event, counted from zero, never a negative count, no alarm', async () => {
    const { events, ticks } = await watchSim('in-service-good', 0.5, ['counter-reset@900s:spark-b']);
    const resets = events.filter((e) => e.type === 'counter-reset');
    expect(resets).toMatchObject([{ node: 'spark-b', cage: 1, rebooted: false }]);
    expect(events.some((e) => e.type === 'alarm' || e.type === 'link-down')).toBe(false);
    const b = ticks.flat().filter((f) => f.node === 'spark-b');
    expect(b.every((f) => f.laneErrors.every((n) => n >= 0 && n < 100))).toBe(true);
  });

  it('a node that cannot be reached at the start is a problem of the map; the watch goes on without its cables', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const lab = createLab({ scenario: 'in-service-good', clock, faults: ['ssh-drop@0s+600s:spark-b'] });
    const nodes = lab.nodes.map((name) => ({ name, runner: lab.runner(name) }));
    const { links, problems } = await findCables(nodes);
    expect(links).toEqual([]);
    expect(problems.map((p) => p.kind)).toEqual(['unreachable', 'unmatched-end']);
    expect(problems[0]!.message).toMatch(/^spark-b: not reachable \(/);
  });

  it("the cables of a triangle are the cabling map's three, each by its serial; a switch cluster's ports are said, not watched", async () => {
    const find = async (scenario: string) => {
      const lab = createLab({ scenario, clock: new VirtualClock(Date.UTC(2026, 0, 1)) });
      return findCables(lab.nodes.map((name) => ({ name, runner: lab.runner(name) })));
    };
    const triangle = await find('triangle');
    expect(triangle.problems).toEqual([]);
    expect(triangle.links.map((l) => [l.id, l.matchedBy])).toEqual([
      ['spark-a:0--spark-b:1', 'serial'],
      ['spark-a:1--spark-c:0', 'serial'],
      ['spark-b:0--spark-c:1', 'serial'],
    ]);
    expect(new Set(triangle.links.map((l) => l.serial)).size).toBe(3);
    const sw = await find('switch4');
    expect(sw.links).toEqual([]);
    expect(sw.problems.map((p) => p.kind)).toEqual(['switch-port', 'switch-port', 'switch-port', 'switch-port']);
    expect(sw.problems[0]!.message).toMatch(/^spark-a:\d is cabled to switch .+ port /);
  });

  it('a cable whose link is down when the watch starts is said with its fix, not watched', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const lab = createLab({ scenario: 'in-service-good', clock, faults: ['link-drop@1s+600s'] });
    await clock.sleep(5_000);
    const { links, problems } = await findCables(lab.nodes.map((name) => ({ name, runner: lab.runner(name) })));
    expect(links).toEqual([]);
    expect(problems).toMatchObject([{ kind: 'link-down', link: 'spark-a:1--spark-b:1', fix: expect.stringMatching(/^reseat the cable/) }]);
  });
});
