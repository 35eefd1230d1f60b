// The load generators of a simulated node as processes: ib_write_bw (server, client, loopback) and gpu_burn (mpirun
// and the NCCL tests: programs-mpirun.ts). Each changes the model while it runs and prints in the real tools' layout.
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
  visibleRows,
  WAITING_BANNER,
  type PerftestHeader,
  type StdoutBuffering,
} from './format-perftest.js';
import { pathKind, resolvePath } from './node-files.js';

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

const VALUED = new Set([
  '-d',
  '-p',
  '-s',
  '-D',
  '-i',
  '-x',
  '-q',
  '-n',
  '-m',
  '-I',
  '-u',
  '-t',
  '-Q',
  '-l',
  '-c',
  '--ib-dev',
  '--port',
  '--size',
  '--duration',
]);

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
    else if (w.startsWith('-'))
      continue; // -F, --report_gbits, -a, -R ...
    else a.serverIp = w;
  }
  if (!Number.isInteger(a.port) || a.port < 1 || a.port > 65535) return 'Invalid port number';
  if (!(a.size > 0)) return 'Invalid message size';
  return a;
}

function header(core: LabCore, s: Session, side: 'client' | 'server', device: string, bidir: boolean): PerftestHeader {
  const ipOf = (node: string, cage: number, rail: number) => core.railIpsAt(node, cage)?.[rail] ?? '0.0.0.0';
  const r = (k: number) => Math.floor(uniform(core.seed, s.id, k) * 0xffffff);
  const client = ipOf(s.clientNode, s.clientCage, s.clientRail);
  const server = ipOf(s.serverNode, s.serverCage, s.serverRail);
  const mine = side === 'client' ? client : server;
  const theirs = side === 'client' ? server : client;
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

// Result rows printed so far: `text` ends in the last row's newline; `open` is the same text without that newline
// (perftest fflush()es each row before its newline, so a reader of a running ib_write_bw sees `open`).
interface Rows {
  text: string;
  open: string;
}
const NO_ROWS: Rows = { text: '', open: '' };
const rowCache = new WeakMap<Session, { count: number; rows: Rows }>();

const ROW_S = 5; // perftest --run_infinitely reports every 5 s (the playbook rows: 882805 iterations at 0.1766 Mpps)
// Seconds from an ib_write_bw server's start to its banner (parse, open the device, create the socket).
export const SERVER_STARTUP_S = 0.4;

// Rows printed by lab time tS: one per 5 s interval for --run_infinitely, one final row and the closing line for -D
// or -n runs.
function rows(core: LabCore, s: Session, a: PerftestArgs, tS: number, endedNormally: boolean): Rows {
  const end = Math.min(tS, core.model.sessionEnd(s));
  const gbps = s.gbpsPerDir * (s.bidir ? 2 : 1);
  // Over [from, to) the session had its share of the rails it shares with the other cable's streams (1 alone).
  const noise = (i: number, from: number, to: number) => gbps * core.model.shareOver(s, from, to) * (1 + 0.0004 * normal(core.seed, s.id, 40, i));
  const row = (i: number) => {
    const bw = noise(i, s.startS + (i - 1) * ROW_S, s.startS + i * ROW_S);
    return formatPerftestRow(a.size, Math.round((bw * 1e9 * ROW_S) / (8 * a.size)), 0, bw);
  };
  if (a.infinite) {
    // Row i depends only on the session and i: keep the rows printed so far and add each new one to both texts
    // (no copy of what came before: a 60-minute soak prints 720 rows per client).
    let c = rowCache.get(s);
    if (!c) rowCache.set(s, (c = { count: 0, rows: NO_ROWS }));
    for (let i = c.count + 1; s.startS + i * ROW_S <= end; i++) {
      const r = row(i);
      c.rows = { text: `${c.rows.text}${r}\n`, open: c.rows.text + r };
      c.count = i;
    }
    if (s.startS + c.count * ROW_S <= end) return c.rows;
    // Asked about an earlier time than already rendered (never in a forward-running lab): render afresh.
    let out = '';
    for (let i = 1; s.startS + i * ROW_S <= end; i++) out += `${row(i)}\n`;
    return { text: out, open: out.slice(0, -1) };
  }
  if (!endedNormally) return NO_ROWS;
  const secs = s.plannedEndS! - s.startS;
  const bw = noise(0, s.startS, s.plannedEndS!);
  const peak = a.durationS === null ? bw * 1.004 : 0;
  // What the node's perftest build prints after the table when the run completes (a scenario's perftestTrailer).
  const trailer = (core.nodeSpec(s.clientNode).perftestTrailer ?? []).map((l) => `${l}\n`).join('');
  const text = `${formatPerftestRow(a.size, a.durationS === null ? a.iterations : Math.round((bw * 1e9 * secs) / (8 * a.size)), peak, bw)}\n${RESULT_LINE}\n${trailer}`;
  return { text, open: text.slice(0, -1) };
}

// What a reader of ib_write_bw's stdout sees: `head` and then the rows printed so far (docs/formats.md §5,
// format-perftest.ts visibleRows).
// The same text object for the same rows and state: a reader of a running client asks every second while its rows
// change every 5 s, and each new concatenation would be flattened again by the reader's first search (an hour's soak
// of a cluster's six clients spent seconds copying their outputs).
const shownText = new WeakMap<Rows, { head: string; buffering: StdoutBuffering; exited: boolean; text: string }>();
function shown(head: string, r: Rows, buffering: StdoutBuffering, exited: boolean): string {
  const seen = shownText.get(r);
  if (seen && seen.head === head && seen.buffering === buffering && seen.exited === exited) return seen.text;
  const text = visibleRows(head, r.text, r.open, buffering, exited);
  if (r !== NO_ROWS) shownText.set(r, { head, buffering, exited, text });
  return text;
}

// A status whose stdout is made only when someone reads it: every runner call asks each running load whether it ended
// (SimProcess.check), and none of those asks needs the text.
function lazyStdout(stdout: () => string, stderr: string, ended: boolean, exitCode: number | null): ProcStatus {
  return {
    get stdout() {
      return stdout();
    },
    stderr,
    ended,
    exitCode,
  };
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
    const l: Listener = { node, port: a.port, rail: dev.rail, device: dev.rdmaDevice, session: null, closed: false, readyS: t + SERVER_STARTUP_S };
    if (core.listeners.some((x) => x.node === node && x.port === a.port && !x.closed)) {
      return exitedAtOnce('', " Couldn't bind to port (Address already in use)\n", 1);
    }
    core.listeners.push(l);
    return serverBehaviour(core, l, a, noPeak, buffering, t);
  }
  const owner = core.ownerOf(a.serverIp);
  // A server that has not reached accept() yet refuses the connection like a closed port.
  const l = owner ? core.listeners.find((x) => x.node === owner.node && x.port === a.port && !x.closed && x.session === null && x.readyS <= t) : undefined;
  const loopback = owner?.node === node;
  core.model.advance(t);
  // Both ends must use a device of a cabled cage of their node, joined by one cable (loopback: on one node): a cage
  // without a cable has no address, and two cages are two cables.
  const serverCage = l && owner ? core.locate(owner.node, l.device)?.cage : undefined;
  const cable = core.cableAt(node, dev.cage);
  const serverCable = owner && serverCage !== undefined ? core.cableAt(owner.node, serverCage) : null;
  if (!owner || !l || !cable || !serverCable || (loopback ? false : cable !== serverCable || !core.model.isLinkUp(t, cable))) {
    return exitedAtOnce('', connectFailure(a.serverIp, a.port), 1);
  }
  const spec = cable.spec;
  const caps = [spec.throughput.railGbps];
  if (loopback) caps.push(spec.throughput.loopbackGbps);
  // A throttled rail (PCIe function) caps every transfer through it, at either end.
  for (const [n, rail] of [
    [node, dev.rail],
    [owner.node, l.rail],
  ] as const) {
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
    clientCage: dev.cage,
    serverCage: serverCage!,
    link: cable.index,
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
      const quit = s.quitS !== null && tS >= s.quitS;
      // A completion error makes perftest return (exit flushes stdout); a stop() is a SIGTERM (the buffer is lost).
      const out = () => shown(head, r, buffering, normal || died || quit);
      if (died) return lazyStdout(out, completionFailure('client'), true, 1);
      // Exited by itself (a link-load-stop fault): no more rows, what it printed flushed, nothing said on stderr.
      if (quit) return lazyStdout(out, '', true, 1);
      return lazyStdout(out, '', normal || (tS >= end && s.stoppedS === null && s.diedS !== null), 0);
    },
  };
}

