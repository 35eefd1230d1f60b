// mpirun of a simulated node: OpenMPI's command line (MIMD app contexts) and the NCCL tests it launches on the ranks'
// nodes: all_reduce_perf between the two ends of one cable, and all_gather_perf across every node of a cluster
// (programs-collective.ts). Each prints in the real tools' layout.
import type { LabCore } from './lab-core.js';
import { normal, streamId, uniform } from './prng.js';
import type { ProcBehaviour, ProcStatus } from './sim-process.js';
import { formatAllReduce, type NcclRankRun } from './format-nccl.js';
import { missing, programPath } from './node-files.js';
import { exitedAtOnce } from './programs-load.js';
import { nodeOfHost as nodeOfRank, startCollective } from './programs-collective.js';
const SIZE = /^(\d+(?:\.\d+)?)([KMG]?)$/i;
function bytes(v: string | undefined, dflt: number): number {
  const m = v ? SIZE.exec(v) : null;
  if (!m) return dflt;
  return Math.round(Number(m[1]) * ({ '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[m[2]!.toUpperCase()] ?? 1));
}

// One OpenMPI application context: `[-np N] [-H host:slots,...] [-x VAR[=value]]... program args`.
export interface AppContext {
  np: number;
  hosts: string[];
  env: Map<string, string>;
  program: string;
  args: string[];
}

const MPI_VALUED = new Set([
  '-np',
  '-n',
  '--np',
  '-c',
  '-H',
  '--host',
  '-host',
  '-x',
  '--map-by',
  '--bind-to',
  '--rank-by',
  '--hostfile',
  '-hostfile',
  '--machinefile',
  '-wdir',
  '--wdir',
  '--prefix',
  '--output-filename',
]);
const MPI_PAIRED = new Set(['--mca', '-mca', '--gmca', '--prtemca', '--pmixmca']);

// mpirun's command line in OpenMPI's MIMD form: global options, then app contexts separated by ":" words. MCA
// parameters (--mca) are global whatever context they sit in; -x exports into its own context (a bare -x VAR passes
// the launcher's value, here an unknown one).
export function parseMpirun(argv: readonly string[]): { mca: Map<string, string>; contexts: AppContext[] } | string {
  const mca = new Map<string, string>();
  const contexts: AppContext[] = [];
  const groups: string[][] = [[]];
  for (const w of argv.slice(1)) {
    if (w === ':') groups.push([]);
    else groups[groups.length - 1]!.push(w);
  }
  for (const g of groups) {
    const c: AppContext = { np: 1, hosts: [], env: new Map(), program: '', args: [] };
    let i = 0;
    for (; i < g.length; i++) {
      const w = g[i]!;
      if (MPI_PAIRED.has(w)) {
        if (g[i + 2] === undefined) return `${w} needs a parameter name and a value`;
        mca.set(g[i + 1]!, g[i + 2]!);
        i += 2;
      } else if (MPI_VALUED.has(w)) {
        const v = g[++i];
        if (v === undefined) return `${w} needs a value`;
        if (w === '-np' || w === '-n' || w === '--np' || w === '-c') c.np = Number(v);
        else if (w === '-H' || w === '--host' || w === '-host')
          c.hosts.push(
            ...v
              .split(',')
              .map((h) => h.split(':')[0]!)
              .filter(Boolean),
          );
        else if (w === '-x') {
          const [k, ...rest] = v.split('=');
          c.env.set(k!, rest.length ? rest.join('=') : '');
        }
      } else if (w.startsWith('-')) continue;
      else break;
    }
    c.program = g[i] ?? '';
    c.args = g.slice(i + 1);
    contexts.push(c);
  }
  return { mca, contexts };
}

const DASHES = '-'.repeat(74);

// Does a node have an address matching an OpenMPI *_if_include value (interface names or CIDR subnets, comma-separated)?
function nodeMatchesInclude(core: LabCore, node: string, include: string): boolean {
  const ips = [0, 1].flatMap((cage) => core.railIpsAt(node, cage) ?? []);
  return include.split(',').some((item) => {
    const cidr = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(item);
    if (cidr) {
      const num = (ip: string) => ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);
      const block = 2 ** (32 - Number(cidr[2]));
      return ips.some((ip) => Math.floor(num(ip) / block) === Math.floor(num(cidr[1]!) / block));
    }
    const loc = core.locate(node, item);
    return loc !== null && loc.netdev === item && core.cableAt(node, loc.cage) !== null;
  });
}

// mpirun ... all_reduce_perf ...: one rank per app context slot, on the node that owns the -H address. Each rank is
// judged with its OWN environment against its own node's cabled cage: NCCL_IB_HCA devices of another cage are not
// active there (a rank with none falls back to TCP sockets, one with one device uses one rail), and an
// NCCL_SOCKET_IFNAME with no address there stops NCCL's bootstrap.
export function startMpirun(core: LabCore, node: string, argv: string[]): ProcBehaviour {
  const t = core.now();
  // Open MPI's answer to --version (generated, in the layout of samples/mpirun-version/*).
  if (argv[1] === '--version' && argv.length === 2)
    return exitedAtOnce('mpirun (Open MPI) 4.1.6\n\nReport bugs to http://www.open-mpi.org/community/help/\n', '', 0);
  const parsed = parseMpirun(argv);
  if (typeof parsed === 'string') return exitedAtOnce('', `${DASHES}\nmpirun: ${parsed}\n${DASHES}\n`, 1);
  const { mca, contexts } = parsed;
  const notFound = `${DASHES}\nmpirun was unable to find the specified executable file\n${DASHES}\n`;
  // A cluster's collective: every rank all_gather_perf, one per node (programs-collective.ts).
  if (contexts.every((c) => /(^|\/)all_gather_perf$/.test(c.program))) {
    for (const c of contexts)
      for (const h of c.hosts.length ? c.hosts : [node]) if (!programPath(core, nodeOfRank(core, h) ?? node, c.program)) return exitedAtOnce('', notFound, 1);
    return startCollective(core, node, contexts);
  }
  if (contexts.some((c) => !/(^|\/)all_reduce_perf$/.test(c.program))) return exitedAtOnce('', notFound, 1);
  // Ranks in order: each context's -np slots over its -H hosts (the launcher's own node when none is given).
  const ranks: { host: string; ctx: AppContext }[] = [];
  for (const c of contexts)
    for (let i = 0; i < c.np; i++) ranks.push({ host: c.hosts[Math.min(i, c.hosts.length - 1)] ?? core.nodeSpec(node).railIps[0], ctx: c });
  const owners = ranks.map((r) => core.ownerOf(r.host));
  const bad = ranks.find((_r, i) => owners[i] === null);
  if (bad !== undefined || ranks.length !== 2) {
    return exitedAtOnce(
      '',
      `ssh: Could not resolve hostname ${bad?.host ?? '(none)'}: Name or service not known\n${DASHES}\nORTE was unable to reliably start one or more daemons.\n${DASHES}\n`,
      1,
    );
  }
  const names = owners.map((o) => o!.node);
  const peerIdx = names.findIndex((n) => n !== node);
  if (peerIdx >= 0) {
    const peer = names[peerIdx]!;
    const host = ranks[peerIdx]!.host;
    if (core.model.rebooting(peer, t)) {
      return exitedAtOnce(
        '',
        `ssh: connect to host ${host} port 22: No route to host\n${DASHES}\nORTE was unable to reliably start one or more daemons.\n${DASHES}\n`,
        1,
      );
    }
    const how = core.nodeSpec(peer).sshFromPeer ?? 'ok';
    if (how !== 'ok') {
      const why =
        how === 'unknown-host-key'
          ? 'Host key verification failed.'
          : `${core.nodeSpec(peer).user ?? 'nvidia'}@${host}: Permission denied (publickey,password).`;
      return exitedAtOnce('', `${why}\n${DASHES}\nORTE was unable to reliably start one or more daemons.\n${DASHES}\n`, 1);
    }
  }
  for (const n of names) {
    if (!programPath(core, n, ranks[names.indexOf(n)]!.ctx.program)) return exitedAtOnce('', notFound, 1);
  }
  // A rank whose node's session cannot find libnccl does not start (the loader's message, then Open MPI's).
  const noLib = ranks.find((r, i) => missing(core, names[i]!).has('libnccl.so.2') && !r.ctx.env.get('LD_LIBRARY_PATH'));
  if (noLib) {
    const loader = `${noLib.ctx.program}: error while loading shared libraries: libnccl.so.2: cannot open shared object file: No such file or directory\n`;
    return exitedAtOnce(
      '',
      `${loader}${DASHES}\nPrimary job  terminated normally, but 1 process returned\na non-zero exit code. Per user-direction, the job has been aborted.\n${DASHES}\n`,
      127,
    );
  }
  const oob = mca.get('oob_tcp_if_include');
  if (oob !== undefined && names.some((n) => !nodeMatchesInclude(core, n, oob))) {
    return exitedAtOnce(
      '',
      `${DASHES}\nNone of the TCP networks specified to be included for out-of-band communications\ncould be found:\n\n  Value given: ${oob}\n\nPlease revise the specification and try again.\n${DASHES}\n`,
      1,
    );
  }
  // The cage a rank runs over on its node: that of the first device its NCCL_IB_HCA names there, else of its
  // NCCL_SOCKET_IFNAME, else the node's (first) cable's; its two functions (rail 0, rail 1), as that node names them.
  const cageOfRank = (n: string, env: Map<string, string>) => {
    const named = [...(env.get('NCCL_IB_HCA') ?? '').split(',').map((h) => h.replace(/^[=^]/, '').split(':')[0]!), env.get('NCCL_SOCKET_IFNAME') ?? ''];
    const index = named.map((d) => core.locate(n, d)?.cage).find((c) => c !== undefined && core.cableAt(n, c) !== null) ?? core.cageOf(n);
    return { index, rails: core.functions(n).filter((f) => f.cage === index), cable: core.cableAt(n, index) };
  };
  // The cable NCCL runs over: the first rank's (a rank on another cable has its devices down: see below).
  const cable = cageOfRank(names[0]!, ranks[0]!.ctx.env).cable ?? core.model.links[0]!;
  const linkUp = core.model.isLinkUp(t, cable);
  const rankRuns: NcclRankRun[] = ranks.map((r, i) => {
    const n = names[i]!;
    const spec = core.nodeSpec(n);
    const cage = cageOfRank(n, r.ctx.env);
    const ifname = r.ctx.env.get('NCCL_SOCKET_IFNAME') || (cage.rails[0]?.netdev ?? '');
    const ifLoc = core.locate(n, ifname);
    const ip = ifLoc && ifLoc.netdev === ifname && ifLoc.cage === cage.index ? (core.railIpsAt(n, ifLoc.cage)?.[ifLoc.rail] ?? '') : '';
    const hcaEnv = r.ctx.env.get('NCCL_IB_HCA');
    const named = hcaEnv
      ? hcaEnv
          .split(',')
          .map((h) => h.replace(/^[=^]/, '').split(':')[0]!)
          .filter(Boolean)
      : cage.rails.map((x) => x.rdmaDevice);
    // Devices of the cable's cage are ACTIVE; a cage without that cable has none (and a down link has none at all).
    let devices = named.filter((d) => core.locate(n, d)?.rdmaDevice === d && core.locate(n, d)!.cage === cage.index && cage.cable === cable && linkUp);
    if (cable.spec.nccl.devices === 1) devices = devices.slice(0, 1);
    // /etc/nccl.conf's NCCL_IB_DISABLE=1 applies unless the rank's environment sets the variable (docs/formats.md §13).
    if (!r.ctx.env.has('NCCL_IB_DISABLE') && /^NCCL_IB_DISABLE=\s*[1-9]/m.test(spec.ncclConf ?? '')) devices = [];
    const pid = 20000 + Math.floor(uniform(core.seed, streamId(n), 60, Math.floor(t)) * 30000);
    return { name: spec.hostname ?? n, pid, ip, netdev: ifname, devices, ...(spec.ncclVersion ? { ncclVersion: spec.ncclVersion } : {}) };
  });
  const pi = argv.indexOf(contexts[0]!.program);
  const targs = contexts[0]!.args.length ? contexts[0]!.args : argv.slice(pi + 1);
  const targ = (f: string) => {
    const i = targs.indexOf(f);
    return i >= 0 ? targs[i + 1] : undefined;
  };
  const minBytes = bytes(targ('-b'), 256 * 1024 ** 2);
  const maxBytes = bytes(targ('-e'), 1024 ** 3);
  const factor = Number(targ('-f') ?? 2);
  // NCCL's bootstrap needs an address on NCCL_SOCKET_IFNAME in every rank.
  const noIf = rankRuns.find((h) => h.ip === '');
  if (noIf) {
    const p = `${noIf.name}:${noIf.pid}:${noIf.pid} [0]`;
    const head = formatAllReduce({ hosts: rankRuns.map((h) => ({ ...h, devices: [] })), minBytes, maxBytes, factor, busbwGBs: 1, jitter: () => 0 })
      .text.split('\n')
      .slice(0, 8)
      .join('\n');
    return exitedAtOnce(
      `${head}\n${p} NCCL INFO NCCL_SOCKET_IFNAME set to ${noIf.netdev}\n`,
      `${p} bootstrap.cc:45 NCCL WARN Bootstrap : no socket interface found\n${noIf.name}: Test NCCL failure common.cu:1160 'invalid usage (run with NCCL_DEBUG=WARN for details) / '\n .. ${noIf.name} pid ${noIf.pid}: Test failure common.cu:1132\n`,
      1,
    );
  }
  // A rank without an active RDMA device falls back to TCP sockets (~2.9 GB/s busbw on a Spark, the ~2.8-3 GB/s of
  // docs/formats.md); one device means one rail (the single-rail figure); else the scenario's figure.
  const socket = rankRuns.some((h) => h.devices.length === 0);
  const fewest = Math.min(...rankRuns.map((h) => h.devices.length));
  const nccl = cable.spec.nccl;
  const busbw = socket ? Math.min(2.9, nccl.busbwGBs) : nccl.busbwGBs * (fewest === 1 && nccl.devices !== 1 ? 0.66 : 1);
  const r = formatAllReduce({
    hosts: rankRuns,
    minBytes,
    maxBytes,
    factor,
    busbwGBs: busbw,
    jitter: (i) => Math.max(-1, Math.min(1, normal(core.seed, 61, Math.floor(t), i) / 2)),
  });
  const end = t + r.seconds;
  return {
    plannedEndS: () => end,
    onStop: () => undefined,
    status: (tS): ProcStatus => {
      if (!core.model.isLinkUp(Math.min(tS, end), cable)) {
        const h = core.nodeSpec(node).hostname ?? node;
        const stdout = r.text.split('\n#\n#   ')[0]!.split('\n').slice(0, 8).join('\n') + '\n';
        return {
          stdout,
          stderr: `${h}: Test NCCL failure common.cu:1279 'remote process exited or there was a network error / '\n .. ${h} pid ${20000}: Test failure common.cu:1132\n`,
          ended: true,
          exitCode: 1,
        };
      }
      return tS >= end ? { stdout: r.text, stderr: '', ended: true, exitCode: 0 } : { stdout: '', stderr: '', ended: false, exitCode: null };
    },
  };
}
