// What a run executes on two Sparks, proven on the simulated lab: the triangle wiring's NCCL ranks, preflight proofs
// (GPU load files, tools on both nodes, mpirun's SSH from node A to node B), waiting for ib_write_bw servers, and
// throughput recorded per direction.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { runCli } from '../helpers/cli.js';
import { endedWith, processState } from '../../src/run/steps/link-load.js';
import { createLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { NCCL_CMD } from '../sim/drive.js';

type Json = Record<string, any>;
const ROOT = join(import.meta.dirname, '..', '..');

function tmpFile(name: string, body: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'cq-spark-')), name);
  writeFileSync(file, typeof body === 'string' ? body : JSON.stringify(body, null, 2));
  return file;
}

// A shipped scenario with some fields changed (generated, like every scenario).
function scenario(base: string, change: (s: Json) => void): string {
  const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, `${base}.json`), 'utf8')) as Json;
  change(s);
  return tmpFile(`${String(s['name'])}.json`, s);
}

// The quick protocol with some fields changed: a lab's own copy, under a name of its own (a built-in's name is kept
// for the texts cablequal shipped).
function quick(change: (p: Json) => void): string {
  const p = JSON.parse(readFileSync(join(ROOT, 'protocols', 'quick.json'), 'utf8')) as Json;
  p.name = 'lab-quick';
  change(p);
  return tmpFile('protocol.json', p);
}

interface Result {
  outcome: string;
  reasons: { rule: string; message: string; node?: string; advice?: string }[];
  runDir: string;
}

