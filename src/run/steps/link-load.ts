import { renderCommand } from '../../protocol/index.js';
import { parseIbWriteBw } from '../../probes/ib-write-bw.js';
import { ParseError } from '../../domain/errors.js';
import { quoteInput } from '../../domain/text.js';
import type { CommandResult, RemoteProcess } from '../../transport/types.js';
import type { NodeState, RunContext } from '../context.js';
import { SetupError, setupReason } from '../run-errors.js';

const BASE_PORT = 18515;
// How long an ib_write_bw server may take to open its device and listen (a Spark takes well under a second).
export const SERVER_READY_TIMEOUT_S = 20;
const READY_POLL_MS = 250;
// The banner perftest's server prints just before it waits in accept() (write_bw.c; also with rdma_cm).
const LISTENING = /Waiting for client (?:rdma_cm QP )?to connect/;

// One ib_write_bw pair: the server on the receiving node, the client on the sending node, on one rail.
export interface LoadStream {
  rail: number;
  from: string; // sending node (client)
  to: string; // receiving node (server)
  device: string; // the client's RDMA device
  server: RemoteProcess;
  client: RemoteProcess;
}

// The ib_write_bw pairs that load both rails of the cable, one unidirectional stream per rail and direction.
export interface LinkLoad {
  streams: LoadStream[];
  startedS: number;
}

// A load stream's rows so far: Gb/s of one direction of one rail, one row per interval of --run_infinitely.
export interface StreamRows {
  rail: number;
  from: string;
  to: string;
  device: string;
  gbps: number[];
  error?: string;
  // Lines of the client's output the parser does not know (docs/formats.md §5: builds differ in what they print
  // around the table), in the order printed: kept in the journal and reported, never a reason to refuse the rows.
  warnings?: string[];
}

// The rows of an output and the lines it printed that the parser does not know.
interface Parsed {
  gbps: number[];
  warnings: string[];
}

// perftest's server writes its banner with printf and then blocks in accept(): redirected to a file, stdout is block
// buffered and the banner would stay in the buffer. Servers therefore run line-buffered (`stdbuf -oL`, as NVIDIA's
// perftest pair script does); a template that does not say so gets it here. Clients need not: perftest fflush()es each
// result row as it prints it (src/sim/format-perftest.ts), so a soak reads the rows as they come.
export function lineBuffered(command: string): string {
  return /^\s*stdbuf\s/.test(command) ? command : `stdbuf -oL ${command}`;
}

function tail(text: string, lines = 3): string {
  return text
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .slice(-lines)
    .join(' | ');
}

const PENDING = Symbol('pending');

// How a process ended, or PENDING while it runs (null: it failed without a result). Racing the `done` promise itself
// matters: racing `done.then(...)` against an already resolved promise always loses by one microtask, so a process
// that had ended would look alive.
export async function endedWith(p: RemoteProcess): Promise<CommandResult | null | typeof PENDING> {
  try {
    return await Promise.race([p.done, Promise.resolve(PENDING)]);
  } catch {
    return null;
  }
}

// Poll a started ib_write_bw server until it listens (its banner is in its output): null then, else why not (it exited
// first, or did not listen within SERVER_READY_TIMEOUT_S), with its output tail. No fixed head start.
export async function untilListening(server: RemoteProcess, sleep: (ms: number) => Promise<void>, device: string): Promise<string | null> {
  for (let waitedMs = 0; ; waitedMs += READY_POLL_MS) {
    const exited = await endedWith(server);
    if (exited !== PENDING) {
      const out = exited ?? (await server.output());
      return `ib_write_bw server on ${device} (${server.name}) exited before it listened (exit ${exited?.exitCode ?? 'unknown'}): ${tail(`${out.stdout}\n${out.stderr}`) || 'no output'}`;
    }
    const out = await server.output();
    if (LISTENING.test(out.stdout)) return null;
    if (waitedMs >= SERVER_READY_TIMEOUT_S * 1000) {
      return `ib_write_bw server on ${device} (${server.name}) did not listen within ${SERVER_READY_TIMEOUT_S} s: ${tail(`${out.stdout}\n${out.stderr}`) || 'no output'}`;
    }
    await sleep(READY_POLL_MS);
  }
}

