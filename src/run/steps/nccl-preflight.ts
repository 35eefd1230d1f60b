// What NCCL needs on each node, proven in preflight instead of failing after the throughput step. mpirun starts its
// ranks over non-interactive SSH sessions, whose environment is not the interactive shell's: NVIDIA's nccl playbook
// exports LD_LIBRARY_PATH ($NCCL_HOME/lib, CUDA, Open MPI) in the user's shell, and `-x LD_LIBRARY_PATH` forwards only
// what the launching session has. So, in the session cablequal itself uses (the same kind mpirun uses), on both nodes:
// mpirun answers `--version`, the nccl-tests program loads all its libraries (`ldd`: none "not found"), and NCCL's
// configuration files do not turn RDMA off (docs/formats.md §13).
import { ParseError } from '../../domain/errors.js';
import { parseLdd } from '../../probes/ldd.js';
import { parseMpirunVersion } from '../../probes/mpirun-version.js';
import { ncclConfProblems, parseNcclConf } from '../../probes/nccl-conf.js';
import { cmd, validate } from '../../transport/commands.js';
import type { Protocol } from '../../protocol/index.js';
import type { NodeState, RunContext } from '../context.js';
import { failOnNode } from '../run-errors.js';

const GUIDE = 'docs/operator-guide.md section 1, "NCCL over non-interactive SSH"';

// Where the exports belong so that mpirun's non-interactive sessions get them too.
const ENV_ADVICE =
  'NVIDIA\'s nccl playbook exports LD_LIBRARY_PATH in interactive shells only: put the export ($HOME/nccl/build/lib, /usr/local/cuda/lib64 and Open MPI\'s lib) at the top of ~/.bashrc, above its "If not running interactively" return, on both nodes (or list the directories in /etc/ld.so.conf.d/ and run sudo ldconfig)';

// The nccl-tests program of the NCCL command (a word ending in _perf), or null when the template names none.
export function ncclTestOf(protocol: Protocol): string | null {
  const words = `${protocol.commands.nccl} ${protocol.commands.ncclRank ?? ''}`.split(/\s+/).filter((w) => /^[A-Za-z0-9_./+@-]*_perf$/.test(w));
  return words[0] ?? null;
}

// The variables the protocol's mpirun line sets for the ranks itself (`-x NAME` or `-x NAME=value`): they win over
// NCCL's configuration files.
export function rankVariables(protocol: Protocol): Set<string> {
  const line = `${protocol.commands.nccl} ${protocol.commands.ncclRank ?? ''}`;
  return new Set([...line.matchAll(/(?:^|\s)-x\s+([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!));
}

// Prove on one node that mpirun and the nccl-tests program start in a non-interactive session and that NCCL will use
// RDMA; records the Open MPI version. `found`: where checkTools found each program.
export async function checkNcclEnvironment(ctx: RunContext, node: NodeState, found: ReadonlyMap<string, string>): Promise<void> {
  if (!ctx.protocol.phases.some((p) => p.kind === 'nccl')) return;
  const name = node.spec.name;
  const mpi = await ctx.runLogged(node, cmd.mpirunVersion(), 'mpirun-version', 20_000);
  try {
    if (mpi.exitCode !== 0) throw new ParseError('mpirun-version', 1, `exit ${mpi.exitCode ?? mpi.signal}`);
    node.record.openMpiVersion = parseMpirunVersion(mpi.stdout);
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    const said = `${mpi.stdout}\n${mpi.stderr}`.trim().split('\n').slice(-1)[0] || 'no output';
    failOnNode(
      'preflight-nccl-env',
      name,
      `\`${cmd.mpirunVersion()}\` does not answer as Open MPI in a non-interactive SSH session (${e.reason}): ${said}`,
      `install Open MPI (sudo apt install openmpi-bin libopenmpi-dev) and check \`ssh ${node.spec.host} mpirun --version\`; ${ENV_ADVICE} (${GUIDE})`,
    );
  }
  const test = ncclTestOf(ctx.protocol);
  const path = test === null ? undefined : found.get(test);
  if (test !== null && path !== undefined) await checkLibraries(ctx, node, test, path);
  await checkNcclConf(ctx, node);
}

// The nccl-tests program loads every library it needs in this session's environment (the loader's view: ldd).
async function checkLibraries(ctx: RunContext, node: NodeState, test: string, where: string): Promise<void> {
  const name = node.spec.name;
  let path: string;
  try {
    path = validate.program(where);
    if (!path.startsWith('/')) throw new Error('not an absolute path');
  } catch {
    return failOnNode(
      'preflight-nccl-env',
      name,
      `\`command -v ${test}\` printed ${JSON.stringify(where.slice(0, 80))}, not the path of a program`,
      `name ${test} by its absolute path in the protocol's ncclRank (${GUIDE})`,
    );
  }
  const r = await ctx.runLogged(node, cmd.ldd(path), `ldd:${test}`, 20_000);
  let libs;
  try {
    libs = parseLdd(`${r.stdout}\n${r.stderr}`);
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    return failOnNode(
      'preflight-nccl-env',
      name,
      `cannot tell whether ${test} starts: \`${cmd.ldd(path)}\` (exit ${r.exitCode ?? r.signal}) said ${JSON.stringify(`${r.stdout}${r.stderr}`.trim().split('\n')[0]?.slice(0, 120) ?? '')}`,
      `run \`ssh ${node.spec.host} ldd ${path}\` and make every library resolve (${GUIDE})`,
    );
  }
  if (libs.missing.length) {
    failOnNode(
      'preflight-nccl-env',
      name,
      `${test} (${path}) cannot start in a non-interactive SSH session, the way mpirun starts it: ${libs.missing.map((l) => `${l} => not found`).join(', ')}`,
      `${ENV_ADVICE}; then \`ssh ${node.spec.host} ldd ${path}\` must find every library (${GUIDE})`,
    );
  }
}

// /etc/nccl.conf and ~/.nccl.conf must not turn RDMA off (some DGX OS images are reported to ship NCCL_IB_DISABLE=1).
async function checkNcclConf(ctx: RunContext, node: NodeState): Promise<void> {
  const r = await ctx.runLogged(node, cmd.ncclConf(), 'nccl-conf', 20_000);
  let settings;
  try {
    settings = parseNcclConf(r.stdout);
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    ctx.log.warn({ node: node.spec.name, err: e.message }, 'NCCL configuration files unreadable');
    return;
  }
  const problem = ncclConfProblems(settings, rankVariables(ctx.protocol))[0];
  if (!problem) return;
  const { file, name, value } = problem.setting;
  const sudo = file.startsWith('/etc/') ? 'sudo ' : '';
  const fix = name === 'NCCL_IB_DISABLE' ? `${sudo}sed -i 's/^NCCL_IB_DISABLE=.*/NCCL_IB_DISABLE=0/' ${file}` : `${sudo}sed -i '/^NCCL_NET=/d' ${file}`;
  failOnNode(
    'preflight-nccl-conf',
    node.spec.name,
    `${file} sets ${name}=${value}: ${problem.effect}`,
    `change it on the node (${fix}), or let the protocol's ncclRank set -x ${name === 'NCCL_IB_DISABLE' ? 'NCCL_IB_DISABLE=0' : 'NCCL_NET=IB'} for the ranks (${GUIDE})`,
  );
}
