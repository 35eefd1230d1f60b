// The load generators of a simulated node as processes: ib_write_bw (server, client, loopback), gpu_burn and
// mpirun all_reduce_perf. Each changes the model while it runs and prints in the real tools' layout.
import type { LabCore, Listener } from './lab-core.js';
import type { Session } from './model.js';
import { normal, streamId, uniform } from './prng.js';
import type { ProcBehaviour, ProcStatus } from './sim-process.js';
import {
  completionFailure,
  connectFailure,
  formatPerftestHeader,
  formatPerftestRow,
  PEAK_WARNING,
  RESULT_LINE,
  visibleStdout,
  WAITING_BANNER,
  type PerftestHeader,
  type StdoutBuffering,
} from './format-perftest.js';
import { formatAllReduce } from './format-nccl.js';

const ended = (stdout: string, stderr: string, exitCode: number): ProcBehaviour => ({
  status: () => ({ stdout, stderr, ended: true, exitCode }),
  plannedEndS: () => null,
  onStop: () => undefined,
});

// A failed start: the process prints and exits at once.
export function exitedAtOnce(stdout: string, stderr: string, exitCode: number): ProcBehaviour {
  return ended(stdout, stderr, exitCode);
}

interface PerftestArgs {
  device: string | null;
  port: number;
  size: number;
  durationS: number | null;
  infinite: boolean;
  bidir: boolean;
  serverIp: string | null;
  iterations: number;
}

const VALUED = new Set(['-d', '-p', '-s', '-D', '-i', '-x', '-q', '-n', '-m', '-I', '-u', '-t', '-Q', '-l', '-c', '--ib-dev', '--port', '--size', '--duration']);

function parsePerftest(argv: string[]): PerftestArgs | string {
  const a: PerftestArgs = { device: null, port: 18515, size: 65536, durationS: null, infinite: false, bidir: false, serverIp: null, iterations: 5000 };
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i]!;
    if (VALUED.has(w)) {
      const v = argv[++i];
      if (v === undefined) return `option requires an argument -- '${w.replace(/^-+/, '')}'`;
      if (w === '-d' || w === '--ib-dev') a.device = v;
      else if (w === '-p' || w === '--port') a.port = Number(v);
      else if (w === '-s' || w === '--size') a.size = Number(v);
      else if (w === '-D' || w === '--duration') a.durationS = Number(v);
      else if (w === '-n') a.iterations = Number(v);
    } else if (w === '--run_infinitely') a.infinite = true;
    else if (w === '-b' || w === '--bidirectional') a.bidir = true;
    else if (w.startsWith('-')) continue; // -F, --report_gbits, -a, -R ...
    else a.serverIp = w;
  }
  if (!Number.isInteger(a.port) || a.port < 1 || a.port > 65535) return 'Invalid port number';
  if (!(a.size > 0)) return 'Invalid message size';
  return a;
}

function header(core: LabCore, s: Session, side: 'client' | 'server', device: string, bidir: boolean): PerftestHeader {
  const ipOf = (node: string, rail: number) => core.nodeSpec(node).railIps[rail]!;
  const r = (k: number) => Math.floor(uniform(core.seed, s.id, k) * 0xffffff);
  const mine = side === 'client' ? ipOf(s.clientNode, s.clientRail) : ipOf(s.serverNode, s.serverRail);
  const theirs = side === 'client' ? ipOf(s.serverNode, s.serverRail) : ipOf(s.clientNode, s.clientRail);
  const swap = side === 'server';
  const pair = (a: number, b: number): [number, number] => (swap ? [b, a] : [a, b]);
  return {
    device,
    bidir,
    client: side === 'client',
    localIp: mine,
    remoteIp: theirs,
    qpn: pair(0x100 + (r(1) % 0x80), 0x100 + (r(2) % 0x80)),
    psn: pair(r(3), r(4)),
    rkey: pair(0x180000 + (r(5) % 0x10000), 0x180000 + (r(6) % 0x10000)),
    vaddr: pair(0xec99bed0000 + r(7) * 4096, 0xffeec950000 + r(8) * 4096),
  };
}

const rowCache = new WeakMap<Session, { count: number; out: string }>();

const ROW_S = 5; // perftest --run_infinitely reports every 5 s (the playbook rows: 882805 iterations at 0.1766 Mpps)

