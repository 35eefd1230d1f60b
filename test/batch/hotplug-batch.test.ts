// A batch on real Sparks meets the hot-plug trap after every swap (docs/formats.md §0): the cable comes up at ~13 Gb/s per rail
// until both nodes reboot with it in. These tests show the trap on the simulated lab and how the batch gets out of it:
// reboot (automatic, or by the operator when told), wait for new boot ids, the links and RS-FEC, loopback on both
// rails, then qualify; bounded waits ending in ERRORs that say what to do. Everything simulated is generated.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { SharedLock } from '../../src/batch/mutex.js';
import { settleBench, type BenchLogEntry, type SettleDeps } from '../../src/batch/settle.js';
import type { Operator } from '../../src/batch/operator.js';
import { loadProtocol } from '../../src/protocol/index.js';
import { runQualification } from '../../src/run/qualify.js';
import { persistentTickSource } from '../../src/run/tick-source.js';
import { createLab, type SimLab } from '../../src/sim/lab.js';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { runCli } from '../helpers/cli.js';
import { csvObjects } from '../helpers/csv.js';

const QUICK = join(import.meta.dirname, '..', '..', 'protocols', 'quick.json');

// A lab whose cable was just swapped: good-qsfp56 unplugged from the running nodes, another one plugged in.
async function swappedLab(): Promise<{ lab: SimLab; clock: VirtualClock }> {
  const clock = new VirtualClock(Date.UTC(2026, 5, 1));
  const lab = createLab({ scenario: 'good-qsfp56', seed: 7, clock });
  await clock.sleep(30_000);
  lab.unplug();
  await clock.sleep(30_000);
  lab.plug('good-qsfp56', { serial: 'SIMSWAP02' });
  await clock.sleep(15_000);
  return { lab, clock };
}

function settleDeps(clock: VirtualClock, over: Partial<SettleDeps> = {}): SettleDeps & { said: string[]; logged: BenchLogEntry[] } {
  const said: string[] = [];
  const logged: BenchLogEntry[] = [];
  const operator: Operator = { say: (l) => said.push(l), ask: async () => 'continue', stopRequested: () => false };
  return {
    clock,
    signal: new AbortController().signal,
    operator,
    mode: 'auto',
    protocol: loadProtocol(QUICK),
    pollMs: 5000,
    rebootWaitMs: 15 * 60_000,
    linkWaitMs: 5 * 60_000,
    maxReboots: 2,
    log: (e) => logged.push(e),
    ...over,
    said,
    logged,
  };
}

const bench = (lab: SimLab) => ({
  pair: 0,
  nodes: lab.nodes.map((name) => ({ name, host: name, cage: 1 })),
  runners: new Map(lab.nodes.map((n) => [n, lab.runner(n)])),
});

