// What is installed on a simulated Spark, set up the way docs/operator-guide.md says: the tools on the PATH of a
// non-interactive session and the GPU load's compare kernel. A scenario node's `missing` takes programs or files away.
import type { LabCore } from './lab-core.js';
import { RUN_ROOT } from '../transport/remote-process.js';

// Programs on the PATH and where they are.
const PROGRAMS: Record<string, string> = {
  ethtool: '/usr/sbin/ethtool',
  ibdev2netdev: '/usr/bin/ibdev2netdev',
  ib_write_bw: '/usr/bin/ib_write_bw',
  'nvidia-smi': '/usr/bin/nvidia-smi',
  mpirun: '/usr/bin/mpirun',
  all_reduce_perf: '/usr/local/bin/all_reduce_perf',
  all_gather_perf: '/usr/local/bin/all_gather_perf',
  gpu_burn: '/usr/local/bin/gpu_burn',
  rdma: '/usr/sbin/rdma',
  ip: '/usr/sbin/ip',
  grep: '/usr/bin/grep',
  date: '/usr/bin/date',
  sudo: '/usr/bin/sudo',
  stdbuf: '/usr/bin/stdbuf',
  ssh: '/usr/bin/ssh',
  perl: '/usr/bin/perl',
  systemctl: '/usr/bin/systemctl',
  ldd: '/usr/bin/ldd',
  ping: '/usr/bin/ping',
  lldpctl: '/usr/sbin/lldpctl',
  printenv: '/usr/bin/printenv',
};

// gpu-burn installed as the guide says: the binary in /usr/local/bin, its compare kernel beside the share directory.
export const GPU_BURN_DIR = '/usr/local/share/gpu-burn';
const FILES = [`${GPU_BURN_DIR}/compare.ptx`];
const DIRS = ['/', '/tmp', '/usr', '/usr/bin', '/usr/sbin', '/usr/local', '/usr/local/bin', '/usr/local/share', GPU_BURN_DIR, '/home', RUN_ROOT];

// Names and paths the scenario takes away from this node (programs, files, shared libraries).
export function missing(core: LabCore, node: string): Set<string> {
  const n = core.nodeSpec(node);
  // lldpd (and its lldpctl) is installed only where the scenario runs it: a switch cluster's nodes.
  return new Set([...(n.missing ?? []), ...(n.lldpd ? [] : ['lldpctl'])]);
}

// Whether the simulated nodes know a program at all (by name or installed path), installed or not.
export function knownProgram(program: string): boolean {
  return program.startsWith('/') ? Object.values(PROGRAMS).includes(program) : program in PROGRAMS;
}

// Where a program is on this node: a name looked up on the PATH, or an absolute path; null when it is not installed.
export function programPath(core: LabCore, node: string, program: string): string | null {
  const gone = missing(core, node);
  if (program.startsWith('/')) {
    const name = Object.keys(PROGRAMS).find((k) => PROGRAMS[k] === program);
    return name && !gone.has(name) && !gone.has(program) ? program : null;
  }
  const p = PROGRAMS[program];
  return p && !gone.has(program) && !gone.has(p) ? p : null;
}

// The home directory of the node's user (where a non-interactive session starts).
export function homeOf(core: LabCore, node: string): string {
  return `/home/${core.nodeSpec(node).user ?? 'nvidia'}`;
}

// Whether a path exists on the node, as a directory ('d'), a regular file ('f') or an executable ('x').
export function pathKind(core: LabCore, node: string, path: string): 'd' | 'f' | 'x' | null {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
  if (missing(core, node).has(p)) return null;
  if (DIRS.includes(p) || p === homeOf(core, node) || p.startsWith(`${RUN_ROOT}/`)) return 'd';
  if (FILES.includes(p)) return 'f';
  if (Object.values(PROGRAMS).includes(p)) return programPath(core, node, p) ? 'x' : null;
  return null;
}

// A relative path resolved against a working directory.
export function resolvePath(cwd: string, path: string): string {
  if (path.startsWith('/')) return path;
  const parts = `${cwd}/${path}`.split('/');
  const out: string[] = [];
  for (const part of parts) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}
