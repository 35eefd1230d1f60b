// The SimRunner contract: unknown commands fail like missing binaries, processes end and leave nothing, seeds repeat,
// and injected faults behave like the real failures they stand for.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ParseError, UsageError } from '../../src/domain/errors.js';
import { parseEthtoolStats } from '../../src/probes/ethtool-stats.js';
import { createLab, listScenarios } from '../../src/sim/lab.js';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { buildTickScript, splitTickScriptOutput } from '../../src/transport/tick-script.js';
import { cmd } from '../../src/transport/commands.js';
import { TransportError } from '../../src/transport/types.js';
import { newLab, startGpuLoad, startLinkLoad, untilListening } from './drive.js';

describe('SimRunner', () => {
  it('answers an unmodelled command like a missing binary, in run() and start()', async () => {
    const { lab } = newLab('good-qsfp56');
    const r = lab.runner('spark-a');
    expect(r.simulated).toBe(true);
    expect(await r.run('mlxlink -d rocep1s0f1 -c')).toMatchObject({ stdout: '', stderr: 'sh: 1: mlxlink: not found\n', exitCode: 127 });
    const p = await r.start('iperf3 -s', { runDir: '/tmp/cq', name: 'iperf' });
    expect((await p.done).exitCode).toBe(127);
    expect(lab.processes('spark-a')).toEqual([]);
  });

  it('answers a batch script in one round trip, each item framed with its exit code', async () => {
    const { lab } = newLab('good-qsfp56');
    const out = await lab.runner('spark-b').run(
      buildTickScript([
        { id: 'ibdev', command: cmd.ibdev2netdev() },
        { id: 'missing', command: 'nosuchtool' },
        { id: 'ver', command: cmd.ethtoolVersion() },
      ]),
    );
    const items = splitTickScriptOutput(out.stdout);
    expect(items.map((i) => [i.id, i.exitCode])).toEqual([
      ['ibdev', 0],
      ['missing', 127],
      ['ver', 0],
    ]);
    expect(items[2]!.stdout).toBe('ethtool version 6.7\n');
    expect(items[1]!.stdout).toBe('sh: 1: nosuchtool: not found\n');
  });

  it('a client whose server is not listening fails like perftest', async () => {
    const { lab } = newLab('good-qsfp56');
    const res = await lab.runner('spark-a').run('ib_write_bw -d rocep1s0f1 -p 18515 -F --report_gbits -s 65536 -D 10 192.168.100.11');
    expect(res.exitCode).toBe(1);
    expect(res.stderr.split('\n')[0]).toBe(" Couldn't connect to 192.168.100.11:18515");
  });

  it('stop() ends loads and their effect; the process table is empty afterwards and stop twice is safe', async () => {
    const { lab, clock } = newLab('good-qsfp56');
    const procs = [...(await startLinkLoad(lab)), ...(await startGpuLoad(lab))];
    await clock.sleep(120_000);
    expect(
      lab
        .processes('spark-a')
        .map((p) => p.name)
        .sort(),
    ).toEqual(['cli-0', 'cli-1', 'gpu-burn']);
    expect(lab.state('spark-a').gpuUtilPct).toBeGreaterThan(90);
    for (const p of procs) await p.stop();
    for (const p of procs) await p.stop();
    expect(lab.processes('spark-a')).toEqual([]);
    expect(lab.processes('spark-b')).toEqual([]);
    const r = await procs[1]!.done;
    expect(r.signal).toBe('SIGTERM');
    // The counters are registers updated once a second: the loads stopped 0.4 s into one (their servers listened after
    // 0.4 s), so the next update still carries that fraction. From then on no more RDMA frames (kernel-stack frames
    // such as ARP go on).
    await clock.sleep(1000);
    const rdma = async () => {
      const c = parseEthtoolStats((await lab.runner('spark-b').run(cmd.ethtoolStats('enp1s0f1np1'))).stdout).counters;
      return [c['rx_vport_rdma_unicast_bytes'], c['rx_1024_to_1518_bytes_phy']];
    };
    const before = await rdma();
    await clock.sleep(60_000);
    expect(await rdma()).toEqual(before);
    expect(lab.state('spark-a').gpuUtilPct).toBe(0);
  });

  it('run() with a timeout stops a load that would run forever', async () => {
    const { lab, clock } = newLab('good-qsfp56');
    await untilListening(
      await lab
        .runner('spark-b')
        .start('stdbuf -oL ib_write_bw -d rocep1s0f1 -p 18515 -F --report_gbits -s 65536 --run_infinitely', { runDir: '/tmp/cq', name: 's' }),
      clock,
    );
    const res = await lab
      .runner('spark-a')
      .run('ib_write_bw -d rocep1s0f1 -p 18515 -F --report_gbits -s 65536 --run_infinitely 192.168.100.11', { timeoutMs: 12_000 });
    expect(res.timedOut).toBe(true);
    expect(res.stdout.split('\n').filter((l) => l.startsWith(' 65536 '))).toHaveLength(2);
  });
});