// What to do about a server that did not listen (the advice of ERROR ib-write-bw-server).
export function serverAdvice(why: string): string {
  return /exited before/.test(why)
    ? 'check the device name and that nothing else holds the port (ib_write_bw on the node by hand, with the same arguments)'
    : 'run the server command by hand on the node; it must print "Waiting for client to connect" (run it line-buffered: stdbuf -oL)';
}

// Wait until a started ib_write_bw server listens; it exiting first, or not listening in time, is an ERROR.
export async function waitUntilListening(ctx: RunContext, node: NodeState, server: RemoteProcess, device: string): Promise<void> {
  const why = await untilListening(server, (ms) => ctx.sleep(ms), device);
  if (why) throw new SetupError(setupReason('ib-write-bw-server', `${node.spec.name}: ${why}`, { node: node.spec.name, advice: serverAdvice(why) }));
}

// One direction of the cable on both rails: ib_write_bw servers on the receiving node, clients on the sending one.
// `index` numbers the direction (0 from the first node to the second, 1 back): it picks the TCP ports and the suffix of
// the process names, so a direction is started the same way whether it runs alone or beside the other.
interface DirectionPlan {
  src: NodeState;
  dst: NodeState;
  index: number;
}

// Start ib_write_bw on both rails of each direction given, all at once (one rail alone carries only ~100 Gb/s on a
// Spark). Unidirectional streams rather than `-b` pairs, because a -b end prints a figure built from its own sends
// scaled by a factor that changed between perftest versions (run_inf_bi_factor): one stream per direction gives each
// direction's Gb/s as it is.
async function startDirections(ctx: RunContext, directions: DirectionPlan[], opts: { msgSize: number; tag: string }): Promise<LinkLoad> {
  const plan = directions.flatMap(({ src, dst, index }) =>
    ([0, 1] as const).map((rail) => ({
      rail,
      src,
      dst,
      suffix: index === 0 ? '' : '-rev',
      port: BASE_PORT + ctx.portOffset + 2 * index + rail,
    })),
  );
  // All servers, then (once each listens) all clients, each group started at once: over SSH a start is a round trip.
  // A start or wait that fails (a server that does not listen, a FAIL decided meanwhile) stops what did start.
  const started: RemoteProcess[] = [];
  const all = async <T>(work: Promise<T>[]): Promise<T[]> => {
    const settled = await Promise.allSettled(work);
    const failed = settled.find((x) => x.status === 'rejected');
    if (!failed) return settled.map((x) => (x as PromiseFulfilledResult<T>).value);
    await ctx.stopProcesses(started);
    throw failed.reason;
  };
  const servers = await all(
    plan.map(async (p) => {
      const values = { tcpPort: p.port, msgSize: opts.msgSize, bidirectional: '', rdmaDevice: p.dst.cage!.rails[p.rail].rdmaDevice };
      const server = await ctx.startProcess(
        p.dst,
        lineBuffered(renderCommand(ctx.protocol.commands.ibWriteBwServer, values)),
        `${opts.tag}-server-${p.rail}${p.suffix}`,
      );
      started.push(server);
      return server;
    }),
  );
  await all(plan.map((p, i) => waitUntilListening(ctx, p.dst, servers[i]!, p.dst.cage!.rails[p.rail].rdmaDevice)));
  const streams = await all(
    plan.map(async (p, i): Promise<LoadStream> => {
      const device = p.src.cage!.rails[p.rail].rdmaDevice;
      const values = { tcpPort: p.port, msgSize: opts.msgSize, bidirectional: '', rdmaDevice: device, serverIp: p.dst.railIps[p.rail]! };
      const client = await ctx.startProcess(p.src, renderCommand(ctx.protocol.commands.ibWriteBwClient, values), `${opts.tag}-client-${p.rail}${p.suffix}`);
      started.push(client);
      return { rail: p.rail, from: p.src.spec.name, to: p.dst.spec.name, device, server: servers[i]!, client };
    }),
  );
  return { streams, startedS: ctx.tS };
}

