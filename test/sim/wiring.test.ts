// Scenario fields that model where a fault sits: per-receiver lanes, per-rail throttling, and the cage of each node.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { parseIbdev2netdev, cagesFromLinks } from '../../src/probes/ibdev2netdev.js';
import { parseNetIdentity } from '../../src/probes/net-identity.js';
import { parseIbWriteBw } from '../../src/probes/ib-write-bw.js';
import { parseEthtoolStats } from '../../src/probes/ethtool-stats.js';
import { createLab } from '../../src/sim/lab.js';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { cmd } from '../../src/transport/commands.js';
import { runCli } from '../helpers/cli.js';
import { runnerClock, untilListening } from './drive.js';

type Json = Record<string, unknown>;

// A shipped scenario with some fields changed, written to a temp file (generated, like every scenario).
function variant(base: string, change: (s: Json) => void): string {
  const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, `${base}.json`), 'utf8')) as Json;
  change(s);
  const file = join(mkdtempSync(join(tmpdir(), 'cq-scn-')), `${String(s['name'])}.json`);
  writeFileSync(file, JSON.stringify(s));
  return file;
}

const laneCounters = (text: string) => [0, 1, 2, 3].map((l) => Number(parseEthtoolStats(text).counters[`rx_err_lane_${l}_phy`]));

async function loopbackGbps(lab: ReturnType<typeof createLab>, node: string, rail: 0 | 1, port: number): Promise<number> {
  const dev = rail === 0 ? 'rocep1s0f1' : 'roceP2p1s0f1';
  const ip = lab.scenario.nodes.find((n) => n.name === node)!.railIps[rail];
  const r = lab.runner(node);
  await untilListening(
    await r.start(`stdbuf -oL ib_write_bw -d ${dev} -p ${port} -F --report_gbits -s 65536 -D 10`, { runDir: '/tmp/cq', name: `lbs-${rail}` }),
    runnerClock(r),
  );
  const out = await r.run(`ib_write_bw -d ${dev} -p ${port} -F --report_gbits -s 65536 -D 10 ${ip}`);
  return parseIbWriteBw(out.stdout).rows[0]!.bwAverageGbps;
}