describe('the hot-plug trap in a batch', () => {
  it('without a reboot, a cable swapped into running nodes ends ERROR loopback-floor (every rail of both nodes ~13 Gb/s), never a verdict', async () => {
    const { lab, clock } = await swappedLab();
    const { record } = await runQualification({
      clock,
      runners: new Map(lab.nodes.map((n) => [n, lab.runner(n)])),
      nodes: lab.nodes.map((name) => ({ name, host: name, cage: 'auto' as const })),
      protocol: loadProtocol(QUICK),
      protocolText: readFileSync(QUICK, 'utf8'),
      outDir: mkdtempSync(join(tmpdir(), 'cq-trap-')),
      label: 'trap',
      runId: 'run1',
      log: pino({ level: 'silent' }),
      signal: new AbortController().signal,
      simulated: true,
      makeTickSource: (ns, intervalS) => persistentTickSource(ns, clock, { intervalS }),
    });
    expect(record.outcome).toBe('ERROR');
    expect(record.reasons.map((r) => r.rule)).toEqual(['loopback-floor']);
    expect(record.reasons[0]!.message).toMatch(/^NIC throttled: reboot both nodes with the cable attached/);
    expect(record.benchmarks.loopback.map((l) => Math.round(l.gbps))).toEqual([13, 13, 13, 13]);
  });

  it('a swap the batch did not see is caught by the loopback check and cleared by one reboot of both nodes; everything is logged', async () => {
    const { lab, clock } = await swappedLab();
    const ids = lab.nodes.map((n) => lab.state(n).bootId);
    const deps = settleDeps(clock);
    const r = await settleBench(bench(lab), false, deps);
    expect(r).toMatchObject({ ok: true, reboots: 1 });
    if (!r.ok || 'aborted' in r) throw new Error('unreachable');
    expect(r.loopback.map((x) => `${x.node}/${x.rail}`)).toEqual(['spark-a/0', 'spark-a/1', 'spark-b/0', 'spark-b/1']);
    for (const x of r.loopback) expect(x.gbps).toBeGreaterThan(100);
    expect(lab.nodes.map((n) => lab.state(n).bootId).every((id, i) => id !== ids[i])).toBe(true);
    expect(deps.logged.filter((e) => e.step === 'reboot').map((e) => [e.node, e.command, e.exitCode])).toEqual([
      ['spark-a', 'sudo -n systemctl reboot --no-block', 0],
      ['spark-b', 'sudo -n systemctl reboot --no-block', 0],
    ]);
    expect(deps.said[0]).toMatch(/^\[pair 1\] rebooting spark-a and spark-b: the nodes are not at full speed: NIC throttled/);
    // The loopback outputs are kept (nothing collected is lost).
    expect(deps.logged.some((e) => e.step.startsWith('loopback-client:') && /BW average/.test(e.stdout ?? ''))).toBe(true);
  });

  it('manual mode: the operator is told, nobody reboots: ERROR reboot-timeout naming the node, after the bounded wait', async () => {
    const { lab, clock } = await swappedLab();
    const deps = settleDeps(clock, { mode: 'manual', rebootWaitMs: 10 * 60_000 });
    const t0 = clock.now();
    const r = await settleBench(bench(lab), true, deps);
    expect(r).toMatchObject({
      ok: false,
      reboots: 0,
      reason: { rule: 'reboot-timeout', node: 'spark-a', message: 'spark-a: answers with the same boot id: it did not reboot within 10 min' },
    });
    expect(clock.now() - t0).toBeGreaterThanOrEqual(10 * 60_000);
    expect(clock.now() - t0).toBeLessThan(11 * 60_000);
    expect(deps.said[0]).toMatch(/^\[pair 1\] reboot spark-a and spark-b now, with the cable in \(e\.g\. `sudo systemctl reboot --no-block` on each\)/);
  });

  it('a reboot the node refuses (no sudoers line) is ERROR reboot-refused with the line to add', async () => {
    const clock = new VirtualClock();
    const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8')) as { name: string; nodes: Record<string, unknown>[] };
    s.name = 'no-reboot-sudo';
    s.nodes[1]!['sudoCommands'] = ['ethtool'];
    const file = join(mkdtempSync(join(tmpdir(), 'cq-nosudo-')), 's.json');
    writeFileSync(file, JSON.stringify(s));
    const lab = createLab({ scenario: file, clock });
    const r = await settleBench(bench(lab), true, settleDeps(clock));
    expect(r).toMatchObject({
      ok: false,
      reason: { rule: 'reboot-refused', node: 'spark-b', advice: expect.stringContaining('nvidia ALL=(root) NOPASSWD: /usr/bin/systemctl reboot --no-block') },
    });
  });
});

