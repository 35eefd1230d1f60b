// The simulated lab answers the changed command lines the way the real tools do: gpu_burn and its compare kernel,
// perftest servers that listen only after they print their banner, what each perftest end prints, mpirun's app
// contexts with each rank judged by its own environment, and ssh from one node to the other.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseIbWriteBw } from '../../src/probes/ib-write-bw.js';
import { parseNccl } from '../../src/probes/nccl.js';
import { createLab } from '../../src/sim/lab.js';
import { parseGpuBurn } from '../../src/sim/programs-load.js';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { cmd } from '../../src/transport/commands.js';
import { GPU_BURN, newLab, untilListening } from './drive.js';

type Json = Record<string, any>;

function variant(base: string, change: (s: Json) => void): string {
  const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, `${base}.json`), 'utf8')) as Json;
  change(s);
  const file = join(mkdtempSync(join(tmpdir(), 'cq-real-')), `${String(s['name'])}.json`);
  writeFileSync(file, JSON.stringify(s));
  return file;
}

describe('simulated gpu_burn', () => {
  it('parses its command line the way gpu_burn-drv.cpp does', () => {
    expect(parseGpuBurn(['gpu_burn', '-m', '16384', '-c', '/usr/local/share/gpu-burn/compare.ptx', '3660'])).toMatchObject({
      useMb: 16384,
      kernel: '/usr/local/share/gpu-burn/compare.ptx',
      runLength: 3660,
      help: false,
      list: false,
    });
    expect(parseGpuBurn(['gpu_burn', '-m50%', '60'])).toMatchObject({ usePct: 50, useMb: null, runLength: 60, kernel: 'compare.ptx' });
    // The run length is read after the options: given first, the word after the options is taken (atoi of "16384").
    expect(parseGpuBurn(['gpu_burn', '60', '-m', '16384'])).toMatchObject({ runLength: 16384 });
    expect(parseGpuBurn(['gpu_burn', '-m', 'lots', '60']).syntaxError).toBe('Syntax error near -m\n');
    expect(parseGpuBurn(['gpu_burn', '-c', '/opt/gpu-burn-lab/compare.ptx', '60'])).toMatchObject({ list: true });
    expect(parseGpuBurn(['gpu_burn', '-c', '/opt/gpu-dev/compare.ptx', '60'])).toMatchObject({ doubles: true });
    expect(parseGpuBurn(['gpu_burn'])).toMatchObject({ runLength: 10, runLengthGiven: false });
  });

  it('without a reachable compare kernel it fails to start like the real one and the GPU stays idle', async () => {
    const { lab, clock } = newLab('good-qsfp56');
    // Started in the run's scratch directory with no -c, as protocols before the program form did.
    const p = await lab.runner('spark-a').start('gpu_burn 600', { runDir: '/tmp/cablequal/run-1', name: 'gpu' });
    const r = await p.done;
    expect(r.exitCode).toBe(123); // ENOMEDIUM: "No clients are alive"
    expect(r.stderr).toBe(
      "Couldn't init a GPU test: Error in couldn't find compare kernel: compare.ptx (gpu_burn-drv.cpp:240): named symbol not found\nread[0] error 0\n\nNo clients are alive!  Aborting\n",
    );
    expect(r.stdout.split('\n').slice(0, 2)).toEqual(['Using compare file: compare.ptx', 'Burning for 600 seconds.']);
    await clock.sleep(30_000);
    expect(lab.state('spark-a').gpuUtilPct).toBe(0);
  });

  it('finds its kernel by -c, or as compare.ptx in the directory it is started in, and then loads the GPU', async () => {
    const { lab, clock } = newLab('good-qsfp56');
    const a = await lab.runner('spark-a').start(GPU_BURN(600), { runDir: '/tmp/cablequal/run-1', name: 'gpu' });
    const b = await lab.runner('spark-b').start('cd /usr/local/share/gpu-burn && gpu_burn -m 50% 600', { runDir: '/tmp/cablequal/run-1', name: 'gpu' });
    await clock.sleep(30_000);
    expect(lab.state('spark-a').gpuUtilPct).toBeGreaterThan(90);
    expect(lab.state('spark-b').gpuUtilPct).toBeGreaterThan(90);
    expect((await a.output()).stdout).toContain(
      '(118950 MB available, using 16384 MB of it), using FLOATS\nResults are 268435456 bytes each, thus performing 62 iterations\n',
    );
    expect((await b.output()).stdout).toContain('using 59475 MB of it');
    const c = await lab.runner('spark-b').start('cd /no/such/dir && gpu_burn 600', { runDir: '/tmp/cablequal/run-1', name: 'gpu2' });
    expect(await c.done).toMatchObject({ exitCode: 2, stderr: "sh: 1: cd: can't cd to /no/such/dir\n" });
    for (const p of [a, b]) await p.stop();
  });

  it('a node without the kernel (scenario node missing) fails even with -c', async () => {
    const file = variant('good-qsfp56', (s) => (s.nodes[1].missing = ['/usr/local/share/gpu-burn/compare.ptx']));
    const lab = createLab({ scenario: file, clock: new VirtualClock() });
    expect((await lab.runner('spark-b').run(cmd.readable('/usr/local/share/gpu-burn/compare.ptx'))).exitCode).toBe(1);
    expect((await lab.runner('spark-a').run(cmd.readable('/usr/local/share/gpu-burn/compare.ptx'))).exitCode).toBe(0);
    const p = await lab.runner('spark-b').start(GPU_BURN(60), { runDir: '/tmp/cq', name: 'gpu' });
    expect((await p.done).exitCode).toBe(123);
  });
});