// Rows printed by lab time tS (each ending in \n): one per 5 s interval for --run_infinitely, one final row and
// the closing line for -D or -n runs.
function rows(core: LabCore, s: Session, a: PerftestArgs, tS: number, endedNormally: boolean): string {
  const end = Math.min(tS, core.model.sessionEnd(s));
  const gbps = s.gbpsPerDir * (s.bidir ? 2 : 1);
  const noise = (i: number) => gbps * (1 + 0.0004 * normal(core.seed, s.id, 40, i));
  const row = (i: number) => {
    const bw = noise(i);
    return `${formatPerftestRow(a.size, Math.round((bw * 1e9 * ROW_S) / (8 * a.size)), 0, bw)}\n`;
  };
  if (a.infinite) {
    // Row i depends only on the session and i: keep the rows printed so far instead of re-rendering them on
    // every poll (a 60-minute soak prints 720 rows per client and is polled every tick).
    let c = rowCache.get(s);
    if (!c) rowCache.set(s, (c = { count: 0, out: '' }));
    for (let i = c.count + 1; s.startS + i * ROW_S <= end; i++) {
      c.out += row(i);
      c.count = i;
    }
    if (s.startS + c.count * ROW_S <= end) return c.out;
    // Asked about an earlier time than already rendered (never in a forward-running lab): render afresh.
    let out = '';
    for (let i = 1; s.startS + i * ROW_S <= end; i++) out += row(i);
    return out;
  }
  if (!endedNormally) return '';
  const bw = noise(0);
  const secs = s.plannedEndS! - s.startS;
  const peak = a.durationS === null ? bw * 1.004 : 0;
  return `${formatPerftestRow(a.size, a.durationS === null ? a.iterations : Math.round((bw * 1e9 * secs) / (8 * a.size)), peak, bw)}\n${RESULT_LINE}\n`;
}

// What a reader of ib_write_bw's stdout sees: `printed` is the whole text so far; each row was fflush()ed before its
// newline, so with rows the flushed part ends just before the last character (docs/formats.md §5, format-perftest.ts).
function shown(printed: string, rowsText: string, buffering: StdoutBuffering, exited: boolean): string {
  return visibleStdout(printed, rowsText === '' ? 0 : printed.length - 1, buffering, exited);
}

// Seconds a plain `-n <iterations>` run takes at the session's rate.
const iterSeconds = (a: PerftestArgs, gbps: number) => (a.iterations * a.size * 8) / (gbps * 1e9);

// What `ib_write_bw --version` prints on a simulated node (generated).
const SIM_PERFTEST_VERSION = '6.22';

// ib_write_bw: a server (no address) waits on its port; a client connects to the node owning the address.
export function startIbWriteBw(core: LabCore, node: string, argv: string[], buffering: StdoutBuffering = 'full'): ProcBehaviour {
  if (argv.includes('--version') || argv.includes('-V')) return exitedAtOnce(`Version: ${SIM_PERFTEST_VERSION}\n`, '', 0);
  const a = parsePerftest(argv);
  if (typeof a === 'string') return exitedAtOnce('', ` ${a}\n`, 1);
  // Without -d perftest takes the first RDMA device it finds.
  const dev = a.device ? core.locate(node, a.device) : (core.functions(node)[0] ?? null);
  if (!dev) return exitedAtOnce('', ` Couldn't find device ${a.device}\n Unable to find the Infiniband/RoCE device\n`, 1);
  const noPeak = a.durationS !== null || a.infinite;
  const t = core.now();
  if (a.serverIp === null) {
    const l: Listener = { node, port: a.port, rail: dev.rail, device: dev.rdmaDevice, session: null, closed: false };
    if (core.listeners.some((x) => x.node === node && x.port === a.port && !x.closed)) {
      return exitedAtOnce('', " Couldn't bind to port (Address already in use)\n", 1);
    }
    core.listeners.push(l);
    return serverBehaviour(core, l, a, noPeak, buffering, t);
  }
  const owner = core.ownerOf(a.serverIp);
  const l = owner ? core.listeners.find((x) => x.node === owner.node && x.port === a.port && !x.closed && x.session === null) : undefined;
  const loopback = owner?.node === node;
  core.model.advance(t);
  // Both ends must use a device of their node's cabled cage: another cage has no cable (and no address).
  const serverCage = l && owner ? core.locate(owner.node, l.device)?.cage : undefined;
  if (!owner || !l || dev.cage !== core.cageOf(node) || serverCage !== core.cageOf(owner.node) || (!loopback && !core.model.isLinkUp(t))) {
    return exitedAtOnce('', connectFailure(a.serverIp, a.port), 1);
  }
  const spec = core.spec;
  const caps = [spec.throughput.railGbps];
  if (loopback) caps.push(spec.throughput.loopbackGbps);
  // A throttled rail (PCIe function) caps every transfer through it, at either end.
  for (const [n, rail] of [[node, dev.rail], [owner.node, l.rail]] as const) {
    const cap = core.railCap(n, rail);
    if (cap !== null) caps.push(cap);
  }
  const gbpsPerDir = loopback ? Math.min(...caps.slice(1), spec.throughput.loopbackGbps) : Math.min(...caps);
  const plannedEndS = a.infinite ? null : a.durationS !== null ? t + a.durationS : t + iterSeconds(a, gbpsPerDir);
  const s = core.model.addSession({
    clientNode: node,
    serverNode: owner.node,
    clientRail: dev.rail,
    serverRail: l.rail,
    bidir: a.bidir,
    loopback,
    startS: t,
    plannedEndS,
    gbpsPerDir,
  });
  l.session = s;
  const head = (noPeak ? PEAK_WARNING : '') + formatPerftestHeader(header(core, s, 'client', dev.rdmaDevice, a.bidir));
  return {
    plannedEndS: () => plannedEndS,
    onStop: (tS) => core.model.stopSession(s, tS),
    status: (tS): ProcStatus => {
      core.model.advance(tS);
      const end = core.model.sessionEnd(s);
      const normal = s.diedS === null && s.stoppedS === null && plannedEndS !== null && tS >= plannedEndS;
      const r = rows(core, s, a, tS, normal);
      const died = s.diedS !== null && tS >= s.diedS;
      // A completion error makes perftest return (exit flushes stdout); a stop() is a SIGTERM (the buffer is lost).
      const out = shown(head + r, r, buffering, normal || died);
      if (died) return { stdout: out, stderr: completionFailure('client'), ended: true, exitCode: 1 };
      return { stdout: out, stderr: '', ended: normal || (tS >= end && s.stoppedS === null && s.diedS !== null), exitCode: 0 };
    },
  };
}