describe('determinism', () => {
  const journal = async (seed: number) => {
    const { lab, clock } = newLab('good-qsfp112', { seed });
    await startLinkLoad(lab);
    const out: string[] = [];
    for (let i = 0; i < 5; i++) {
      await clock.sleep(7_000);
      out.push((await lab.runner('spark-a').run(cmd.ethtoolStats('enp1s0f1np1'))).stdout);
    }
    return out;
  };

  it('the same scenario and seed give the same outputs; another seed gives other noise', async () => {
    const a = await journal(7);
    const b = await journal(7);
    const c = await journal(8);
    expect(a).toEqual(b);
    expect(c).not.toEqual(a);
    const lanes = (t: string) => parseEthtoolStats(t).lanes[0]!;
    expect(Number(lanes(c[4]!))).toBeCloseTo(Number(lanes(a[4]!)), -3); // same physics, different noise
  });
});

describe('faults', () => {
  it('ssh-drop@900s: commands reject with TransportError for 20 s, then work again; loads keep running', async () => {
    const { lab, clock } = newLab('good-qsfp56', { faults: ['ssh-drop@900s'] });
    const load = await startLinkLoad(lab);
    await clock.sleep(905_000);
    await expect(lab.runner('spark-a').run(cmd.hostname())).rejects.toBeInstanceOf(TransportError);
    await clock.sleep(20_000);
    expect((await lab.runner('spark-a').run(cmd.hostname())).stdout).toBe('spark-a\n');
    expect(lab.processes('spark-a')).toHaveLength(2);
    for (const p of load) await p.stop();
  });

  it('node-reboot@1200s: spark-b unreachable, link down on spark-a, then counters reset and a new boot id', async () => {
    const { lab, clock } = newLab('good-qsfp56', { faults: ['node-reboot@1200s'] });
    const load = await startLinkLoad(lab);
    const bootId = (await lab.runner('spark-b').run('cat /proc/sys/kernel/random/boot_id')).stdout;
    await clock.sleep(1190_000);
    const b0 = parseEthtoolStats((await lab.runner('spark-b').run(cmd.ethtoolStats('enp1s0f1np1'))).stdout);
    await clock.sleep(20_000);
    await expect(lab.runner('spark-b').run(cmd.ethtoolStats('enp1s0f1np1'))).rejects.toBeInstanceOf(TransportError);
    const a = parseEthtoolStats((await lab.runner('spark-a').run(cmd.ethtoolStats('enp1s0f1np1'))).stdout);
    expect(a.linkDownEvents).toBe(1n);
    expect((await load[1]!.done).exitCode).toBe(1);
    await clock.sleep(120_000);
    const b = parseEthtoolStats((await lab.runner('spark-b').run(cmd.ethtoolStats('enp1s0f1np1'))).stdout);
    expect(b.linkDownEvents).toBe(0n);
    // The port counters restarted at the reboot: only the kernel-stack frames of the 130 s since (no RDMA frames).
    expect(b.counters['rx_1024_to_1518_bytes_phy']).toBe(0n);
    expect(b.counters['rx_bytes_phy']! < b0.counters['rx_bytes_phy']!).toBe(true);
    const after = (await lab.runner('spark-b').run('cat /proc/sys/kernel/random/boot_id')).stdout;
    expect(after).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}\n$/);
    expect(after).not.toBe(bootId);
    expect(lab.processes('spark-b')).toEqual([]);
    expect(lab.state('spark-b').uptimeS).toBeCloseTo(130, 0);
    for (const p of load) await p.stop();
  });

  it('garbage-output@300s: exactly one malformed ethtool -S answer', async () => {
    const { lab, clock } = newLab('good-qsfp56', { faults: ['garbage-output@300s'] });
    const r = lab.runner('spark-a');
    parseEthtoolStats((await r.run(cmd.ethtoolStats('enp1s0f1np1'))).stdout);
    await clock.sleep(300_000);
    const bad = (await r.run(cmd.ethtoolStats('enp1s0f1np1'))).stdout;
    expect(() => parseEthtoolStats(bad)).toThrow(ParseError);
    expect(parseEthtoolStats((await r.run(cmd.ethtoolStats('enp1s0f1np1'))).stdout).lanes).toHaveLength(4);
  });

  it('a bad fault spec is a usage error naming the accepted forms', () => {
    expect(() => createLab({ scenario: 'good-qsfp56', clock: new VirtualClock(), faults: ['meteor@10s'] })).toThrow(/ssh-drop@900s/);
  });
});