function serverBehaviour(core: LabCore, l: Listener, a: PerftestArgs, noPeak: boolean, buffering: StdoutBuffering, startS: number): ProcBehaviour {
  let stopped = false;
  // The server's half of the test banner, once its client has connected (the session is then fixed).
  let sessionHead: { session: Session; text: string } | null = null;
  const headOf = (s: Session) => {
    if (sessionHead?.session !== s) sessionHead = { session: s, text: formatPerftestHeader(header(core, s, 'server', l.device, s.bidir)) };
    return sessionHead.text;
  };
  return {
    plannedEndS: () => null,
    onStop: (tS) => {
      stopped = true;
      l.closed = true;
      if (l.session) core.model.stopSession(l.session, tS);
    },
    status: (tS): ProcStatus => {
      core.model.advance(tS);
      // Before it has opened its device and reached accept() it has printed at most the peak warning.
      if (tS < l.readyS) return { stdout: shown(noPeak ? PEAK_WARNING : '', NO_ROWS, buffering, false), stderr: '', ended: false, exitCode: null };
      const banner = (noPeak ? PEAK_WARNING : '') + WAITING_BANNER;
      const s = l.session;
      // A reboot of its node ends a server still waiting for its client (killed: its buffered output is lost).
      if (!s && core.model.rebootedSince(l.node, startS, tS)) {
        l.closed = true;
        return { stdout: shown(banner, NO_ROWS, buffering, false), stderr: '', ended: true, exitCode: null, signal: 'SIGKILL' };
      }
      if (!s) return { stdout: shown(banner, NO_ROWS, buffering, false), stderr: '', ended: false, exitCode: null };
      const end = core.model.sessionEnd(s);
      const normal = s.diedS === null && s.stoppedS === null && s.plannedEndS !== null && tS >= s.plannedEndS;
      // A unidirectional server only waits for its client (write_bw.c): with --run_infinitely it never prints a row;
      // with -D or -n it prints the client's report at the end. A -b server measures its own sends like the client.
      const r = a.infinite && !s.bidir ? NO_ROWS : rows(core, s, a, tS, normal);
      if (s.diedS !== null && tS >= s.diedS) {
        l.closed = true;
        return lazyStdout(() => shown(banner + headOf(s), r, buffering, true), completionFailure('server'), true, 1);
      }
      if (tS >= end) l.closed = true;
      const exited = tS >= end && !stopped;
      return lazyStdout(() => shown(banner + headOf(s), r, buffering, exited), '', tS >= end, 0);
    },
  };
}