function serverBehaviour(core: LabCore, l: Listener, a: PerftestArgs, noPeak: boolean, buffering: StdoutBuffering, startS: number): ProcBehaviour {
  let stopped = false;
  return {
    plannedEndS: () => null,
    onStop: (tS) => {
      stopped = true;
      l.closed = true;
      if (l.session) core.model.stopSession(l.session, tS);
    },
    status: (tS): ProcStatus => {
      core.model.advance(tS);
      const banner = (noPeak ? PEAK_WARNING : '') + WAITING_BANNER;
      const s = l.session;
      // A reboot of its node ends a server still waiting for its client (killed: its buffered output is lost).
      if (!s && core.model.rebootedSince(l.node, startS, tS)) {
        l.closed = true;
        return { stdout: shown(banner, '', buffering, false), stderr: '', ended: true, exitCode: null, signal: 'SIGKILL' };
      }
      if (!s) return { stdout: shown(banner, '', buffering, false), stderr: '', ended: false, exitCode: null };
      const end = core.model.sessionEnd(s);
      const normal = s.diedS === null && s.stoppedS === null && s.plannedEndS !== null && tS >= s.plannedEndS;
      // A unidirectional --run_infinitely server only waits for its client to leave: it prints no rows.
      const r = a.infinite && !s.bidir ? '' : rows(core, s, a, tS, normal);
      const printed = banner + formatPerftestHeader(header(core, s, 'server', l.device, s.bidir)) + r;
      if (s.diedS !== null && tS >= s.diedS) {
        l.closed = true;
        return { stdout: shown(printed, r, buffering, true), stderr: completionFailure('server'), ended: true, exitCode: 1 };
      }
      if (tS >= end) l.closed = true;
      return { stdout: shown(printed, r, buffering, tS >= end && !stopped), stderr: '', ended: tS >= end, exitCode: 0 };
    },
  };
}

// gpu_burn <seconds>: loads the node's GPU (scenario permitting) and prints progress every tenth of the run.
export function startGpuBurn(core: LabCore, node: string, argv: string[]): ProcBehaviour {
  const secs = Number(argv.find((w, i) => i > 0 && /^\d+$/.test(w)) ?? 10);
  const t = core.now();
  const g = core.model.addGpuLoad(node, t, secs);
  const head =
    'GPU 0: NVIDIA GB10 (UUID: GPU-' + Math.floor(uniform(core.seed, streamId(node), 51) * 2 ** 32).toString(16).padStart(8, '0') + '-5c2d-4e1b-9a7f-3d2e1c0b9a87)\n' +
    'Initialized device 0 with 122502 MB of memory (118950 MB available, using 107055 MB of it), using FLOATS\n' +
    'Results are 268435456 bytes each, thus performing 416 iterations\n';
  return {
    plannedEndS: () => t + secs,
    onStop: (tS) => core.model.stopGpuLoad(g, tS),
    status: (tS): ProcStatus => {
      const end = Math.min(tS, core.model.gpuLoadEnd(g));
      let out = head;
      const step = Math.max(1, secs / 10);
      const util = core.model.gpuShare(node, g.startS + 0.5);
      for (let i = 1; g.startS + i * step <= end + 1e-9 && i <= 10; i++) {
        const gflops = Math.round(util * 11800 + 40);
        const done = Math.round(i * step * gflops * 0.0039);
        out += `${(i * 10).toFixed(1)}%  proc'd: ${done} (${gflops} Gflop/s)   errors: 0   temps: ${core.model.gpu(node, g.startS + i * step).temp} C \n`;
      }
      const finished = g.stoppedS === null && tS >= t + secs;
      if (finished) out += '\nKilling processes.. Freed memory for dev 0\nUninitted cublas\ndone\n\nTested 1 GPUs:\n\tGPU 0: OK\n';
      return { stdout: out, stderr: '', ended: finished || (g.stoppedS !== null && tS >= g.stoppedS), exitCode: 0 };
    },
  };
}

