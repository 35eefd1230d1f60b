// `--dry-run`: every command a run executes on each node, in order, with nothing run but read-only discovery. The
// pinned list below is the default protocol on the triangle wiring: a change to any command line shows up here.
// To accept an intended change, regenerate it and review the diff:
//   npx tsx -e "import('./src/cli/main.ts').then(m=>m.main(['run','--sim','good-qsfp56','--nodes','spark-a:0,spark-b:1','--dry-run']))" > test/fixtures/dry-run/spark-burnin-triangle.txt
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serveSimLab, type SimServe } from '../../src/sim/serve.js';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { runCli } from '../helpers/cli.js';

const PINNED = join(import.meta.dirname, '..', 'fixtures', 'dry-run', 'spark-burnin-triangle.txt');

// The per-node part of a plan: from the first "== node ==" line on.
const nodeSections = (text: string) => text.slice(text.indexOf('\n== '));

describe('run --dry-run', () => {
  it('pins the full command list of the default protocol on a two-node triangle wiring (simulated nodes)', { timeout: 120_000 }, async () => {
    const r = await runCli(['run', '--sim', 'good-qsfp56', '--nodes', 'spark-a:0,spark-b:1', '--dry-run']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toBe(readFileSync(PINNED, 'utf8'));
    // What a reviewer looks for first: sudo is marked, each node's rank names its own cage, the GPU load, the SSH check.
    expect(r.out).toContain('  [sudo] sudo -n ethtool -m enp1s0f0np0 page 0 offset 0 length 128 hex on\n');
    expect(r.out).toContain('-x NCCL_IB_HCA=rocep1s0f0,roceP2p1s0f0 -x NCCL_SOCKET_IFNAME=enp1s0f0np0');
    expect(r.out).toContain('-x NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1 -x NCCL_SOCKET_IFNAME=enp1s0f1np1');
    expect(r.out).toContain('  start soak-loaded-gpu: gpu_burn -m 16384 -c /usr/local/share/gpu-burn/compare.ptx 3660\n');
    expect(r.out).toContain('  ssh -o BatchMode=yes -o ConnectTimeout=10 192.168.100.11 true\n');
    expect(r.out.match(/^ {2}(?!\[sudo\] )sudo /gm)).toBeNull(); // every sudo command carries the mark
  });

  it('lists, per node and in order, every command an actual run journals (its journal is a subsequence of the plan)', { timeout: 120_000 }, async () => {
    const plan = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--dry-run']);
    const out = mkdtempSync(join(tmpdir(), 'cq-dry-'));
    const run = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--out', out, '--json']);
    const runDir = (JSON.parse(run.out) as { runDir: string }).runDir;
    const journal = readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const node of ['spark-a', 'spark-b']) {
      const section = plan.out.slice(plan.out.indexOf(`== ${node} ==`)).split('\n== ')[0]!;
      const planned = section
        .split('\n')
        .filter((l) => l.startsWith('  '))
        .map((l) => l.replace(/^ {2}(\[sudo\] )?(start [a-z0-9-]+: )?/, ''));
      const ran = journal.filter((l) => (l.type === 'raw' || l.type === 'process-start') && l.node === node).map((l) => String(l.command));
      expect(ran.length).toBeGreaterThan(20);
      let at = 0;
      for (const c of ran) {
        const found = planned.indexOf(c, at);
        expect(found, `${node}: "${c}" not in the plan after position ${at}`).toBeGreaterThanOrEqual(0);
        at = found + 1;
      }
    }
  });

  it("batch --dry-run prints each pair's plan and writes nothing", { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-dry-batch-'));
    const manifest = join(dir, 'box.csv');
    writeFileSync(manifest, 'label\ncable-1\n');
    const r = await runCli([
      'batch',
      '--manifest',
      manifest,
      '--sim',
      'good-qsfp56',
      '--pair',
      'spark-a:0,spark-b:1',
      '--protocol',
      'quick',
      '--out',
      join(dir, 'batch'),
      '--dry-run',
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^\[pair 1\] spark-a:0,spark-b:1: every cable's run executes these commands\. Between cables the batch polls ibdev2netdev and sudo -n ethtool -m on both nodes for the swap, then \(--reboot auto\) reads .*runs \[sudo\] sudo -n systemctl reboot --no-block on both/,
    );
    expect(r.out).toContain('nodes spark-a (cage 0), spark-b (cage 1)');
    expect(r.out).toContain('-x NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1 -x NCCL_SOCKET_IFNAME=enp1s0f1np1');
    expect(existsSync(join(dir, 'batch'))).toBe(false);
  });
});

// #22 item 11: a dry run refuses what the run would refuse, stops on the first Ctrl-C, and samples each soak only for
// its first PLAN_SOAK_S seconds (the commands it lists are the same: the pinned plan above).
describe('run --dry-run validates like a run and stops on Ctrl-C', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cq-dry-opts-'));
  writeFileSync(join(dir, 'afile'), 'x\n');

  it.each([
    [['--sim-fault', 'bogus'], /^cablequal: bad fault "bogus": expected ssh-drop@900s/],
    [['--sim-fault', 'ssh-drop@10s:spark-z'], /^cablequal: fault "ssh-drop@10s:spark-z": no simulated node "spark-z"/],
    [['--speed', '5'], /^cablequal: --speed: --sim runs in virtual time already/],
    [['--label', ' '], /^cablequal: --label: empty/],
    [['--out', 'afile/reports'], /^cablequal: --out: .*\/afile is a file, not a directory$/],
    [['--protocol', '/dev/zero'], /^cablequal: \/dev\/zero: a device, not a regular file$/],
  ])('--sim good-qsfp56 %j: exit 2, one line', async (extra, message) => {
    const r = await runCli(['run', '--sim', 'good-qsfp56', '--dry-run', ...extra], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.trimEnd().split('\n')).toHaveLength(1);
    expect(r.err.trimEnd()).toMatch(message);
  });

  it('--nodes with --sim-fault or --seed: exit 2 before any node is reached', async () => {
    const r = await runCli(['run', '--nodes', 'no-such-a,no-such-b', '--seed', '3', '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('cablequal: run: --sim-fault and --seed apply to the simulated lab only (--sim)\n');
  });

  it('a valid fault is accepted and the plan is the same as without it; --out is checked but not created', async () => {
    const out = join(dir, 'not-made', 'reports');
    const plain = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--dry-run']);
    const faulted = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--sim-fault', 'ssh-drop@30s', '--out', out, '--dry-run']);
    expect(faulted.code).toBe(0);
    expect(faulted.out).toBe(plain.out);
    expect(existsSync(join(dir, 'not-made'))).toBe(false);
  });

  it('Ctrl-C (an aborted signal): exit 130, no plan, nothing run', async () => {
    const { main } = await import('../../src/cli/main.js');
    const ac = new AbortController();
    let out = '';
    let err = '';
    ac.abort('interrupted by SIGINT');
    const code = await main(['run', '--sim', 'good-qsfp56', '--dry-run'], {
      stdout: (t) => void (out += t),
      stderr: (t) => void (err += t),
      readStdin: async () => '',
      isTTY: false,
      cwd: dir,
      env: {},
      signal: ac.signal,
      interruptedBy: () => 'SIGINT',
    });
    expect(code).toBe(130);
    expect(out).toBe('');
    expect(err).toBe('cablequal: dry run interrupted: no plan printed, nothing was run on any node\n');
  });
});

describe('run --nodes --dry-run on nodes reached over SSH (`sim serve`)', () => {
  let served: SimServe | null = null;
  afterAll(async () => {
    await served?.close();
  });

  it("runs only read-only discovery there, and plans with the nodes' own cages and addresses", { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-dry-ssh-'));
    // A triangle edge with other addresses than the simulated default: the plan must carry these.
    const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8')) as Record<string, any>;
    s.name = 'triangle-edge';
    s.nodes[0].cage = 0;
    s.nodes[0].railIps = ['10.10.0.1', '10.10.1.1'];
    s.nodes[1].railIps = ['10.10.0.2', '10.10.1.2'];
    const scenario = join(dir, 'triangle-edge.json');
    writeFileSync(scenario, JSON.stringify(s));
    served = await serveSimLab({ scenario, dir: join(dir, 'keys'), speed: 1 });
    const out = join(dir, 'reports');
    const real = await runCli([
      'run',
      '--nodes',
      served.nodes.map((n) => n.name).join(','),
      '--ssh-config',
      served.files.config,
      '--protocol',
      'quick',
      '--out',
      out,
      '--dry-run',
    ]);
    expect(real.err).toBe('');
    expect(real.code).toBe(0);
    expect(real.out).toContain('nodes spark-a (cage 0), spark-b (cage 1)');
    expect(real.out).toContain("Only read-only discovery (ibdev2netdev, the netdevs' sysfs identity, ip -o -4 addr) ran on the nodes");
    expect(real.out).toContain('mpirun --mca oob_tcp_if_include 10.10.0.0/24 -np 1 -H 10.10.0.1:1');
    // The node lock and stale-load cleanup a real run adds around the protocol are listed too.
    expect(real.out).toMatch(/^setup:\n {2}mkdir -p \/tmp\/cablequal \|\| exit 1; if mkdir \/tmp\/cablequal\/lock/m);
    // The same commands as a dry run on the simulated nodes of the same wiring, lock lines aside.
    const sim = await runCli(['run', '--sim', scenario, '--nodes', 'spark-a:0,spark-b:1', '--protocol', 'quick', '--dry-run']);
    const strip = (t: string) =>
      nodeSections(t)
        .replace(/^setup:\n(?: {2}.*\n)+/gm, '')
        .replace(/^end:\n(?: {2}.*\n)+/gm, '');
    expect(strip(real.out)).toBe(strip(sim.out));
    // Nothing was loaded on the nodes and no report was written.
    expect(served.lab.events.filter((e) => e.kind !== 'link-up')).toEqual([]);
    for (const n of served.nodes) expect(served.lab.processes(n.name)).toEqual([]);
    expect(existsSync(out)).toBe(false);
  });
});
