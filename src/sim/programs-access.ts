// `test -r|-x|-d|-e <path>` against a simulated node's installed files, `ldd` of its programs, and `ssh` from one
// simulated node to the other the way mpirun reaches its second rank (non-interactive, BatchMode).
import type { LabCore } from './lab-core.js';
import { homeOf, missing, pathKind } from './node-files.js';
import { err, ok, type Answer } from './programs-host.js';

// POSIX test with one unary file operator: exit 0 or 1, no output (exit 2 and dash's message for anything else).
export function testAnswer(core: LabCore, node: string, argv: string[]): Answer {
  const [, op, path] = argv;
  if (argv.length !== 3 || !op || !path || !['-r', '-x', '-d', '-e', '-f'].includes(op)) return err('sh: 1: test: only a unary file test is simulated\n', 2);
  const kind = pathKind(core, node, path);
  const yes =
    op === '-e' || op === '-r' ? kind !== null : op === '-d' ? kind === 'd' : op === '-x' ? kind === 'x' || kind === 'd' : kind === 'f' || kind === 'x';
  return { stdout: '', stderr: '', exitCode: yes ? 0 : 1 };
}

// ssh [-o Key=Value]... <host> <command>: reaches the node that owns the address, as the user's key and the
// known_hosts file there allow (scenario node `sshFromPeer`). Only `true` is run on the far side.
export function sshAnswer(core: LabCore, node: string, argv: string[]): Answer {
  const opts: Record<string, string> = {};
  let i = 1;
  for (; i < argv.length && argv[i]!.startsWith('-'); i++) {
    if (argv[i] === '-o' && argv[i + 1]) {
      const [k, ...v] = argv[++i]!.split('=');
      opts[k!.toLowerCase()] = v.join('=');
    }
  }
  const host = argv[i];
  const remote = argv.slice(i + 1);
  if (!host) return err('usage: ssh [-46AaCfGgKkMNnqsTtVvXxYy] [-B bind_interface] destination [command [argument ...]]\n', 255);
  const owner = core.ownerOf(host);
  if (!owner) return err(`ssh: connect to host ${host} port 22: No route to host\n`, 255);
  if (core.unreachable(owner.node) || core.model.rebooting(owner.node, core.now()))
    return err(`ssh: connect to host ${host} port 22: Connection refused\n`, 255);
  const batch = opts['batchmode'] === 'yes';
  const how = core.nodeSpec(owner.node).sshFromPeer ?? 'ok';
  if (how === 'unknown-host-key') {
    if (batch) return err('Host key verification failed.\n', 255);
    return err(`The authenticity of host '${host} (${host})' can't be established.\nHost key verification failed.\n`, 255);
  }
  if (how === 'needs-password') return err(`${core.nodeSpec(owner.node).user ?? 'nvidia'}@${host}: Permission denied (publickey,password).\n`, 255);
  if (remote.length === 0 || (remote.length === 1 && remote[0] === 'true')) return ok('');
  return err(`bash: line 1: ${remote[0]}: command not simulated over ssh\n`, 127);
}

// The libraries each simulated program loads (generated, aarch64 paths as DGX OS has them; NCCL built in ~/nccl as
// NVIDIA's nccl playbook builds it). Any other installed program gets the C library only.
function librariesOf(core: LabCore, node: string, program: string): [string, string][] {
  const libc: [string, string][] = [
    ['libc.so.6', '/lib/aarch64-linux-gnu/libc.so.6'],
    ['libm.so.6', '/lib/aarch64-linux-gnu/libm.so.6'],
  ];
  const ompi: [string, string][] = [
    ['libmpi.so.40', '/lib/aarch64-linux-gnu/libmpi.so.40'],
    ['libopen-rte.so.40', '/lib/aarch64-linux-gnu/libopen-rte.so.40'],
    ['libopen-pal.so.40', '/lib/aarch64-linux-gnu/libopen-pal.so.40'],
  ];
  if (program.endsWith('/all_reduce_perf') || program.endsWith('/all_gather_perf'))
    return [
      ['libcudart.so.13', '/usr/local/cuda/lib64/libcudart.so.13'],
      ...ompi.slice(0, 1),
      ['libnccl.so.2', `${homeOf(core, node)}/nccl/build/lib/libnccl.so.2`],
      ['libstdc++.so.6', '/lib/aarch64-linux-gnu/libstdc++.so.6'],
      ...libc,
      ...ompi.slice(1),
    ];
  if (program.endsWith('/mpirun')) return [...ompi.slice(1), ...libc];
  return libc;
}

// `ldd <program>` in glibc's layout (docs/formats.md §13): a library the scenario's `missing` names is "not found",
// as it is in a session whose LD_LIBRARY_PATH lacks its directory. Addresses are generated.
export function lddAnswer(core: LabCore, node: string, argv: string[]): Answer {
  const path = argv[1];
  if (argv.length !== 2 || !path) return err('ldd: only `ldd <program>` is simulated\n', 1);
  if (!path.startsWith('/') || pathKind(core, node, path) !== 'x') return err(`ldd: ${path}: No such file or directory\n`, 1);
  const gone = missing(core, node);
  const addr = (i: number) => `0x0000ffff${(0x8c5d0000 - i * 0x1b0000).toString(16).padStart(8, '0')}`;
  const lines = [`\tlinux-vdso.so.1 (${addr(0)})`];
  librariesOf(core, node, path).forEach(([name, at], i) => lines.push(gone.has(name) ? `\t${name} => not found` : `\t${name} => ${at} (${addr(i + 1)})`));
  lines.push(`\t/lib/ld-linux-aarch64.so.1 (0x0000ffff8c5a0000)`);
  return ok(`${lines.join('\n')}\n`);
}
