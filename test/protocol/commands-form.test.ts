// The protocol's GPU load as a program with arguments, and the per-node NCCL rank: what the loader accepts and
// refuses, and that nothing from a protocol file reaches a node's shell as syntax.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { parseProtocol } from '../../src/protocol/load.js';
import { gpuBurnKernel, gpuLoadNeeds, renderGpuLoad } from '../../src/protocol/gpu-load.js';
import { gpuLoadCommand } from '../../src/run/steps/soak.js';
import { cmd } from '../../src/transport/commands.js';

const FULL = join(import.meta.dirname, '..', '..', 'protocols', 'spark-burnin.json');

function withCommands(edit: (c: Record<string, any>) => void): string {
  const p = JSON.parse(readFileSync(FULL, 'utf8'));
  edit(p.commands);
  return JSON.stringify(p);
}
const load = (edit: (c: Record<string, any>) => void) => parseProtocol(withCommands(edit), 'protocols/x.json');
const refused = (edit: (c: Record<string, any>) => void): string => {
  try {
    load(edit);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    expect((e as Error).message).not.toContain('\n');
    return (e as Error).message;
  }
  throw new Error('accepted');
};

// The words a POSIX shell makes of a command line (the node's /bin/sh, here the test machine's).
function shellWords(line: string): string[] {
  const out = execFileSync('/bin/sh', ['-c', `set -- ${line}; for a in "$@"; do printf '%s\\0' "$a"; done`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

describe('commands.gpuLoad as a program', () => {
  it('the shipped default: gpu_burn capped at 16 GiB, its compare kernel named with -c, required on every node', () => {
    const p = parseProtocol(readFileSync(FULL, 'utf8'), 'x');
    expect(gpuLoadCommand(p.commands.gpuLoad, 3660)).toBe('gpu_burn -m 16384 -c /usr/local/share/gpu-burn/compare.ptx 3660');
    expect(gpuLoadNeeds(p.commands.gpuLoad)).toEqual({
      program: 'gpu_burn',
      cwd: null,
      files: [{ path: '/usr/local/share/gpu-burn/compare.ptx', why: "gpu_burn's compare kernel" }],
      check: null,
      problem: null,
    });
  });

  it('expresses the PyTorch alternative: docker running the shipped matmul script on the node, a check for the image', () => {
    const image = 'nvcr.io/nvidia/pytorch:25.10-py3';
    const p = load(
      (c) =>
        (c.gpuLoad = {
          program: 'docker',
          args: ['run', '--rm', '--gpus', 'all', '-v', '/opt/cablequal:/opt/cablequal:ro', image, 'python', '/opt/cablequal/torch-matmul.py', '{durationS}'],
          requires: ['/opt/cablequal/torch-matmul.py'],
          check: ['docker', 'image', 'inspect', image],
        }),
    );
    const line = gpuLoadCommand(p.commands.gpuLoad, 3660);
    expect(shellWords(line)).toEqual([
      'docker',
      'run',
      '--rm',
      '--gpus',
      'all',
      '-v',
      '/opt/cablequal:/opt/cablequal:ro',
      image,
      'python',
      '/opt/cablequal/torch-matmul.py',
      '3660',
    ]);
    expect(gpuLoadNeeds(p.commands.gpuLoad)).toMatchObject({
      program: 'docker',
      files: [{ path: '/opt/cablequal/torch-matmul.py' }],
      check: ['docker', 'image', 'inspect', image],
    });
    // The script the guide installs ships with cablequal and takes the seconds as its one argument.
    expect(readFileSync(join(import.meta.dirname, '..', '..', 'protocols', 'loads', 'torch-matmul.py'), 'utf8')).toContain('seconds = float(sys.argv[1])');
  });

  // #22 item 10: "nothing in a protocol file runs as shell syntax on a node" holds for shells and interpreters too.
  it.each([
    [{ program: '/bin/sh', args: ['-c', 'reboot; gpu_burn {durationS}'] }, 'commands.gpuLoad', '"sh -c"'],
    [{ program: 'bash', args: ['--norc', '-lc', 'reboot'] }, 'commands.gpuLoad', '"bash -lc"'],
    [{ program: 'docker', args: ['run', '--rm', 'img', 'python3', '-c', 'import os; os.system("reboot")'] }, 'commands.gpuLoad', '"python3 -c"'],
    [{ program: 'docker', args: ['run', '--entrypoint', 'sh', 'img', '-c', 'reboot'] }, 'commands.gpuLoad', '"sh -c"'],
    [{ program: 'env', args: ['perl', '-e', 'system "reboot"'] }, 'commands.gpuLoad', '"perl -e"'],
    [{ program: 'node', args: ['--eval', 'require("child_process")'] }, 'commands.gpuLoad', '"node --eval"'],
    [{ program: 'busybox', args: ['sh', '-c', 'reboot'] }, 'commands.gpuLoad', '"busybox -c"'],
    [{ program: 'gawk', args: ['system("reboot")'] }, 'commands.gpuLoad', '"gawk" does'],
    [{ program: 'ssh', args: ['spark-b', 'reboot'] }, 'commands.gpuLoad', '"ssh" does'],
    ['sh -c reboot', 'commands.gpuLoad', '"sh -c"'],
    [
      { program: 'gpu_burn', args: ['-m', '16384', '-c', '/usr/local/share/gpu-burn/compare.ptx', '{durationS}'], check: ['bash', '-c', 'reboot'] },
      'commands.gpuLoad.check',
      '"bash -c"',
    ],
  ])('refuses %j at %s', (gpuLoad, path, says) => {
    const message = refused((c) => (c.gpuLoad = gpuLoad));
    expect(message.startsWith(`protocols/x.json: ${path}: expected `)).toBe(true);
    expect(message).toContain(says);
  });

  it('starts in its cwd when given one (gpu_burn then finds compare.ptx there without -c)', () => {
    const p = load((c) => (c.gpuLoad = { program: '/opt/gpu-burn/gpu_burn', args: ['-m', '50%', '{durationS}'], cwd: '/opt/gpu-burn' }));
    expect(gpuLoadCommand(p.commands.gpuLoad, 120)).toBe('cd /opt/gpu-burn && /opt/gpu-burn/gpu_burn -m 50% 120');
    expect(gpuLoadNeeds(p.commands.gpuLoad).files).toEqual([
      { path: '/opt/gpu-burn/compare.ptx', why: "gpu_burn's compare kernel (-c, or compare.ptx in its cwd)" },
    ]);
  });

  it('hostile arguments are quoted, never interpreted: each reaches the program as the one word the file says', () => {
    const hostile = ['$(reboot)', '`id`', "a'b", 'x; rm -rf /', '&& halt', '>/etc/passwd', '$HOME', '*', 'two words', ''];
    const p = load((c) => (c.gpuLoad = { program: 'my_load', args: [...hostile, '{durationS}'] }));
    const line = gpuLoadCommand(p.commands.gpuLoad, 60);
    expect(shellWords(line)).toEqual(['my_load', ...hostile, '60']);
    const r = renderGpuLoad(p.commands.gpuLoad, 60);
    expect('line' in r ? null : r.args).toEqual([...hostile, '60']);
  });

  it('refuses shell syntax where a name or path belongs, and control characters anywhere', () => {
    expect(refused((c) => (c.gpuLoad = { program: 'gpu_burn;reboot', args: ['{durationS}'] }))).toMatch(
      /^protocols\/x\.json: commands\.gpuLoad\.program: expected a program name or an absolute path/,
    );
    expect(refused((c) => (c.gpuLoad = { program: '../bin/x', args: [] }))).toMatch(/commands\.gpuLoad\.program: expected a program name/);
    expect(refused((c) => (c.gpuLoad = { program: 'x', args: [], cwd: "/opt/'; reboot #" }))).toMatch(/commands\.gpuLoad\.cwd: expected an absolute path/);
    expect(refused((c) => (c.gpuLoad = { program: 'x', args: [], cwd: 'relative/dir' }))).toMatch(/commands\.gpuLoad\.cwd: expected an absolute path/);
    expect(refused((c) => (c.gpuLoad = { program: 'x', args: ['a\nreboot'] }))).toMatch(
      /commands\.gpuLoad\.args\[0\]: expected one line without control characters/,
    );
    expect(refused((c) => (c.gpuLoad = { program: 'x', args: ['{duration}'] }))).toMatch(
      /commands\.gpuLoad\.args\[0\]: expected placeholders among \{durationS\}/,
    );
    expect(refused((c) => (c.gpuLoad = { program: 'x', args: [], requires: ['compare.ptx'] }))).toMatch(
      /commands\.gpuLoad\.requires\[0\]: expected an absolute path/,
    );
    expect(refused((c) => (c.gpuLoad = { program: 'x', args: [], check: ['$(id)'] }))).toMatch(/commands\.gpuLoad\.check\[0\]: expected a program name/);
    expect(refused((c) => (c.gpuLoad = { program: 'x', argv: [] }))).toMatch(/commands\.gpuLoad\.args: expected a value \(required key\)/);
    // The builder refuses the same things on its own, for any caller.
    expect(() => cmd.program({ program: 'a b', args: [] })).toThrow(UsageError);
    expect(() => cmd.program({ program: 'x', args: ['a\nb'] })).toThrow(/control characters/);
    expect(() => cmd.program({ program: 'x', args: [], cwd: "/tmp/'x" })).toThrow(UsageError);
  });

  it('refuses gpu_burn command lines gpu_burn would misread (it tests -h, -l and -d as substrings of any argument)', () => {
    const burn = (args: string[], extra: Record<string, unknown> = {}) => refused((c) => (c.gpuLoad = { program: 'gpu_burn', args, ...extra }));
    expect(burn(['{durationS}', '-c', '/usr/local/share/gpu-burn/compare.ptx'])).toMatch(/gpu_burn's run length "\{durationS\}" as the last argument/);
    expect(burn(['-c', '/opt/gpu-burn-lab/compare.ptx', '{durationS}'])).toMatch(/args\[1\]: expected no "-l" inside an argument \(gpu_burn lists the GPUs/);
    expect(burn(['-c', '/home/x/gpu-hw/compare.ptx', '{durationS}'])).toMatch(/no "-h" inside an argument/);
    expect(burn(['-l', '{durationS}'])).toMatch(/not "-l" \(gpu_burn lists the GPUs and exits without loading the GPUs\)/);
    expect(burn(['-m', '16384', '{durationS}'])).toMatch(/-c <absolute path of compare\.ptx> or a "cwd" holding it/);
    expect(burn(['-c', 'compare.ptx', '{durationS}'])).toMatch(/-c <absolute path/);
    // -d alone (doubles) is a real option and accepted.
    expect(load((c) => (c.gpuLoad = { program: 'gpu_burn', args: ['-d', '-c', '/k/compare.ptx', '{durationS}'] })).commands.gpuLoad).toMatchObject({
      form: 'program',
    });
    expect(gpuBurnKernel(['-m', '1', '-c', '/a', '-c', '/b', '10'])).toBe('/b');
  });

  it('still loads the one-line form older protocols (and their journals) carry; preflight is what refuses it for gpu_burn', () => {
    const p = load((c) => (c.gpuLoad = 'gpu_burn {durationS}'));
    expect(p.commands.gpuLoad).toEqual({ form: 'line', line: 'gpu_burn {durationS}' });
    expect(gpuLoadCommand(p.commands.gpuLoad, 60)).toBe('gpu_burn 60');
    expect(gpuLoadNeeds(p.commands.gpuLoad).problem).toMatch(
      /starts gpu_burn in the run's scratch directory, where its compare kernel "compare\.ptx" never is/,
    );
    const abs = load((c) => (c.gpuLoad = 'gpu_burn -c /usr/local/share/gpu-burn/compare.ptx {durationS}'));
    expect(gpuLoadNeeds(abs.commands.gpuLoad)).toMatchObject({ problem: null, files: [{ path: '/usr/local/share/gpu-burn/compare.ptx' }] });
    expect(refused((c) => (c.gpuLoad = 'gpu_burn {durationS}; reboot'))).toBe(
      'protocols/x.json: commands.gpuLoad: expected a plain command line without shell operators, got "gpu_burn {durationS}; reboot"',
    );
  });
});

describe('commands.nccl and commands.ncclRank', () => {
  it("{ranks} needs ncclRank, ncclRank needs exactly one {ranks}, and node A's placeholders do not mix with it", () => {
    expect(refused((c) => delete c.ncclRank)).toBe('protocols/x.json: commands.ncclRank: expected a value (required key when commands.nccl uses {ranks})');
    expect(refused((c) => (c.nccl = 'mpirun {ranks} : {ranks}'))).toMatch(/commands\.nccl: expected exactly one \{ranks\}/);
    expect(refused((c) => (c.nccl = 'mpirun --mca btl_tcp_if_include {netdevA} {ranks}'))).toMatch(
      /commands\.nccl: expected no \{ipA\}, \{ipB\}, \{netdevA\} or \{hcaList\} beside \{ranks\}/,
    );
    expect(refused((c) => (c.ncclRank = '-H {ipB}:1 all_reduce_perf'))).toMatch(
      /commands\.ncclRank: expected placeholders among \{ip\}, \{netdev\}, \{hcaList\}, got "\{ipB\}"/,
    );
    expect(refused((c) => (c.ncclRank = '-x A=$(id) all_reduce_perf'))).toMatch(/commands\.ncclRank: expected a plain command line without shell operators/);
  });

  it('the single-context form of older protocols still loads', () => {
    const p = load((c) => {
      delete c.ncclRank;
      c.nccl =
        'mpirun -np 2 -H {ipA}:1,{ipB}:1 --mca btl_tcp_if_include {netdevA} -x NCCL_DEBUG=INFO -x NCCL_IB_HCA={hcaList} -x NCCL_SOCKET_IFNAME={netdevA} all_reduce_perf -b 256M -e 1G -f 2 -g 1';
    });
    expect(p.commands.ncclRank).toBeUndefined();
  });
});

describe("the operator guide's gpuLoad examples", () => {
  it("load as written (default and PyTorch alternative), and the default is the shipped protocol's", () => {
    const guide = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'operator-guide.md'), 'utf8');
    const blocks = [...guide.matchAll(/```json\n("gpuLoad": [\s\S]*?)\n```/g)].map((m) => m[1]!);
    expect(blocks).toHaveLength(2);
    const loaded = blocks.map((b) => load((c) => (c.gpuLoad = (JSON.parse(`{${b}}`) as { gpuLoad: unknown }).gpuLoad)).commands.gpuLoad);
    expect(loaded[0]).toEqual(parseProtocol(readFileSync(FULL, 'utf8'), 'x').commands.gpuLoad);
    expect(loaded[1]).toMatchObject({ form: 'program', program: 'docker', check: ['docker', 'image', 'inspect', 'nvcr.io/nvidia/pytorch:25.10-py3'] });
    expect(shellWords(gpuLoadCommand(loaded[1]!, 60)).slice(-3)).toEqual(['python', '/opt/cablequal/torch-matmul.py', '60']);
  });
});