describe('simulated ib_write_bw', () => {
  it('a server listens only once it has printed its banner: a client started at once is refused, as on a real node', async () => {
    const { lab, clock } = newLab('good-qsfp56');
    const srv = await lab
      .runner('spark-b')
      .start('stdbuf -oL ib_write_bw -d rocep1s0f1 -p 18515 -F --report_gbits -s 65536 -D 5', { runDir: '/tmp/cq', name: 's' });
    expect((await srv.output()).stdout).not.toContain('Waiting for client');
    const early = await lab.runner('spark-a').run('ib_write_bw -d rocep1s0f1 -p 18515 -F --report_gbits -s 65536 -D 5 192.168.100.11');
    expect(early.exitCode).toBe(1);
    expect(early.stderr.split('\n')[0]).toBe(" Couldn't connect to 192.168.100.11:18515");
    await untilListening(srv, clock);
    expect((await srv.output()).stdout).toContain('* Waiting for client to connect... *');
    const ok = await lab.runner('spark-a').run('ib_write_bw -d rocep1s0f1 -p 18515 -F --report_gbits -s 65536 -D 5 192.168.100.11');
    expect(parseIbWriteBw(ok.stdout).rows[0]!.bwAverageGbps).toBeGreaterThan(90);
  });

  it('--run_infinitely: a unidirectional server prints no rows (it only waits for its client); with -b both ends print their own', async () => {
    const { lab, clock } = newLab('good-qsfp56');
    const uni = await untilListening(
      await lab
        .runner('spark-b')
        .start('stdbuf -oL ib_write_bw -d rocep1s0f1 -p 18515 -F --report_gbits -s 65536 --run_infinitely', { runDir: '/tmp/cq', name: 'u' }),
      clock,
    );
    const bi = await untilListening(
      await lab
        .runner('spark-b')
        .start('stdbuf -oL ib_write_bw -d roceP2p1s0f1 -p 18516 -F --report_gbits -s 65536 -b --run_infinitely', { runDir: '/tmp/cq', name: 'b' }),
      clock,
    );
    const c1 = await lab
      .runner('spark-a')
      .start('ib_write_bw -d rocep1s0f1 -p 18515 -F --report_gbits -s 65536 --run_infinitely 192.168.100.11', { runDir: '/tmp/cq', name: 'c1' });
    const c2 = await lab
      .runner('spark-a')
      .start('ib_write_bw -d roceP2p1s0f1 -p 18516 -F --report_gbits -s 65536 -b --run_infinitely 192.168.101.11', { runDir: '/tmp/cq', name: 'c2' });
    await clock.sleep(30_000);
    const serverOut = (await uni.output()).stdout;
    expect(serverOut).toContain('Waiting for client to connect');
    expect(() => parseIbWriteBw(serverOut)).toThrow(/no result row/);
    const client = parseIbWriteBw((await c1.output()).stdout);
    expect(client.rows.length).toBe(6);
    expect(client.rows[0]!.bwAverageGbps).toBeCloseTo(92.5, 0);
    expect(parseIbWriteBw((await bi.output()).stdout).rows.length).toBe(6);
    expect(parseIbWriteBw((await c2.output()).stdout).rows[0]!.bwAverageGbps).toBeCloseTo(185.1, 0);
    for (const p of [c1, c2, uni, bi]) await p.stop();
  });
});