// gpu_burn's command line, read the way gpu_burn-drv.cpp main() reads it (commit 0831a45, the version with -c and
// compare.ptx as default): any argument CONTAINING -h, -l, -d or -tc sets help, list, doubles or tensor cores (a
// substring test); -m, -i, -c and -s(tts) are prefix tests; -m's value is N MB or N% of available memory; -c takes
// the next argument without skipping it; the run length is the argument after the options (argv[1 + thisParam]).
interface GpuBurnArgs {
  help: boolean;
  list: boolean;
  doubles: boolean;
  tensors: boolean;
  useMb: number | null; // MB, or null for the default 90 % of available
  usePct: number | null;
  kernel: string;
  runLength: number;
  runLengthGiven: boolean;
  syntaxError: string | null;
}

// strtoll-style: the leading integer of a string (0 when none), like C's atoi.
const atoi = (v: string | undefined) => {
  const m = /^\s*([+-]?\d+)/.exec(v ?? '');
  return m ? Number(m[1]) : 0;
};

// decodeUSEMEM: "NNN" MB, "NN%" of available (negative), anything else 0 (a syntax error).
function decodeUseMem(v: string): { mb: number } | { pct: number } | null {
  const m = /^([+-]?\d+)(%?)$/.exec(v);
  if (!m || Number(m[1]) === 0) return null;
  return m[2] ? { pct: Number(m[1]) } : { mb: Number(m[1]) };
}