// The directions of the cable in order: from the first node to the second, then back.
function cableDirections(ctx: RunContext): [DirectionPlan, DirectionPlan] {
  const [a, b] = ctx.nodes as [NodeState, NodeState];
  return [
    { src: a, dst: b, index: 0 },
    { src: b, dst: a, index: 1 },
  ];
}

// Start full link load on both rails: one ib_write_bw stream per rail from the first node to the second and, when
// bidirectional, one back at the same time (the soaks' load).
export async function startLinkLoad(ctx: RunContext, opts: { msgSize: number; bidirectional: boolean; tag: string }): Promise<LinkLoad> {
  const [there, back] = cableDirections(ctx);
  return startDirections(ctx, opts.bidirectional ? [there, back] : [there], opts);
}

// Start one direction of the cable alone on both rails (0: from the first node to the second, 1: back), as NVIDIA's
// playbook measures a pair of Sparks: the other direction idle, so the figure is that direction's alone.
export async function startOneWayLoad(ctx: RunContext, opts: { msgSize: number; direction: 0 | 1; tag: string }): Promise<LinkLoad> {
  return startDirections(ctx, [cableDirections(ctx)[opts.direction]], opts);
}

// The rows of a running ib_write_bw's output: perftest fflush()es a row before its newline, so the last row is read
// whole without one; a last line caught half written is left for the next read.
function runningRows(stdout: string): Parsed {
  try {
    return averages(stdout);
  } catch (e) {
    const whole = stdout.slice(0, stdout.lastIndexOf('\n') + 1);
    if (!(e instanceof ParseError) || whole.length === stdout.length) throw e;
    return averages(whole);
  }
}

// The rows and the warnings of whole lines (a last line without its newline may still be being written: its warning
// waits for the read that finds it whole, as a half-written row does).
function averages(text: string): Parsed {
  const r = parseIbWriteBw(text);
  const last = text
    .slice(text.lastIndexOf('\n') + 1)
    .replace(/\r$/, '')
    .trim();
  const warnings = last !== '' && r.warnings.at(-1) === last ? r.warnings.slice(0, -1) : r.warnings;
  return { gbps: r.rows.map((x) => x.bwAverageGbps), warnings };
}

// What one client's output read so far parsed into: its text up to its last newline, the part of it before the first
// row (the title, the header fields and the table's header, which say the unit), and the rows of that text.
interface ParsedSoFar {
  text: string;
  head: string;
  rows: number[];
  warnings: string[];
}
const parsedSoFar = new WeakMap<RemoteProcess, ParsedSoFar>();
const TABLE_HEADER_LINE = /^.*#bytes\s+#iterations.*\n/m;

// runningRows over a client's output that only grows, parsing only what it printed since the last read (with the head
// of its output for the unit): re-parsing the whole output at each read made a 60-minute soak quadratic. Anything
// the new text does not parse into rows alone is left to runningRows over the whole output, as before.
function newRows(client: RemoteProcess, stdout: string): Parsed {
  const before = parsedSoFar.get(client);
  const end = stdout.lastIndexOf('\n') + 1;
  if (before && grewFrom(stdout, before.text)) {
    try {
      const fresh = stdout.slice(before.text.length, end);
      const more = fresh.trim() ? averages(before.head + fresh) : { gbps: [], warnings: [] };
      const rows = [...before.rows, ...more.gbps];
      const warnings = [...before.warnings, ...more.warnings];
      parsedSoFar.set(client, { ...before, text: stdout.slice(0, end), rows, warnings });
      const tail = stdout.slice(end);
      return { gbps: tail.trim() ? [...rows, ...halfWritten(before.head + tail).gbps] : rows, warnings };
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
    }
  }
  const parsed = runningRows(stdout);
  const header = TABLE_HEADER_LINE.exec(stdout);
  if (header && header.index + header[0].length <= end) {
    const complete = stdout.slice(0, end);
    const head = stdout.slice(0, header.index + header[0].length);
    // The whole lines alone (the rows may have come from the half-written last line too); none yet: no cache.
    const whole = complete === stdout ? parsed : halfWritten(complete);
    if (whole.gbps.length) parsedSoFar.set(client, { text: complete, head, rows: whole.gbps, warnings: whole.warnings });
  }
  return parsed;
}

