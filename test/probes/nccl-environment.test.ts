// What preflight reads to prove NCCL can start over a non-interactive SSH session: ldd of the nccl-tests program (over
// real recorded ldd outputs) and NCCL's configuration files (the precedence NCCL's param.cc gives them).
import { describe, expect, it } from 'vitest';
import { parseLdd } from '../../src/probes/ldd.js';
import { ncclConfProblems, ncclConfValue, parseNcclConf } from '../../src/probes/nccl-conf.js';
import { fuzzParser } from '../helpers/fuzz.js';
import { parseErrorOf } from '../helpers/parse-error.js';
import { sample } from '../helpers/samples.js';

// The recorded pastes start with the shell prompt and command line, which the harness never sees.
const withoutPrompt = (rel: string) => sample(rel).split('\n').slice(1).join('\n');
const FOUND = withoutPrompt('ldd/nccl-tests-issue107-all-reduce-perf-every-library-found.txt');
const NOT_FOUND = withoutPrompt('ldd/openfoam-blockmesh-libmpi-not-found.txt');

describe('ldd', () => {
  it('all_reduce_perf with every library found: libnccl, libmpi and libcudart resolved, nothing missing', () => {
    const r = parseLdd(FOUND);
    expect(r.missing).toEqual([]);
    expect(r.static).toBe(false);
    expect(r.libraries).toHaveLength(15);
    const path = (n: string) => r.libraries.find((l) => l.name === n)?.path;
    expect(path('libnccl.so.2')).toBe('/usr/lib/x86_64-linux-gnu/libnccl.so.2');
    expect(path('libmpi.so.40')).toBe('/usr/local/lib/libmpi.so.40');
    expect(path('libcudart.so.11.0')).toBe('/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.11.0');
    // The vDSO and the loader itself are listed without "=>".
    expect(path('linux-vdso.so.1')).toBe('(kernel)');
    expect(path('/lib64/ld-linux-x86-64.so.2')).toBe('/lib64/ld-linux-x86-64.so.2');
  });

  it('a library the loader cannot find is named (the program would not start), the others stay resolved', () => {
    const r = parseLdd(NOT_FOUND);
    expect(r.missing).toEqual(['libmpi.so.40']);
    expect(r.libraries).toHaveLength(29);
    expect(r.libraries.find((l) => l.name === 'libopen-rte.so.40')?.path).toBe('/sw-eb/software/OpenMPI/4.1.4-GCC-12.2.0/lib/libopen-rte.so.40');
  });

  it('refuses text that is no ldd listing (an error, a prompt line), naming the line', () => {
    const e = parseErrorOf(() => parseLdd(sample('ldd/openfoam-blockmesh-libmpi-not-found.txt')));
    expect(e.line).toBe(1);
    expect(e.reason).toMatch(/^not an ldd line/);
    expect(parseErrorOf(() => parseLdd('')).reason).toBe('no library listed and not a static program');
    fuzzParser(parseLdd, [FOUND, NOT_FOUND]);
  });
});

// `grep -H . /etc/nccl.conf ~/.nccl.conf` output, constructed for these tests in the layout grep prints (no recorded
// copy of a DGX OS nccl.conf was found): the reported NCCL_IB_DISABLE=1 line, comments, a user file.
const CONF = [
  '/etc/nccl.conf:# shipped with the image',
  '/etc/nccl.conf:NCCL_IB_DISABLE=1',
  '/etc/nccl.conf:NCCL_DEBUG=WARN',
  '/etc/nccl.conf:NCCL_IB_DISABLE=0',
  '/home/nvidia/.nccl.conf:NCCL_SOCKET_IFNAME=enp1s0f1np1',
].join('\n');

describe('NCCL configuration files', () => {
  it('reads NAME=value lines as NCCL splits them, comments and lines without "=" left out', () => {
    expect(parseNcclConf(`${CONF}\n/etc/nccl.conf:no equals sign here\n`)).toEqual([
      { file: '/etc/nccl.conf', name: 'NCCL_IB_DISABLE', value: '1' },
      { file: '/etc/nccl.conf', name: 'NCCL_DEBUG', value: 'WARN' },
      { file: '/etc/nccl.conf', name: 'NCCL_IB_DISABLE', value: '0' },
      { file: '/home/nvidia/.nccl.conf', name: 'NCCL_SOCKET_IFNAME', value: 'enp1s0f1np1' },
    ]);
    expect(parseErrorOf(() => parseNcclConf('/etc/shadow:root:x\n')).line).toBe(1);
    fuzzParser(parseNcclConf, [CONF]);
  });

  it("NCCL_IB_DISABLE=1 in /etc/nccl.conf turns RDMA off: the first line of a file wins, the user's file wins over it", () => {
    const s = parseNcclConf(CONF);
    expect(ncclConfValue(s, 'NCCL_IB_DISABLE')).toEqual({ file: '/etc/nccl.conf', name: 'NCCL_IB_DISABLE', value: '1' });
    expect(ncclConfProblems(s, new Set()).map((p) => [p.setting.file, `${p.setting.name}=${p.setting.value}`, p.effect])).toEqual([
      ['/etc/nccl.conf', 'NCCL_IB_DISABLE=1', 'NCCL would not use the RDMA devices and would run over TCP sockets (~2 GB/s)'],
    ]);
    // The user's ~/.nccl.conf is read first, so its value stands.
    const user = parseNcclConf(`${CONF}\n/home/nvidia/.nccl.conf:NCCL_IB_DISABLE=0\n`);
    expect(ncclConfProblems(user, new Set())).toEqual([]);
    // Values as strtoll reads them: blanks, a sign, hex; text without a number keeps NCCL's default (IB on).
    for (const [v, off] of [
      [' 1', true],
      ['0x1', true],
      ['-1', true],
      ['00', false],
      ['yes', false],
      ['1\r', true],
    ] as const)
      expect(ncclConfProblems(parseNcclConf(`/etc/nccl.conf:NCCL_IB_DISABLE=${v}`), new Set()).length, v).toBe(off ? 1 : 0);
  });

  it('a variable the launcher sets for the rank (-x NAME=value) wins over both files; NCCL_NET must be IB', () => {
    const s = parseNcclConf('/etc/nccl.conf:NCCL_IB_DISABLE=1\n/etc/nccl.conf:NCCL_NET=Socket\n');
    expect(ncclConfProblems(s, new Set(['NCCL_IB_DISABLE'])).map((p) => p.setting.name)).toEqual(['NCCL_NET']);
    expect(ncclConfProblems(s, new Set(['NCCL_IB_DISABLE', 'NCCL_NET']))).toEqual([]);
    expect(ncclConfProblems(parseNcclConf('/etc/nccl.conf:NCCL_NET=ib\n'), new Set())).toEqual([]);
  });
});
