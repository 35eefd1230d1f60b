// A batch whose controller is one of the two Sparks (a documented setup) must never reboot the machine it runs on:
// every swap would kill it. It finds that node (local runner, or the controller's own boot id), reboots the other
// node, asks the operator to reboot this one and to --resume, and on --resume goes on only once it has rebooted.
// Everything simulated is generated.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { initialState, runBatch, type BatchDeps } from '../../src/batch/campaign.js';
import { controllerNodes } from '../../src/batch/controller.js';
import type { Operator } from '../../src/batch/operator.js';
import { settleBench, type BenchLogEntry } from '../../src/batch/settle.js';
import { loadState } from '../../src/batch/state.js';
import type { RunRecord } from '../../src/domain/record.js';
import { loadProtocol } from '../../src/protocol/index.js';
import { createLab, type SimLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { LocalRunner } from '../../src/transport/local-runner.js';
import { batchCommand } from '../../src/cli/batch-command.js';
import type { CliIo } from '../../src/cli/io.js';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';

const QUICK = loadProtocol(join(import.meta.dirname, '..', '..', 'protocols', 'quick.json'));

function newLab(): { lab: SimLab; clock: VirtualClock } {
  const clock = new VirtualClock(Date.UTC(2026, 5, 1));
  return { lab: createLab({ scenario: 'good-qsfp56', seed: 3, clock }), clock };
}

const benchOf = (lab: SimLab) => ({
  nodes: [
    { name: 'spark-a', host: 'spark-a', cage: 1 },
    { name: 'spark-b', host: 'spark-b', cage: 1 },
  ] as [{ name: string; host: string; cage: number }, { name: string; host: string; cage: number }],
  runners: new Map(lab.nodes.map((n) => [n, lab.runner(n)])),
});

function recorder(): { operator: Operator; said: string[] } {
  const said: string[] = [];
  return { said, operator: { say: (l) => said.push(l), ask: async () => 'continue', stopRequested: () => false } };
}

describe('finding the node that is the controller', () => {
  it("by its boot id (the controller's own) or by the local runner; a controller that is neither node finds none", async () => {
    const { lab } = newLab();
    const bench = benchOf(lab);
    expect(await controllerNodes([bench], lab.state('spark-a').bootId)).toEqual(new Set(['spark-a']));
    expect(await controllerNodes([bench], '00000000-0000-4000-a000-000000000000')).toEqual(new Set());
    expect(await controllerNodes([bench], null)).toEqual(new Set());
    const local = { ...bench, runners: new Map([...bench.runners, ['spark-b', new LocalRunner({ node: 'spark-b' })]]) };
    expect(await controllerNodes([local], null)).toEqual(new Set(['spark-b']));
  });
});

describe('settling a bench whose node is the controller', () => {
  it('reboots only the other node, waits for it, then hands the controller node to the operator (auto and manual)', async () => {
    for (const mode of ['auto', 'manual'] as const) {
      const { lab, clock } = newLab();
      const ids = lab.nodes.map((n) => lab.state(n).bootId);
      const { operator, said } = recorder();
      const logged: BenchLogEntry[] = [];
      const r = await settleBench({ pair: 0, ...benchOf(lab), controller: 'spark-a' }, true, {
        clock,
        signal: new AbortController().signal,
        operator,
        mode,
        protocol: QUICK,
        pollMs: 5000,
        rebootWaitMs: 15 * 60_000,
        linkWaitMs: 5 * 60_000,
        maxReboots: 2,
        log: (e) => logged.push(e),
        // Manual: the operator reboots what they are told to.
        onRebootRequest: (nodes) => nodes.forEach((n) => lab.reboot(n)),
      });
      expect(r, mode).toEqual({ ok: false, reboots: 1, controllerReboot: { node: 'spark-a', bootId: ids[0] } });
      expect(lab.state('spark-a').bootId, mode).toBe(ids[0]); // never rebooted
      expect(lab.state('spark-b').bootId, mode).not.toBe(ids[1]);
      expect(logged.filter((e) => e.step === 'reboot').map((e) => e.node)).toEqual(mode === 'auto' ? ['spark-b'] : []);
      expect(said[0]).toMatch(
        mode === 'auto'
          ? /^\[pair 1\] rebooting spark-b: the cable was plugged into running nodes .*; spark-a is the machine this batch runs on: the batch does not reboot it$/
          : /^\[pair 1\] reboot spark-b now, with the cable in \(e\.g\. `sudo systemctl reboot --no-block`\): .* Waiting up to 15 min for it to come back; spark-a is the machine this batch runs on/,
      );
    }
  });
});

describe('a batch run from one of its two nodes', () => {
  it('stops for the operator to reboot the controller node, and on --resume qualifies the cable only once it has rebooted', async () => {
    const { lab, clock } = newLab();
    const dir = mkdtempSync(join(tmpdir(), 'cq-controller-'));
    const manifest = [
      { label: 'c1', line: 2 },
      { label: 'c2', line: 3 },
    ];
    const ran: string[] = [];
    const { operator, said } = recorder();
    const log: BenchLogEntry[] = [];
    const deps = (state: BatchDeps['state']): BatchDeps => ({
      dir,
      clock,
      signal: new AbortController().signal,
      state,
      manifest,
      benches: [benchOf(lab)],
      protocol: QUICK,
      autoDetect: true,
      operator,
      reboot: 'auto',
      benchLog: (e) => log.push(e),
      controllerNodes: new Set(['spark-a']),
      // The scripted operator swaps in c2 (c1 is in from the start), once: asked again on --resume, it is in.
      onPlugRequest: (_pair, cable) => {
        if (cable.label !== 'c2' || lab.cable.cable.eeprom.vendorSn === 'SIMCTRL02') return;
        void (async () => {
          await clock.sleep(20_000);
          lab.unplug();
          await clock.sleep(40_000);
          lab.plug('good-qsfp56', { serial: 'SIMCTRL02' });
        })();
      },
      // The qualification itself is not what this test is about: a PASS record (of a quick set-up check) per cable run.
      runCable: async (req) => {
        ran.push(req.label);
        return {
          record: { outcome: 'PASS', kind: 'setup-check', reasons: [], phases: [], benchmarks: {} } as unknown as RunRecord,
          runDir: join(dir, 'runs', req.label),
          report: null,
        };
      },
    });
    const bootA = lab.state('spark-a').bootId;

    // First run: c1 qualifies; c2 is swapped in, spark-b rebooted, then the batch stops for spark-a.
    let s = await runBatch(deps(initialState({ manifestFile: 'box.csv', manifest, pairs: ['spark-a:1,spark-b:1'], protocol: 'quick', golden: null })));
    expect(ran).toEqual(['c1']);
    expect(s.cables.map((c) => [c.label, c.status])).toEqual([
      ['c1', 'done'],
      ['c2', 'pending'],
    ]);
    expect(s.cables[1]!.controllerReboot).toEqual({ node: 'spark-a', bootId: bootA });
    expect(s.cables[1]!.reason).toBe('waiting for spark-a (the machine this batch runs on) to be rebooted with the cable in, then --resume');
    expect(said).toContain(
      '[pair 1] c2: spark-a is the machine this batch runs on, so the batch does not reboot it: once this batch has ended, reboot spark-a with the cable in (sudo systemctl reboot), then run the same command with --resume',
    );
    expect(loadState(dir)!.cables[1]!.controllerReboot).toEqual({ node: 'spark-a', bootId: bootA }); // kept for --resume

    // --resume before the operator rebooted spark-a: said again, nothing run.
    s = await runBatch(deps(loadState(dir)!));
    expect(ran).toEqual(['c1']);
    expect(s.cables[1]!.controllerReboot).toEqual({ node: 'spark-a', bootId: bootA });
    expect(said[said.length - 1]).toBe(
      '[pair 1] spark-a has not rebooted since the batch asked (same boot id): reboot it with c2 in (sudo systemctl reboot), then run the same command with --resume',
    );

    // The operator reboots spark-a with c2 in; --resume checks the bench (both rebooted with the cable in) and qualifies c2.
    lab.reboot('spark-a');
    await clock.sleep(180_000);
    s = await runBatch(deps(loadState(dir)!));
    expect(ran).toEqual(['c1', 'c2']);
    expect(s.cables.map((c) => [c.label, c.status, c.serial])).toEqual([
      ['c1', 'done', 'MT2412VS01157'],
      ['c2', 'done', 'SIMCTRL02'],
    ]);
    expect(s.cables[1]!.controllerReboot).toBeUndefined();
    // The batch ran its reboot command on spark-b only, ever.
    expect(log.filter((e) => e.step === 'reboot').map((e) => e.node)).toEqual(['spark-b']);
    expect(JSON.parse(readFileSync(join(dir, 'batch-state.json'), 'utf8')).cables[1].status).toBe('done');
  });
});

describe('cablequal batch from one of its nodes (--sim, the controller boot id injected)', () => {
  it('says so up front, needs no reboot sudoers line on the controller node, stops for its reboot (exit 4) and says what to do last', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-controller-cli-'));
    writeFileSync(join(cwd, 'box.csv'), 'label\nk1\nk2\n');
    // The controller node has no sudoers line for the reboot: the batch never runs it there, so it is not asked for.
    const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8')) as { name: string; nodes: Record<string, unknown>[] };
    s.name = 'controller-node';
    s.nodes[0]!['sudoCommands'] = ['ethtool'];
    writeFileSync(join(cwd, 'ctl.json'), JSON.stringify(s));
    // The simulated boot ids follow the seed: spark-a's, as the batch's own lab will give it.
    const twin = createLab({ scenario: join(cwd, 'ctl.json'), seed: 11, clock: new VirtualClock() });
    let err = '';
    let out = '';
    const io: CliIo = { stdout: (x) => void (out += x), stderr: (x) => void (err += x), readStdin: async () => '', isTTY: false, cwd, env: {} };
    const code = await batchCommand(
      {
        manifest: 'box.csv',
        sim: `${join(cwd, 'ctl.json')},good-qsfp56=SIMCTL02`,
        seed: 11,
        protocol: 'quick',
        autoDetect: true,
        resume: false,
        out: 'b',
        controllerBootId: twin.state('spark-a').bootId,
      },
      io,
      new AbortController().signal,
    );
    expect(code, err).toBe(4); // a cable left untested
    expect(err).toContain(
      '[pair 1] spark-a is the machine this batch runs on: after each swap the batch reboots spark-b and asks you to reboot spark-a, then to run the same command with --resume',
    );
    expect(err.trimEnd().split('\n').pop()).toBe(
      'cablequal batch: now reboot spark-a with the cable in (sudo systemctl reboot), then run the same command with --resume',
    );
    expect(out).toMatch(/^k2 +not tested +SIMCTL02 +waiting for spark-a \(the machine this batch runs on\) to be rebooted with the cable in, then --resume$/m);
    const bench = readFileSync(join(cwd, 'b', 'bench.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as BenchLogEntry);
    expect(bench.filter((e) => e.step === 'reboot').map((e) => e.node)).toEqual(['spark-b']);
  }, 120_000);
});