// A process's output only grows; that it is the same text so far is checked at its start and where the last read
// ended (comparing the whole of an hour's output at every read cost more than the parse it saves).
function grewFrom(now: string, before: string): boolean {
  const edge = Math.min(256, before.length);
  return now.length >= before.length && now.startsWith(before.slice(0, edge)) && now.startsWith(before.slice(-edge), before.length - edge);
}

// The row a last line without its newline holds, when it is one whole (none while it is still being written).
function halfWritten(text: string): Parsed {
  try {
    return averages(text);
  } catch (e) {
    if (e instanceof ParseError) return { gbps: [], warnings: [] };
    throw e;
  }
}

// Per stream, the throughput rows printed so far by its client (the sending end measures its own sends).
export async function linkLoadRows(load: LinkLoad): Promise<StreamRows[]> {
  return Promise.all(
    load.streams.map(async (s) => {
      const out = await s.client.output();
      const base = { rail: s.rail, from: s.from, to: s.to, device: s.device };
      try {
        const { gbps, warnings } = newRows(s.client, out.stdout);
        return { ...base, gbps, ...(warnings.length ? { warnings } : {}) };
      } catch (e) {
        if (!(e instanceof ParseError)) throw e;
        return { ...base, gbps: [], error: `${e.reason}${out.stderr ? `; stderr: ${out.stderr.trim().split('\n').slice(-1)[0]}` : ''}` };
      }
    }),
  );
}

// The operator's line for a line of an ib_write_bw client's output that the parser does not know (screened: it is
// the node's text).
export function loadOutputWarning(r: StreamRows, line: string): string {
  return `ib_write_bw ${r.from} -> ${r.to} on rail ${r.rail} (${r.device}) printed a line cablequal does not know (kept in the journal): ${quoteInput(line, 120)}`;
}

// The latest Gb/s of each direction summed over the rails (the live status shows the weaker direction).
export function latestPerDirection(rows: StreamRows[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) {
    const last = r.gbps[r.gbps.length - 1];
    if (last === undefined) continue;
    const key = `${r.from}->${r.to}`;
    out.set(key, (out.get(key) ?? 0) + last);
  }
  return out;
}

// How a load process stands: running, ended with its result, or unknown (its status could not be read: the node did
// not answer, and whether it still runs is for its rows, its utilisation and the sampler to tell).
export async function processState(p: RemoteProcess): Promise<'running' | 'unknown' | CommandResult> {
  const r = await endedWith(p);
  return r === PENDING ? 'running' : r === null ? 'unknown' : r;
}

// What each client printed so far, kept raw (a benchmark cut short by a decided FAIL states no figure, but nothing it
// collected is lost).
export async function keepClientOutput(ctx: RunContext, load: LinkLoad): Promise<void> {
  for (const s of load.streams) {
    const out = await s.client.output();
    const node = ctx.node(s.from);
    ctx.journal.append({ type: 'raw', tS: ctx.tS, phase: ctx.currentPhase, node: node.spec.name, what: `${s.client.name}:stopped`, ...out });
  }
}

export async function stopLinkLoad(ctx: RunContext, load: LinkLoad): Promise<void> {
  await ctx.stopProcesses(load.streams.flatMap((s) => [s.client, s.server]));
}