async function run(args: string[]): Promise<{ result: Result; journal: Json[]; record: Json; code: number }> {
  const out = mkdtempSync(join(tmpdir(), 'cq-spark-out-'));
  const r = await runCli(['run', ...args, '--out', out, '--json']);
  const result = JSON.parse(r.out) as Result;
  const journal = readFileSync(join(result.runDir, 'journal.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Json);
  const record = JSON.parse(readFileSync(join(result.runDir, 'record.json'), 'utf8')) as Json;
  return { result, journal, record, code: r.code };
}

const commandsOf = (journal: Json[], node?: string) =>
  journal.filter((l) => (l.type === 'raw' || l.type === 'process-start') && (node === undefined || l.node === node)).map((l) => String(l.command));

const TRIANGLE = () => scenario('good-qsfp56', (s) => ((s.name = 'triangle-edge'), (s.nodes[0].cage = 0)));

describe('NCCL on the triangle wiring (--nodes a:0,b:1)', () => {
  it("each rank gets its own node's names: the run passes and records each node's rank on its own cage", async () => {
    const { result, journal, record } = await run(['--sim', TRIANGLE(), '--nodes', 'spark-a:0,spark-b:1', '--protocol', 'quick']);
    expect(result.outcome, JSON.stringify(result.reasons)).toBe('PASS');
    const mpirun = commandsOf(journal, 'spark-a').filter((c) => c.startsWith('mpirun --mca'));
    expect(mpirun).toEqual([
      'mpirun --mca oob_tcp_if_include 192.168.100.0/24' +
        ' -np 1 -H 192.168.100.10:1 -x LD_LIBRARY_PATH -x NCCL_DEBUG=INFO -x NCCL_IB_HCA=rocep1s0f0,roceP2p1s0f0 -x NCCL_SOCKET_IFNAME=enp1s0f0np0 -x OMPI_MCA_btl_tcp_if_include=enp1s0f0np0 -x UCX_NET_DEVICES=enp1s0f0np0 all_reduce_perf -b 256M -e 1G -f 2 -g 1' +
        ' : -np 1 -H 192.168.100.11:1 -x LD_LIBRARY_PATH -x NCCL_DEBUG=INFO -x NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1 -x NCCL_SOCKET_IFNAME=enp1s0f1np1 -x OMPI_MCA_btl_tcp_if_include=enp1s0f1np1 -x UCX_NET_DEVICES=enp1s0f1np1 all_reduce_perf -b 256M -e 1G -f 2 -g 1',
    ]);
    expect(record.benchmarks.nccl.ranks).toEqual([
      { node: 'spark-a', network: 'IB', devices: ['rocep1s0f0', 'roceP2p1s0f0'] },
      { node: 'spark-b', network: 'IB', devices: ['rocep1s0f1', 'roceP2p1s0f1'] },
    ]);
  });

  it('the two ends in different cages are allowed, said once on stderr, and recorded in the record and the certificate', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cq-cages-'));
    const warning =
      'cablequal: warning: the cable\'s two ends are in different cages (spark-a cage 0, spark-b cage 1): allowed and recorded, but NVIDIA\'s connect-two-sparks instructions use the same port on both nodes "to prevent issues with NCCL tests"';
    // Besides the progress lines a log gets at each phase change.
    const warnings = (err: string) => err.split('\n').filter((l) => l.includes('warning'));
    // (a quick run: its document is the set-up check.) Given on the command line, and found so by discovery (--port auto): the same warning, once.
    for (const nodes of [['--nodes', 'spark-a:0,spark-b:1'], []]) {
      const r = await runCli(['run', '--sim', TRIANGLE(), ...nodes, '--protocol', 'quick', '--out', out, '--json']);
      expect(warnings(r.err)).toEqual([warning]);
      const { runDir, outcome } = JSON.parse(r.out) as { runDir: string; outcome: string };
      expect(outcome).toBe('PASS');
      const record = JSON.parse(readFileSync(join(runDir, 'record.json'), 'utf8')) as Json;
      expect(record.cable.differentCages).toEqual([
        { node: 'spark-a', cage: 0 },
        { node: 'spark-b', cage: 1 },
      ]);
      const cert = JSON.parse(readFileSync(join(runDir, 'setup-check.json'), 'utf8')) as Json;
      expect(cert.body.cable.differentCages).toEqual(record.cable.differentCages);
      expect(readFileSync(join(runDir, 'setup-check.html'), 'utf8')).toContain(
        '<tr><th>cages</th><td>the cable&#39;s two ends are in different cages (spark-a cage 0, spark-b cage 1)',
      );
    }
    // The same port at both ends: nothing said, nothing recorded.
    const same = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--out', out, '--json']);
    expect(warnings(same.err)).toEqual([]);
    const { runDir } = JSON.parse(same.out) as { runDir: string };
    expect(JSON.parse(readFileSync(join(runDir, 'record.json'), 'utf8')).cable).not.toHaveProperty('differentCages');
    expect((JSON.parse(readFileSync(join(runDir, 'setup-check.json'), 'utf8')) as Json).body.cable.differentCages).toBeNull();
  });

  it("an older protocol naming node A's devices for both ranks is refused on that wiring, with what to use instead", async () => {
    const older = quick((p) => {
      delete p.commands.ncclRank;
      p.commands.nccl =
        'mpirun -np 2 -H {ipA}:1,{ipB}:1 --mca btl_tcp_if_include {netdevA} -x NCCL_DEBUG=INFO -x NCCL_IB_HCA={hcaList} -x NCCL_SOCKET_IFNAME={netdevA} all_reduce_perf -b 256M -e 1G -f 2 -g 1';
    });
    const { result, code } = await run(['--sim', TRIANGLE(), '--nodes', 'spark-a:0,spark-b:1', '--protocol', older]);
    expect(code).toBe(3);
    expect(result.reasons[0]).toMatchObject({ rule: 'nccl-names', node: 'spark-b' });
    expect(result.reasons[0]!.message).toBe(
      "the protocol's nccl command names spark-a's devices (rocep1s0f0,roceP2p1s0f0, enp1s0f0np0) for both ranks, but spark-b has the cable on rocep1s0f1,roceP2p1s0f1 (enp1s0f1np1)",
    );
  });
});

describe('preflight proves what the run needs on both nodes', () => {
  it("the GPU load's compare kernel missing on one node: ERROR naming the node, the file and what to do", async () => {
    const { result, journal, code } = await run([
      '--sim',
      scenario('good-qsfp56', (s) => (s.nodes[1].missing = ['/usr/local/share/gpu-burn/compare.ptx'])),
      '--protocol',
      'quick',
    ]);
    expect(code).toBe(3);
    expect(result.reasons).toEqual([
      expect.objectContaining({
        rule: 'preflight-gpu-load',
        node: 'spark-b',
        message:
          "spark-b: /usr/local/share/gpu-burn/compare.ptx is not there (gpu_burn's compare kernel): the GPU load would not start and the GPUs would stay idle",
      }),
    ]);
    expect(result.reasons[0]!.advice).toMatch(/docs\/operator-guide\.md section 1/);
    expect(journal.some((l) => l.type === 'process-start')).toBe(false); // nothing was loaded
  });

  it('the one-line gpu_burn of older protocols: ERROR before anything loads, since gpu_burn would not find its kernel', async () => {
    const { result } = await run(['--sim', 'good-qsfp56', '--protocol', quick((p) => (p.commands.gpuLoad = 'gpu_burn {durationS}'))]);
    expect(result.reasons[0]).toMatchObject({ rule: 'preflight-gpu-load' });
    expect(result.reasons[0]!.message).toMatch(/starts gpu_burn in the run's scratch directory, where its compare kernel "compare\.ptx" never is/);
  });

  it('the PyTorch alternative is accepted by the loader; on the simulated nodes (no Docker) preflight names what to install', async () => {
    const pytorch = quick((p) => {
      // The operator guide's form: the loop is a file on the node (protocols/loads/torch-matmul.py), never code in the protocol.
      p.commands.gpuLoad = {
        program: 'docker',
        args: [
          'run',
          '--rm',
          '--gpus',
          'all',
          '-v',
          '/opt/cablequal:/opt/cablequal:ro',
          'nvcr.io/nvidia/pytorch:25.10-py3',
          'python',
          '/opt/cablequal/torch-matmul.py',
          '{durationS}',
        ],
        requires: ['/opt/cablequal/torch-matmul.py'],
        check: ['docker', 'image', 'inspect', 'nvcr.io/nvidia/pytorch:25.10-py3'],
      };
    });
    const { result } = await run(['--sim', 'good-qsfp56', '--protocol', pytorch]);
    expect(result.reasons[0]).toMatchObject({ rule: 'preflight-tools' });
    expect(result.reasons[0]!.message).toMatch(/^spark-[ab]: missing docker \(not on the PATH of a non-interactive SSH session\)$/);
    expect(result.reasons[0]!.advice).toMatch(/docker: install Docker and add the user to the docker group/);
  });

  it('all_reduce_perf missing on node B only: ERROR naming node B and how to install nccl-tests', async () => {
    const { result } = await run(['--sim', scenario('good-qsfp56', (s) => (s.nodes[1].missing = ['all_reduce_perf'])), '--protocol', 'quick']);
    expect(result.reasons[0]).toMatchObject({
      rule: 'preflight-tools',
      node: 'spark-b',
      message: 'spark-b: missing all_reduce_perf (not on the PATH of a non-interactive SSH session)',
    });
    expect(result.reasons[0]!.advice).toMatch(/all_reduce_perf: build nccl-tests with MPI=1/);
  });

  it('node A cannot SSH to node B without a password (as mpirun must): ERROR with the command that failed and the fix', async () => {
    const { result, journal } = await run(['--sim', scenario('good-qsfp56', (s) => (s.nodes[1].sshFromPeer = 'needs-password')), '--protocol', 'quick']);
    expect(result.reasons[0]).toMatchObject({
      rule: 'preflight-ssh-peer',
      node: 'spark-a',
      message:
        'spark-a: cannot reach spark-b at 192.168.100.11 the way mpirun does (ssh -o BatchMode=yes 192.168.100.11): nvidia@192.168.100.11: Permission denied (publickey,password).',
    });
    expect(result.reasons[0]!.advice).toBe(
      'on spark-a, as the same user: ssh-copy-id 192.168.100.11 (or add its key to ~/.ssh/authorized_keys on spark-b), then ssh 192.168.100.11 true once to record its host key',
    );
    expect(commandsOf(journal, 'spark-a')).toContain('ssh -o BatchMode=yes -o ConnectTimeout=10 192.168.100.11 true');
  });
});

describe('ib_write_bw servers are waited for, and throughput is per direction', () => {
  it('the client starts only after its server listens (no fixed head start); each direction of each rail is recorded and graded', async () => {
    const { result, journal, record } = await run(['--sim', 'good-qsfp56', '--protocol', 'quick']);
    expect(result.outcome).toBe('PASS');
    // Every server was read (its banner looked for) before its client started.
    const starts = journal.filter((l) => l.type === 'process-start' && String(l.name).startsWith('bw-'));
    const at = (name: string) => starts.findIndex((l) => l.name === name);
    for (const rail of [0, 1]) {
      expect(at(`bw-server-${rail}`)).toBeLessThan(at(`bw-client-${rail}`));
      expect(at(`bw-server-${rail}-rev`)).toBeLessThan(at(`bw-client-${rail}-rev`));
    }
    expect(starts.find((l) => l.name === 'bw-server-0')!.command).toBe(
      'stdbuf -oL ib_write_bw -d rocep1s0f1 -p 18515 -F --report_gbits -s 65536 --run_infinitely',
    );
    const bw = record.benchmarks.ibWriteBw;
    expect(bw.perDirection.map((d: Json) => [d.from, d.to, d.perRail.map((r: Json) => r.rail)])).toEqual([
      ['spark-a', 'spark-b', [0, 1]],
      ['spark-b', 'spark-a', [0, 1]],
    ]);
    for (const d of bw.perDirection) {
      for (const r of d.perRail) expect(r.medianGbps).toBeCloseTo(92.5, 0);
      expect(d.sumMedianGbps).toBeCloseTo(185.1, 0);
    }
    expect(bw.sumMedianGbps).toBe(Math.min(...bw.perDirection.map((d: Json) => d.sumMedianGbps)));
    const graded = record.measurements.filter((m: Json) => m.rule === 'ib-write-bw-sum');
    expect(graded).toHaveLength(2);
    const texts = result.reasons.filter((r) => r.rule === 'ib-write-bw-sum').map((r) => r.message);
    expect(texts.some((t) => t.includes('spark-a -> spark-b'))).toBe(true);
    expect(texts.some((t) => t.includes('spark-b -> spark-a'))).toBe(true);
  });

  it('a server that exits before it listens: ERROR with its output tail, no client started', async () => {
    const p = quick((x) => (x.commands.loopbackServer = 'ib_write_bw -d rocep9s9f9 -p {tcpPort} -F --report_gbits -s {msgSize} -D {durationS}'));
    const { result, journal } = await run(['--sim', 'good-qsfp56', '--protocol', p]);
    expect(result.reasons[0]).toMatchObject({ rule: 'ib-write-bw-server' });
    expect(result.reasons[0]!.message).toMatch(
      /^spark-[ab]: ib_write_bw server on rocep1s0f1 \(loopback-server-rail-0\) exited before it listened \(exit 1\): Couldn't find device rocep9s9f9 \| Unable to find the Infiniband\/RoCE device$/,
    );
    // No client ran (preflight's `ib_write_bw --version` is no client).
    expect(journal.filter((l) => l.type === 'raw' && String(l.command).startsWith('ib_write_bw -d'))).toEqual([]);
  });

  it('a server that never prints its banner: ERROR after the bounded wait (20 s), no client started', async () => {
    const p = quick((x) => (x.commands.loopbackServer = 'sleep 600'));
    const { result, journal } = await run(['--sim', 'good-qsfp56', '--protocol', p]);
    expect(result.reasons[0]).toMatchObject({ rule: 'ib-write-bw-server' });
    expect(result.reasons[0]!.message).toMatch(
      /^spark-[ab]: ib_write_bw server on rocep1s0f1 \(loopback-server-rail-0\) did not listen within 20 s: no output$/,
    );
    const err = journal.find((l) => l.type === 'setup-error')!;
    expect(err.tS).toBeGreaterThanOrEqual(20);
    expect(err.tS).toBeLessThan(22);
    expect(journal.filter((l) => l.type === 'raw' && String(l.command).startsWith('ib_write_bw -d'))).toEqual([]);
  });
});

describe('telling an ended load process from a running one', () => {
  const proc = (done: Promise<any>) => ({ name: 'p', pid: 1, done, output: async () => ({ stdout: '', stderr: '' }), stop: async () => undefined });
  it('sees a process that has already ended (racing done.then() against a resolved promise never would)', async () => {
    const ended = { command: 'x', stdout: '', stderr: '', exitCode: 1, signal: null, durationMs: 0 };
    expect(await endedWith(proc(Promise.resolve(ended)))).toBe(ended);
    expect(await endedWith(proc(new Promise(() => undefined)))).not.toBe(ended);
    const failed = Promise.reject(new Error('gone'));
    failed.catch(() => undefined);
    expect(await endedWith(proc(failed))).toBeNull();
    // A soak reads the same: ended with its result, running, or unknown when its status could not be read.
    expect(await processState(proc(Promise.resolve(ended)))).toBe(ended);
    expect(await processState(proc(new Promise(() => undefined)))).toBe('running');
    expect(await processState(proc(failed))).toBe('unknown');
  });
});

describe("NCCL's environment in mpirun's non-interactive SSH sessions, proven in preflight", () => {
  it("a node set up as NVIDIA's playbook does (LD_LIBRARY_PATH exported in interactive shells only): ERROR in preflight, before any load, with the fix", async () => {
    const { result, journal, record } = await run(['--sim', scenario('good-qsfp56', (s) => (s.nodes[1].missing = ['libnccl.so.2'])), '--protocol', 'quick']);
    expect(result.outcome).toBe('ERROR');
    expect(result.reasons).toHaveLength(1);
    expect(result.reasons[0]).toMatchObject({
      rule: 'preflight-nccl-env',
      node: 'spark-b',
      message:
        'spark-b: all_reduce_perf (/usr/local/bin/all_reduce_perf) cannot start in a non-interactive SSH session, the way mpirun starts it: libnccl.so.2 => not found',
    });
    expect(result.reasons[0]!.advice).toMatch(/at the top of ~\/\.bashrc, above its "If not running interactively" return, on both nodes/);
    expect(result.reasons[0]!.advice).toContain('`ssh spark-b ldd /usr/local/bin/all_reduce_perf` must find every library');
    expect(commandsOf(journal, 'spark-b')).toEqual(expect.arrayContaining(['mpirun --version', 'ldd /usr/local/bin/all_reduce_perf']));
    expect(journal.some((l) => l.type === 'process-start')).toBe(false); // no throughput step, nothing loaded
    expect(record.phases.map((p: Json) => [p.name, p.status])).toEqual([['preflight', 'error']]);
  });

  it("the simulated mpirun cannot start that node's rank either: the failure the NCCL phase would have met after the throughput step", async () => {
    const lab = createLab({ scenario: scenario('good-qsfp56', (s) => (s.nodes[1].missing = ['libnccl.so.2'])), clock: new VirtualClock() });
    const r = await lab.runner('spark-a').run(NCCL_CMD);
    expect(r.exitCode).toBe(127);
    expect(r.stderr).toMatch(
      /^all_reduce_perf: error while loading shared libraries: libnccl\.so\.2: cannot open shared object file: No such file or directory$/m,
    );
  });

  it('/etc/nccl.conf with NCCL_IB_DISABLE=1 (reported on some DGX OS images): ERROR naming the file and the line to change; the protocol may override it', async () => {
    const conf = scenario('good-qsfp56', (s) => (s.nodes[0].ncclConf = '# site defaults\nNCCL_IB_DISABLE=1\n'));
    const { result } = await run(['--sim', conf, '--protocol', 'quick']);
    expect(result.reasons).toEqual([
      expect.objectContaining({
        rule: 'preflight-nccl-conf',
        node: 'spark-a',
        message: 'spark-a: /etc/nccl.conf sets NCCL_IB_DISABLE=1: NCCL would not use the RDMA devices and would run over TCP sockets (~2 GB/s)',
        advice:
          "change it on the node (sudo sed -i 's/^NCCL_IB_DISABLE=.*/NCCL_IB_DISABLE=0/' /etc/nccl.conf), or let the protocol's ncclRank set -x NCCL_IB_DISABLE=0 for the ranks (docs/operator-guide.md section 1, \"NCCL over non-interactive SSH\")",
      }),
    ]);
    // A protocol that sets the variable for its ranks wins over the file, as NCCL reads it: the run passes over RDMA.
    const override = quick((p) => (p.commands.ncclRank = p.commands.ncclRank.replace('-x NCCL_DEBUG=INFO', '-x NCCL_DEBUG=INFO -x NCCL_IB_DISABLE=0')));
    const ok = await run(['--sim', conf, '--protocol', override]);
    expect(ok.result.outcome, JSON.stringify(ok.result.reasons)).toBe('PASS');
    expect(ok.record.benchmarks.nccl.ranks.map((r: Json) => r.network)).toEqual(['IB', 'IB']);
  });

  it('every rank gets UCX_NET_DEVICES beside NCCL_SOCKET_IFNAME and OMPI_MCA_btl_tcp_if_include; Open MPI is recorded per node', async () => {
    const { result, journal, record } = await run(['--sim', 'good-qsfp56', '--protocol', 'quick']);
    expect(result.outcome).toBe('PASS');
    const mpirun = commandsOf(journal, 'spark-a').find((c) => c.startsWith('mpirun --mca'))!;
    for (const v of ['UCX_NET_DEVICES', 'NCCL_SOCKET_IFNAME', 'OMPI_MCA_btl_tcp_if_include'])
      expect(mpirun.match(new RegExp(`-x ${v}=enp1s0f1np1`, 'g'))).toHaveLength(2);
    expect(record.nodes.map((n: Json) => n.openMpiVersion)).toEqual(['4.1.6', '4.1.6']);
  });
});