describe('cablequal batch with reboots (simulated lab)', () => {
  it('--reboot manual: told after the swap, the scripted operator reboots, the batch waits for both boot ids; verdicts as the cables deserve', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-manual-'));
    writeFileSync(join(cwd, 'box.csv'), 'label\nm1\nm2\n');
    const r = await runCli(
      ['batch', '--manifest', 'box.csv', '--sim', 'good-qsfp56=SIMMAN01,failing-clone', '--protocol', 'quick', '--reboot', 'manual', '--out', 'b'],
      { cwd },
    );
    expect(r.code, r.err).toBe(1);
    expect(r.err).toContain('[pair 1] reboot spark-a and spark-b now, with the cable in');
    expect(r.err).toMatch(/\[pair 1\] spark-a cage 1 and spark-b cage 1 ready after 1 reboot\(s\): loopback spark-a rail 0 1\d\d\.\d/);
    const rows = csvObjects(readFileSync(join(cwd, 'b', 'batch.csv'), 'utf8'));
    expect(rows.map((x) => [x.label, x.outcome])).toEqual([
      ['m1', 'PASS'],
      ['m2', 'FAIL'],
    ]);
    const log = readFileSync(join(cwd, 'b', 'bench.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as BenchLogEntry);
    expect(log.some((e) => e.step === 'reboot')).toBe(false); // the batch ran no reboot itself
    expect(log.filter((e) => e.step === 'rebooted')).toHaveLength(1);
  }, 120_000);

  it('a bench that stays slow after two reboots: the cable row is ERROR (bench not measurable), untested and pending for --resume, the pair stops, exit 3', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-slow-bench-'));
    const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8')) as { name: string; nodes: Record<string, unknown>[] };
    s.name = 'slow-rail';
    s.nodes[1]!['throttledGbps'] = [null, 52]; // spark-b's second function at Gen5 x2: no reboot helps
    writeFileSync(join(cwd, 'slow.json'), JSON.stringify(s));
    writeFileSync(join(cwd, 'box.csv'), 'label\nk1\nk2\n');
    const r = await runCli(
      ['batch', '--manifest', 'box.csv', '--sim', `${join(cwd, 'slow.json')},${join(cwd, 'slow.json')}`, '--protocol', 'quick', '--out', 'b'],
      { cwd },
    );
    expect(r.code, r.err).toBe(3);
    const rows = csvObjects(readFileSync(join(cwd, 'b', 'batch.csv'), 'utf8'));
    expect(rows.map((x) => [x.label, x.outcome])).toEqual([
      ['k1', 'ERROR'],
      ['k2', ''],
    ]);
    expect(rows[0]!.reasons).toMatch(
      /^bench not measurable: loopback-floor: after 2 reboot\(s\) of spark-a and spark-b: a PCIe function is slow: .*spark-b rail 1 \(roceP2p1s0f1\) 52\.0 Gb\/s/,
    );
    expect(rows[0]!.reasons).toContain('check the PCIe link of spark-b 0002:01:00.1');
    expect(rows[0]!.run_id).toBe(''); // no run: the cable was not judged
    const state = JSON.parse(readFileSync(join(cwd, 'b', 'batch-state.json'), 'utf8')) as { cables: { status: string; attempts: number }[] };
    expect(state.cables.map((c) => [c.status, c.attempts])).toEqual([
      ['pending', 0],
      ['pending', 0],
    ]);
  }, 120_000);

  it('automatic reboots need the sudoers line: a batch that would stop at the first swap is refused up front (exit 2)', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-nosudo-batch-'));
    const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8')) as { name: string; nodes: Record<string, unknown>[] };
    s.name = 'no-reboot-sudo';
    s.nodes[0]!['sudoCommands'] = ['ethtool'];
    writeFileSync(join(cwd, 'nosudo.json'), JSON.stringify(s));
    writeFileSync(join(cwd, 'box.csv'), 'label\nx1\nx2\n');
    const r = await runCli(
      ['batch', '--manifest', 'box.csv', '--sim', `${join(cwd, 'nosudo.json')},${join(cwd, 'nosudo.json')}`, '--protocol', 'quick', '--out', 'b'],
      { cwd },
    );
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toContain('batch: spark-a does not allow `sudo -n systemctl reboot --no-block`');
    expect(r.err).toContain('add `nvidia ALL=(root) NOPASSWD: /usr/bin/systemctl reboot --no-block` with visudo on the node, or pass --reboot manual');
  }, 60_000);
});