export function parseGpuBurn(argv: readonly string[]): GpuBurnArgs {
  const a: GpuBurnArgs = {
    help: false,
    list: false,
    doubles: false,
    tensors: false,
    useMb: null,
    usePct: null,
    kernel: 'compare.ptx',
    runLength: 10,
    runLengthGiven: false,
    syntaxError: null,
  };
  let thisParam = 0;
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i]!;
    if (w.includes('-h')) return { ...a, help: true };
    if (w.includes('-l')) return { ...a, list: true };
    if (w.includes('-d')) {
      a.doubles = true;
      thisParam++;
    }
    if (w.includes('-tc')) {
      a.tensors = true;
      thisParam++;
    }
    if (w.startsWith('-m')) {
      thisParam++;
      let v: string | undefined;
      if (w.length > 2) v = w.slice(2);
      else if (i + 1 < argv.length) {
        v = argv[++i]!;
        thisParam++;
      }
      const use = v === undefined ? null : decodeUseMem(v);
      if (!use) return { ...a, syntaxError: 'Syntax error near -m\n' };
      if ('mb' in use) a.useMb = use.mb;
      else a.usePct = use.pct;
    }
    if (w.startsWith('-i')) {
      thisParam++;
      if (w.length <= 2) {
        if (i + 1 >= argv.length) return { ...a, syntaxError: 'Syntax error near -i\n' };
        i++;
        thisParam++;
      }
    }
    if (w.startsWith('-c')) {
      thisParam++;
      if (argv[i + 1] !== undefined) {
        a.kernel = argv[i + 1]!;
        thisParam++;
      }
    }
    if (w.startsWith('-s')) {
      thisParam++;
      if (argv[i + 1] !== undefined) thisParam++;
    }
  }
  if (argv.length - thisParam >= 2) {
    a.runLength = atoi(argv[1 + thisParam]);
    a.runLengthGiven = true;
  }
  return a;
}

// GB10 as CUDA sees it: unified memory, of which this much is free while the node idles (MB).
const GB10_TOTAL_MB = 122502;
const GB10_AVAILABLE_MB = 118950;
const RESULT_BYTES = 268435456; // one 8192 x 8192 float matrix
const ENOMEDIUM = 123; // gpu_burn's exit when no GPU test is alive (errno value on Linux)
// What gpu_burn's parent prints when its GPU test process is gone: the progress line marks it DIED, then it reads EOF
// from the child's pipe and gives up.
const DIED_PROGRESS = '   errors: 0  (DIED!)  temps: --   power: -- ';
const NO_CLIENTS = 'read[0] error 0\n\nNo clients are alive!  Aborting\n';
const EINVAL = 22;