const SIZE = /^(\d+(?:\.\d+)?)([KMG]?)$/i;
function bytes(v: string | undefined, dflt: number): number {
  const m = v ? SIZE.exec(v) : null;
  if (!m) return dflt;
  return Math.round(Number(m[1]) * ({ '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[m[2]!.toUpperCase()] ?? 1));
}

// mpirun -np 2 -H ipA:1,ipB:1 ... -x NCCL_IB_HCA=a,b ... all_reduce_perf -b 256M -e 1G -f 2 -g 1
export function startMpirun(core: LabCore, node: string, argv: string[]): ProcBehaviour {
  const t = core.now();
  const opt = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const env = new Map<string, string>();
  argv.forEach((w, i) => {
    if (w === '-x' && argv[i + 1]?.includes('=')) {
      const [k, ...v] = argv[i + 1]!.split('=');
      env.set(k!, v.join('='));
    }
  });
  const prog = argv.find((w) => /(^|\/)all_reduce_perf$/.test(w));
  if (!prog) return exitedAtOnce('', `--------------------------------------------------------------------------\nmpirun was unable to find the specified executable file\n--------------------------------------------------------------------------\n`, 1);
  const hosts = (opt('-H') ?? opt('--host') ?? '').split(',').map((h) => h.split(':')[0]!).filter(Boolean);
  const owners = hosts.map((h) => core.ownerOf(h));
  const bad = hosts.find((_h, i) => owners[i] === null);
  if (bad !== undefined || owners.length !== 2) {
    return exitedAtOnce('', `ssh: Could not resolve hostname ${bad ?? '(none)'}: Name or service not known\n--------------------------------------------------------------------------\nORTE was unable to reliably start one or more daemons.\n--------------------------------------------------------------------------\n`, 1);
  }
  const peer = owners.find((o) => o!.node !== node)?.node ?? core.model.peerOf(node);
  if (core.model.rebooting(peer, t)) {
    return exitedAtOnce('', `ssh: connect to host ${hosts[1]} port 22: No route to host\n--------------------------------------------------------------------------\nORTE was unable to reliably start one or more daemons.\n--------------------------------------------------------------------------\n`, 1);
  }
  const pi = prog ? argv.indexOf(prog) : -1;
  const targs = argv.slice(pi + 1);
  const targ = (f: string) => {
    const i = targs.indexOf(f);
    return i >= 0 ? targs[i + 1] : undefined;
  };
  const netdev = env.get('NCCL_SOCKET_IFNAME') ?? opt('btl_tcp_if_include') ?? 'enp1s0f1np1';
  const hcas = (env.get('NCCL_IB_HCA') ?? 'rocep1s0f1,roceP2p1s0f1').split(',').filter(Boolean);
  const devices = core.spec.nccl.devices === 1 ? hcas.slice(0, 1) : hcas.slice(0, 2);
  const busbw = core.spec.nccl.busbwGBs * (devices.length === 1 && core.spec.nccl.devices !== 1 ? 0.66 : 1);
  const names = [node, peer];
  const r = formatAllReduce({
    hosts: names.map((n, i) => ({ name: core.nodeSpec(n).hostname ?? n, pid: 20000 + Math.floor(uniform(core.seed, streamId(n), 60, Math.floor(t)) * 30000), ip: hosts[i]! })),
    netdev,
    devices,
    minBytes: bytes(targ('-b'), 256 * 1024 ** 2),
    maxBytes: bytes(targ('-e'), 1024 ** 3),
    factor: Number(targ('-f') ?? 2),
    busbwGBs: busbw,
    jitter: (i) => Math.max(-1, Math.min(1, normal(core.seed, 61, Math.floor(t), i) / 2)),
  });
  const end = t + r.seconds;
  return {
    plannedEndS: () => end,
    onStop: () => undefined,
    status: (tS): ProcStatus => {
      if (!core.model.isLinkUp(Math.min(tS, end))) {
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
