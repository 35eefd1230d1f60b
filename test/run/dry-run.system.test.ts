// `--dry-run` of the default protocol (a whole virtual run, so system tier) and over SSH against `sim serve`. The
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
import { servedNodeArgs } from '../helpers/served-nodes.js';

const PINNED = join(import.meta.dirname, '..', 'fixtures', 'dry-run', 'spark-burnin-triangle.txt');

// The per-node part of a plan: from the first "== node ==" line on.
const nodeSections = (text: string) => text.slice(text.indexOf('\n== '));

describe('run --dry-run of the default protocol', () => {
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
    const real = await runCli(['run', ...servedNodeArgs(served), '--protocol', 'quick', '--out', out, '--dry-run']);
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