// gpu_burn [options] <seconds>, started in `cwd`: finds its compare kernel (-c, else compare.ptx in cwd) or fails to
// start the GPU test as the real one does (the GPUs stay idle); else loads the node's GPU (scenario permitting) and
// prints progress every tenth of the run.
export function startGpuBurn(core: LabCore, node: string, argv: string[], cwd: string): ProcBehaviour {
  const a = parseGpuBurn(argv);
  if (a.syntaxError) return exitedAtOnce('', a.syntaxError, EINVAL);
  const uuid = Math.floor(uniform(core.seed, streamId(node), 51) * 2 ** 32)
    .toString(16)
    .padStart(8, '0');
  const gpuLine = `GPU 0: NVIDIA GB10 (UUID: GPU-${uuid}-5c2d-4e1b-9a7f-3d2e1c0b9a87)\n`;
  if (a.help) return exitedAtOnce('GPU Burn\nUsage: gpu-burn [OPTIONS] [TIME]\n\n', '', 0);
  if (a.list) return exitedAtOnce('ID 0: NVIDIA GB10, 128526MB\n', '', 0);
  const secs = a.runLength;
  const useMb = a.useMb ?? Math.floor((GB10_AVAILABLE_MB * (a.usePct ?? 90)) / 100);
  const resultBytes = a.doubles ? 2 * RESULT_BYTES : RESULT_BYTES;
  const iters = Math.floor((useMb * 1048576 - 2 * resultBytes) / resultBytes);
  const head =
    `${a.runLengthGiven ? '' : 'Run length not specified in the command line. '}Using compare file: ${a.kernel}\nBurning for ${secs} seconds.\n` +
    gpuLine +
    `Initialized device 0 with ${GB10_TOTAL_MB} MB of memory (${GB10_AVAILABLE_MB} MB available, using ${useMb} MB of it), using ${a.doubles ? 'DOUBLES' : 'FLOATS'}${a.tensors ? ', using Tensor Cores' : ''}\n` +
    `Results are ${resultBytes} bytes each, thus performing ${iters} iterations\n`;
  const kernelPath = resolvePath(cwd, a.kernel);
  const kind = pathKind(core, node, kernelPath);
  if (kind !== 'f' && kind !== 'x') {
    // initCompareKernel() throws in the child, which exits; the parent reads EOF from its pipe and gives up.
    return exitedAtOnce(
      `${head}\r0.0%  proc'd: -1 (0 Gflop/s)${DIED_PROGRESS}`,
      `Couldn't init a GPU test: Error in couldn't find compare kernel: ${a.kernel} (gpu_burn-drv.cpp:240): named symbol not found\n${NO_CLIENTS}`,
      ENOMEDIUM,
    );
  }
  const t = core.now();
  const g = core.model.addGpuLoad(node, t, secs);
  return {
    plannedEndS: () => t + secs,
    onStop: (tS) => core.model.stopGpuLoad(g, tS),
    status: (tS): ProcStatus => {
      const end = Math.min(tS, core.model.gpuLoadEnd(g));
      const finished = g.stoppedS === null && g.exitedS === null && tS >= t + secs;
      // Its GPU test exited by itself (a gpu-load-stop fault): the parent says so and gives up.
      const exited = g.exitedS !== null && tS >= g.exitedS && g.stoppedS === null;
      const stdout = () => {
        let out = head;
        const step = Math.max(1, secs / 10);
        const util = core.model.gpuShare(node, g.startS + 0.5);
        const gflops = Math.round(util * 11800 + 40);
        for (let i = 1; g.startS + i * step <= end + 1e-9 && i <= 10; i++) {
          const done = Math.round(i * step * gflops * 0.0039);
          out += `${(i * 10).toFixed(1)}%  proc'd: ${done} (${gflops} Gflop/s)   errors: 0   temps: ${core.model.gpu(node, g.startS + i * step).temp} C \n`;
        }
        if (finished) out += '\nKilling processes.. Freed memory for dev 0\nUninitted cublas\ndone\n\nTested 1 GPUs:\n\tGPU 0: OK\n';
        // The test's pipe at EOF: processed -1 (DIED!), the last Gflop/s figure kept, at the share of the run elapsed.
        if (exited) out += `\r${Math.min(100, ((g.exitedS! - g.startS) / secs) * 100).toFixed(1)}%  proc'd: -1 (${gflops} Gflop/s)${DIED_PROGRESS}`;
        return out;
      };
      if (exited) return lazyStdout(stdout, NO_CLIENTS, true, ENOMEDIUM);
      return lazyStdout(stdout, '', finished || (g.stoppedS !== null && tS >= g.stoppedS), 0);
    },
  };
}