describe('scenario wiring', () => {
  it('lanesByReceiver: a defect in one direction shows at that receiver only', async () => {
    const file = variant('good-qsfp56', (s) => {
      s['name'] = 'one-direction';
      s['lanesByReceiver'] = { 'spark-b': [[[40, 0]], [[40, 0]], [[40, 5000]], [[40, 0]]] };
    });
    const clock = new VirtualClock();
    const lab = createLab({ scenario: file, clock });
    await clock.sleep(100_000);
    const a = laneCounters((await lab.runner('spark-a').run(cmd.ethtoolStats('enp1s0f1np1'))).stdout);
    const b = laneCounters((await lab.runner('spark-b').run(cmd.ethtoolStats('enp1s0f1np1'))).stdout);
    expect(a).toEqual([0, 0, 0, 0]);
    expect(b[0]).toBe(0);
    expect(b[2]).toBeGreaterThan(450_000); // ~5000/s for 100 s
    expect(b[2]).toBeLessThan(550_000);
  });

  it('lanesByReceiver follows its node when a batch renames the nodes', async () => {
    const file = variant('good-qsfp56', (s) => {
      s['name'] = 'one-direction';
      s['lanesByReceiver'] = { 'spark-b': [[[40, 0]], [[40, 0]], [[40, 5000]], [[40, 0]]] };
    });
    const clock = new VirtualClock();
    const lab = createLab({ scenario: file, clock, nodeNames: ['x1', 'x2'] });
    await clock.sleep(10_000);
    expect(laneCounters((await lab.runner('x2').run(cmd.ethtoolStats('enp1s0f1np1'))).stdout)[2]).toBeGreaterThan(0);
    expect(laneCounters((await lab.runner('x1').run(cmd.ethtoolStats('enp1s0f1np1'))).stdout)[2]).toBe(0);
  });

  it('throttledGbps per rail: only the throttled PCIe function is slow', async () => {
    const file = variant('good-qsfp56', (s) => {
      s['name'] = 'rail-1-throttled';
      (s['nodes'] as Json[])[1]!['throttledGbps'] = [null, 13.2];
    });
    const lab = createLab({ scenario: file, clock: new VirtualClock() });
    expect(await loopbackGbps(lab, 'spark-b', 0, 18700)).toBeGreaterThan(100);
    expect(await loopbackGbps(lab, 'spark-b', 1, 18701)).toBeCloseTo(13.2, 0);
    expect(await loopbackGbps(lab, 'spark-a', 1, 18702)).toBeGreaterThan(100);
  });

  it('a node that names its cage has the cable there: ibdev2netdev, addresses and traffic follow it', async () => {
    const file = variant('good-qsfp56', (s) => {
      s['name'] = 'triangle-edge';
      (s['nodes'] as Json[])[0]!['cage'] = 0;
    });
    const lab = createLab({ scenario: file, clock: new VirtualClock() });
    const up = async (node: string) => {
      const ids = parseNetIdentity((await lab.runner(node).run(cmd.netIdentity())).stdout);
      return cagesFromLinks(parseIbdev2netdev((await lab.runner(node).run(cmd.ibdev2netdev())).stdout).links, ids)
        .filter((c) => c.up)
        .map((c) => c.index);
    };
    expect(await up('spark-a')).toEqual([0]);
    expect(await up('spark-b')).toEqual([1]);
    expect((await lab.runner('spark-a').run('ip -o -4 addr show dev enp1s0f0np0')).stdout).toContain('inet 192.168.100.10/24');
    expect((await lab.runner('spark-a').run('ip -o -4 addr show dev enp1s0f1np1')).stdout).toBe('');
    // ib_write_bw from spark-a's cage 0 device to spark-b's cage 1 device crosses the cable.
    const a = lab.runner('spark-a');
    const b = lab.runner('spark-b');
    await untilListening(
      await b.start('stdbuf -oL ib_write_bw -d rocep1s0f1 -p 18800 -F --report_gbits -s 65536 -D 5', { runDir: '/tmp/cq', name: 'srv' }),
      runnerClock(b),
    );
    const ok = await a.run('ib_write_bw -d rocep1s0f0 -p 18800 -F --report_gbits -s 65536 -D 5 192.168.100.11');
    expect(parseIbWriteBw(ok.stdout).rows[0]!.bwAverageGbps).toBeGreaterThan(80);
    // From the uncabled cage nothing connects.
    await untilListening(
      await b.start('stdbuf -oL ib_write_bw -d rocep1s0f1 -p 18801 -F --report_gbits -s 65536 -D 5', { runDir: '/tmp/cq', name: 'srv2' }),
      runnerClock(b),
    );
    expect((await a.run('ib_write_bw -d rocep1s0f1 -p 18801 -F --report_gbits -s 65536 -D 5 192.168.100.11')).exitCode).toBe(1);
  });

  it('a run finds the cable in the cage each node has it (port auto), and --port 1 on a cage-0 node is a preflight ERROR', async () => {
    const file = variant('good-qsfp56', (s) => {
      s['name'] = 'triangle-edge';
      (s['nodes'] as Json[])[0]!['cage'] = 0;
    });
    const out = mkdtempSync(join(tmpdir(), 'cq-tri-'));
    const ok = await runCli(['run', '--sim', file, '--protocol', 'quick', '--out', out, '--json']);
    expect(JSON.parse(ok.out).outcome).toBe('PASS');
    const bad = await runCli(['run', '--sim', file, '--protocol', 'quick', '--port', '1', '--out', out, '--json']);
    expect(JSON.parse(bad.out).reasons[0].rule).toBe('preflight-rails');
  });

  it('interface names that differ from the defaults: the run finds the cabled cage from the node (ports, PCI functions), never from the names', async () => {
    const renamed = [
      [
        { netdev: 'cx7p0a', rdmaDevice: 'mlx5_0' },
        { netdev: 'cx7p0b', rdmaDevice: 'mlx5_2' },
      ],
      [
        { netdev: 'cx7p1a', rdmaDevice: 'mlx5_1' },
        { netdev: 'cx7p1b', rdmaDevice: 'mlx5_3' },
      ],
    ];
    const file = variant('good-qsfp56', (s) => {
      s['name'] = 'renamed-interfaces';
      (s['nodes'] as Json[])[1]!['interfaces'] = renamed;
    });
    const lab = createLab({ scenario: file, clock: new VirtualClock() });
    expect((await lab.runner('spark-b').run(cmd.ibdev2netdev())).stdout).toBe(
      'mlx5_0 port 1 ==> cx7p0a (Down)\nmlx5_1 port 1 ==> cx7p1a (Up)\nmlx5_2 port 1 ==> cx7p0b (Down)\nmlx5_3 port 1 ==> cx7p1b (Up)\n',
    );
    const out = mkdtempSync(join(tmpdir(), 'cq-names-'));
    const r = await runCli(['run', '--sim', file, '--protocol', 'quick', '--out', out, '--json']);
    const res = JSON.parse(r.out) as { outcome: string; runDir: string; reasons: unknown[] };
    expect(res.outcome, JSON.stringify(res.reasons)).toBe('PASS');
    const rec = JSON.parse(readFileSync(join(res.runDir, 'record.json'), 'utf8')) as {
      nodes: { name: string; cage: { index: number; rails: { netdev: string; rdmaDevice: string; pci: string }[] } }[];
    };
    expect(rec.nodes.map((n) => [n.name, n.cage.index, n.cage.rails.map((x) => `${x.netdev}/${x.rdmaDevice}@${x.pci}`)])).toEqual([
      ['spark-a', 1, ['enp1s0f1np1/rocep1s0f1@0000:01:00.1', 'enP2p1s0f1np1/roceP2p1s0f1@0002:01:00.1']],
      ['spark-b', 1, ['cx7p1a/mlx5_1@0000:01:00.1', 'cx7p1b/mlx5_3@0002:01:00.1']],
    ]);
  });

  it('refuses malformed fields with the field named', () => {
    const bad = (change: (s: Json) => void) => () => createLab({ scenario: variant('good-qsfp56', change), clock: new VirtualClock() });
    expect(bad((s) => ((s['nodes'] as Json[])[0]!['cage'] = 2))).toThrow(/nodes\[0\].cage: expected one of 0, 1, got number 2/);
    expect(bad((s) => ((s['nodes'] as Json[])[0]!['throttledGbps'] = [13]))).toThrow(UsageError);
    expect(bad((s) => ((s['nodes'] as Json[])[0]!['throttledGbps'] = [null, -1]))).toThrow(/throttledGbps/);
    expect(bad((s) => (s['lanesByReceiver'] = { 'spark-z': s['lanes'] }))).toThrow(/lanesByReceiver.spark-z: no such node \(nodes: spark-a, spark-b\)/);
    expect(bad((s) => (s['lanesByReceiver'] = { 'spark-a': [(s['lanes'] as unknown[])[0]] }))).toThrow(
      /lanesByReceiver.spark-a: expected at least 2 items, got 1/,
    );
    expect(bad((s) => ((s['nodes'] as Json[])[0]!['interfaces'] = [[{ netdev: 'a', rdmaDevice: 'b' }]]))).toThrow(
      /nodes\[0\].interfaces: expected at least 2 items, got 1/,
    );
    expect(
      bad(
        (s) =>
          ((s['nodes'] as Json[])[0]!['interfaces'] = [
            [
              { netdev: 'a', rdmaDevice: 'x' },
              { netdev: 'a', rdmaDevice: 'y' },
            ],
            [
              { netdev: 'c', rdmaDevice: 'z' },
              { netdev: 'd', rdmaDevice: 'w' },
            ],
          ]),
      ),
    ).toThrow(/distinct/);
    expect(
      bad(
        (s) =>
          ((s['nodes'] as Json[])[0]!['interfaces'] = [
            [
              { netdev: 'a;reboot', rdmaDevice: 'x' },
              { netdev: 'b', rdmaDevice: 'y' },
            ],
            [
              { netdev: 'c', rdmaDevice: 'z' },
              { netdev: 'd', rdmaDevice: 'w' },
            ],
          ]),
      ),
    ).toThrow(/nodes\[0\].interfaces\[0\]\[0\].netdev: expected an interface name \(at most 15 characters\), got "a;reboot"/);
    expect(bad((s) => ((s['nodes'] as Json[])[0]!['speedMbps'] = 50000))).toThrow(/nodes\[0\].speedMbps: expected one of 100000, 200000, got number 50000/);
    expect(bad((s) => (s['burstBits'] = [[1e-4, 0.5]]))).toThrow(/burstBits must be a list of \[pre-FEC BER/);
    expect(
      bad(
        (s) =>
          (s['burstBits'] = [
            [1e-4, 8],
            [1e-6, 2],
          ]),
      ),
    ).toThrow(/burstBits.*increasing/);
    expect(bad((s) => (s['burstBits'] = 8))).toThrow(/burstBits/);
  });
});