// The triangle wiring: spark-a's cable in cage 0, spark-b's in cage 1.
const TRIANGLE = () => variant('good-qsfp56', (s) => ((s.name = 'triangle-edge'), (s.nodes[0].cage = 0)));
const RANK = (ip: string, hca: string, netdev: string) =>
  `-np 1 -H ${ip}:1 -x LD_LIBRARY_PATH -x NCCL_DEBUG=INFO -x NCCL_IB_HCA=${hca} -x NCCL_SOCKET_IFNAME=${netdev} -x OMPI_MCA_btl_tcp_if_include=${netdev} all_reduce_perf -b 256M -e 1G -f 2 -g 1`;
const CAGE0 = ['rocep1s0f0,roceP2p1s0f0', 'enp1s0f0np0'] as const;
const CAGE1 = ['rocep1s0f1,roceP2p1s0f1', 'enp1s0f1np1'] as const;

describe('simulated mpirun: each rank judged with its own environment against its own node', () => {
  it('one app context per node with its own names: IB on both ranks, each with its own two devices', async () => {
    const lab = createLab({ scenario: TRIANGLE(), clock: new VirtualClock() });
    const line = `mpirun --mca oob_tcp_if_include 192.168.100.0/24 ${RANK('192.168.100.10', ...CAGE0)} : ${RANK('192.168.100.11', ...CAGE1)}`;
    const r = await lab.runner('spark-a').run(line);
    expect(r.exitCode).toBe(0);
    const p = parseNccl(r.stdout);
    expect(p.network).toBe('IB');
    expect(p.avgBusBandwidthGBs).toBeGreaterThan(20);
    expect(p.ranks.map((x) => [x.ip, x.network, x.devices])).toEqual([
      ['192.168.100.10', 'IB', ['rocep1s0f0', 'roceP2p1s0f0']],
      ['192.168.100.11', 'IB', ['rocep1s0f1', 'roceP2p1s0f1']],
    ]);
    // The two ranks' NCCL_DEBUG lines differ where the real ranks differ.
    expect(r.stdout).toContain('spark-a:');
    expect(r.stdout).toMatch(/NCCL INFO NCCL_SOCKET_IFNAME set to enp1s0f0np0\n/);
    expect(r.stdout).toMatch(/NCCL INFO NCCL_SOCKET_IFNAME set to enp1s0f1np1\n/);
  });

  it("node A's names for both ranks (the old single-context line): node B finds no address on that interface, NCCL's bootstrap fails", async () => {
    const lab = createLab({ scenario: TRIANGLE(), clock: new VirtualClock() });
    const old = `mpirun -np 2 -H 192.168.100.10:1,192.168.100.11:1 --mca btl_tcp_if_include ${CAGE0[1]} -x NCCL_DEBUG=INFO -x NCCL_IB_HCA=${CAGE0[0]} -x NCCL_SOCKET_IFNAME=${CAGE0[1]} all_reduce_perf -b 256M -e 1G -f 2 -g 1`;
    const r = await lab.runner('spark-a').run(old);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/NCCL WARN Bootstrap : no socket interface found/);
    expect(r.stderr).toMatch(/Test NCCL failure/);
  });

  it("a rank naming the other cage's devices falls back to TCP sockets; one device of its own cage means one rail", async () => {
    const lab = createLab({ scenario: TRIANGLE(), clock: new VirtualClock() });
    const wrongHca = `mpirun --mca oob_tcp_if_include 192.168.100.0/24 ${RANK('192.168.100.10', ...CAGE0)} : ${RANK('192.168.100.11', CAGE0[0], CAGE1[1])}`;
    const socket = parseNccl((await lab.runner('spark-a').run(wrongHca)).stdout);
    expect(socket.network).toBe('Socket');
    expect(socket.ranks.find((x) => x.ip === '192.168.100.11')).toMatchObject({ network: 'Socket', devices: ['enp1s0f1np1'] });
    expect(socket.avgBusBandwidthGBs).toBeLessThan(3.5);
    const half = `mpirun --mca oob_tcp_if_include 192.168.100.0/24 ${RANK('192.168.100.10', ...CAGE0)} : ${RANK('192.168.100.11', 'rocep1s0f1,roceP2p1s0f0', CAGE1[1])}`;
    const one = parseNccl((await lab.runner('spark-a').run(half)).stdout);
    expect(one.ranks.find((x) => x.ip === '192.168.100.11')).toMatchObject({ network: 'IB', devices: ['rocep1s0f1'] });
    expect(one.avgBusBandwidthGBs).toBeLessThan(15);
  });

  it('an out-of-band include neither node has stops mpirun; a peer that wants a password stops its daemon', async () => {
    const lab = createLab({ scenario: TRIANGLE(), clock: new VirtualClock() });
    const r = await lab
      .runner('spark-a')
      .run(`mpirun --mca oob_tcp_if_include docker0 ${RANK('192.168.100.10', ...CAGE0)} : ${RANK('192.168.100.11', ...CAGE1)}`);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('None of the TCP networks specified to be included for out-of-band communications\ncould be found:\n\n  Value given: docker0\n');
    const locked = createLab({ scenario: variant('good-qsfp56', (s) => (s.nodes[1].sshFromPeer = 'needs-password')), clock: new VirtualClock() });
    const n = await locked.runner('spark-a').run(`mpirun ${RANK('192.168.100.10', ...CAGE1)} : ${RANK('192.168.100.11', ...CAGE1)}`);
    expect(n.exitCode).toBe(1);
    expect(n.stderr).toMatch(/^nvidia@192\.168\.100\.11: Permission denied \(publickey,password\)\.\n/);
  });
});

describe('simulated ssh between the nodes', () => {
  it("answers BatchMode ssh as the peer's keys and host key allow", async () => {
    const ok = createLab({ scenario: 'good-qsfp56', clock: new VirtualClock() });
    expect(await ok.runner('spark-a').run(cmd.sshBatch('192.168.100.11'))).toMatchObject({ exitCode: 0, stderr: '' });
    expect(await ok.runner('spark-a').run(cmd.sshBatch('192.168.100.99'))).toMatchObject({
      exitCode: 255,
      stderr: 'ssh: connect to host 192.168.100.99 port 22: No route to host\n',
    });
    const hk = createLab({ scenario: variant('good-qsfp56', (s) => (s.nodes[1].sshFromPeer = 'unknown-host-key')), clock: new VirtualClock() });
    expect(await hk.runner('spark-a').run(cmd.sshBatch('192.168.100.11'))).toMatchObject({ exitCode: 255, stderr: 'Host key verification failed.\n' });
  });
});