describe('a node in two pairs', () => {
  it('its reboot waits until no cable run of either pair is using it (every run is measured on nodes that stay up)', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-shared-reboot-'));
    writeFileSync(join(cwd, 'box.csv'), 'label\ns1\ns2\ns3\ns4\n');
    // s1 (a FAIL decided early) frees pair 1 while pair 2 still runs s2 on b: the reboot for s3 must wait for it.
    const r = await runCli(
      [
        'batch',
        '--manifest',
        'box.csv',
        '--sim',
        'failing-clone,good-qsfp56=SH2,good-qsfp112=SH3,good-qsfp112=SH4',
        '--pair',
        'a:0,b:1',
        '--pair',
        'b:0,c:1',
        '--protocol',
        'quick',
        '--out',
        'b',
      ],
      { cwd },
    );
    expect(r.code, r.err).toBe(1);
    // Each pair's cable goes from cage 0 to cage 1: said once per pair, not once per cable.
    expect(
      r.err
        .split('\n')
        .filter((l) => l.includes('warning:'))
        .map((l) => l.replace(/: allowed and recorded.*$/, ''))
        .sort(),
    ).toEqual([
      "[pair 1] warning: the cable's two ends are in different cages (a cage 0, b cage 1)",
      "[pair 2] warning: the cable's two ends are in different cages (b cage 0, c cage 1)",
    ]);
    const state = JSON.parse(readFileSync(join(cwd, 'b', 'batch-state.json'), 'utf8')) as { cables: { label: string; outcome: string; runDir: string }[] };
    expect(state.cables.map((c) => [c.label, c.outcome])).toEqual([
      ['s1', 'FAIL'],
      ['s2', 'PASS'],
      ['s3', 'PASS'],
      ['s4', 'PASS'],
    ]);
    // Each run's span on the lab's clock (bench.jsonl's): its journal's clockStartedAt, plus its first and last tS.
    const runs = state.cables.map((c) => {
      const lines = readFileSync(join(cwd, 'b', c.runDir, 'journal.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { tS: number; clockStartedAt?: string; nodes?: { name: string }[] });
      const t0 = Date.parse(lines[0]!.clockStartedAt!);
      const at = (tS: number) => new Date(t0 + tS * 1000).toISOString();
      return { startedAt: at(0), endedAt: at(lines.at(-1)!.tS), nodes: lines[0]!.nodes! };
    });
    const reboots = readFileSync(join(cwd, 'b', 'bench.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { at: string; node?: string; step: string })
      .filter((e) => e.step === 'reboot');
    expect(reboots.map((e) => e.node).sort()).toEqual(['a', 'b', 'b', 'c']); // s3 on a+b, s4 on b+c
    for (const e of reboots) {
      for (const run of runs.filter((x) => x.nodes.some((n) => n.name === e.node))) {
        expect(e.at < run.startedAt || e.at > run.endedAt, `reboot of ${e.node} at ${e.at} during a run ${run.startedAt}..${run.endedAt}`).toBe(true);
      }
    }
  }, 180_000);
});

describe('SharedLock (a reboot needs its nodes alone; cable runs share them)', () => {
  it('shared holders run together, an exclusive one waits for them and goes before shared requests that came after it', async () => {
    const l = new SharedLock();
    const order: string[] = [];
    const r1 = await l.acquire(false);
    const r2 = await l.acquire(false);
    const ex = l.acquire(true).then((r) => (order.push('reboot'), r));
    const late = l.acquire(false).then((r) => (order.push('late run'), r));
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    r1();
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    r2();
    (await ex)();
    (await late)();
    expect(order).toEqual(['reboot', 'late run']);
  });
});