describe('scenarios', () => {
  it('lists the shipped scenarios with the outcome a correct run reaches', () => {
    const list = listScenarios();
    expect(Object.fromEntries(list.map((s) => [s.name, s.expectedOutcome]))).toEqual({
      'crc-errors': 'FAIL',
      'dual-cage': 'FAIL',
      'eeprom-mismatch': 'ERROR',
      'failing-clone': 'FAIL',
      'good-qsfp112': 'PASS',
      'good-qsfp56': 'PASS',
      'gpu-not-loaded': 'ERROR',
      'in-service-clone': 'FAIL',
      'in-service-good': 'PASS',
      'link-flap': 'FAIL',
      'marginal-qsfp112': 'MARGINAL',
      'one-direction-runaway': 'FAIL',
      'pair-nccl-swapped': 'ERROR',
      'rare-errors-qsfp56': 'PASS',
      'recovery-qsfp56': 'MARGINAL',
      'single-rail': 'ERROR',
      'steady-lane-qsfp56': 'MARGINAL',
      switch4: 'PASS',
      'throttled-nic': 'ERROR',
      triangle: 'PASS',
      'triangle-miswired': 'ERROR',
      'triangle-one-bad': 'FAIL',
      'uniform-heat-qsfp56': 'FAIL',
      ring4: 'PASS',
    });
    for (const s of list) expect(JSON.parse(readFileSync(join(SCENARIOS_DIR, `${s.name}.json`), 'utf8')).generated).toBe('simulator scenario, not a recording');
  });

  it('loads a scenario from a path; sudo refusal answers like sudo -n', async () => {
    const spec = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8'));
    spec.name = 'no-sudo';
    spec.nodes[0].sudoRefuses = true;
    const file = join(mkdtempSync(join(tmpdir(), 'cq-sim-')), 'no-sudo.json');
    writeFileSync(file, JSON.stringify(spec));
    const lab = createLab({ scenario: file, clock: new VirtualClock() });
    expect(await lab.runner('spark-a').run(cmd.ethtoolModule('enp1s0f1np1'))).toMatchObject({
      stdout: '',
      stderr: 'sudo: a password is required\n',
      exitCode: 1,
    });
    expect((await lab.runner('spark-b').run(cmd.ethtoolModule('enp1s0f1np1'))).exitCode).toBe(0);
  });

  it('an unknown scenario is a usage error: the nearest scenario when one is close, else where they are listed (#34 item 4)', () => {
    expect(() => createLab({ scenario: 'no-such', clock: new VirtualClock() })).toThrow(UsageError);
    expect(() => createLab({ scenario: 'no-such', clock: new VirtualClock() })).toThrow('unknown scenario "no-such" (`cablequal sim scenarios` lists them)');
    expect(() => createLab({ scenario: 'good-qsfp65', clock: new VirtualClock() })).toThrow('unknown scenario "good-qsfp65": did you mean good-qsfp56?');
  });
});
