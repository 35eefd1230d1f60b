import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { Clock } from '../domain/clock.js';
import { systemClock } from '../domain/clock.js';
import { UsageError } from '../domain/errors.js';
import type { NodeSpec } from '../domain/node.js';
import { parseProtocol, type Protocol } from '../protocol/index.js';
import { runQualification, type RunDeps, type RunResult } from '../run/qualify.js';
import { JournalWriteError } from '../run/journal.js';
import { persistentTickSource } from '../run/tick-source.js';
import { VirtualClock } from '../sim/virtual-clock.js';
import { ScaledClock } from '../sim/scaled-clock.js';
import { parseDmi, simulatedSpeed } from '../probes/dmi.js';
import { createLab } from '../sim/lab.js';
import type { CommandRunner } from '../transport/types.js';
import { cmd, validate } from '../transport/commands.js';
import { TransportError } from '../transport/types.js';
import { discoverNode, formatPlan, lockCommands, planRun, type DiscoveredNode } from '../run/dry-run.js';
import { exitCodeFor, EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';
import { formatStatus } from './status.js';
import { makeRunners } from './transports.js';
import { writeReports } from './reports.js';
import { observedRunOf, RunObservers } from '../store/run-observers.js';

// The package root, to find the built-in protocols wherever cablequal is installed.
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface RunArgs {
  sim?: string;
  simFault?: string[];
  seed?: number;
  nodes?: string;
  port?: string;
  protocol?: string;
  label?: string;
  out: string;
  json: boolean;
  acceptNewHostKeys?: boolean;
  sshConfig?: string;
  breakLock?: boolean;
  preflightOnly?: boolean;
  dryRun?: boolean;
  db?: string; // results store: postgres://... or a SQLite file (default <out>/cablequal.db; "off": none)
  metricsPort?: number;
  metricsHost?: string;
  // Speed-up of time against `cablequal sim serve --speed N` nodes (refused against real nodes).
  speed?: number;
}

// Resolve `--protocol`: a built-in name (spark-burnin, quick) or a path.
export function resolveProtocolPath(p: string | undefined, cwd: string): string {
  const name = p ?? 'spark-burnin';
  if (/^[a-z0-9-]+$/.test(name)) return join(PACKAGE_ROOT, 'protocols', `${name}.json`);
  return resolve(cwd, name);
}

// `--nodes a,b` or `a:0,b:1`; `--port` applies to nodes without their own cage.
export function parseNodes(spec: string, port: string | undefined): NodeSpec[] {
  const defaultCage = parseCage(port ?? 'auto', '--port');
  const nodes = spec.split(',').map((part) => {
    const m = /^([^:@\s]+@)?([^:\s]+)(?::(\d|auto))?$/.exec(part.trim());
    if (!m) throw new UsageError(`--nodes: cannot read "${part}": expected host or host:cage, e.g. spark-a:1,spark-b:1`);
    const host = validate.host(m[2]!);
    const user = m[1] ? m[1].slice(0, -1) : undefined;
    return { name: host, host, ...(user ? { user } : {}), cage: m[3] ? parseCage(m[3], `--nodes ${part}`) : defaultCage } satisfies NodeSpec;
  });
  if (nodes.length !== 2) throw new UsageError(`--nodes: a cable joins two nodes, got ${nodes.length}`);
  if (nodes[0]!.name === nodes[1]!.name) throw new UsageError('--nodes: the two nodes must differ');
  return nodes;
}

function parseCage(v: string, where: string): number | 'auto' {
  if (v === 'auto') return 'auto';
  if (v === '0' || v === '1') return Number(v);
  throw new UsageError(`${where}: cage must be 0, 1 or auto, got "${v}"`);
}

// `--protocol` read and validated (shared by run and batch).
export function loadProtocolArg(p: string | undefined, cwd: string): { protocol: Protocol; protocolText: string } {
  const protocolPath = resolveProtocolPath(p, cwd);
  let protocolText: string;
  try {
    protocolText = readFileSync(protocolPath, 'utf8');
  } catch (e) {
    throw new UsageError(`${protocolPath}: cannot read protocol file (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const protocol = parseProtocol(protocolText, p && !/^[a-z0-9-]+$/.test(p) ? p : `protocols/${p ?? 'spark-burnin'}.json`);
  return { protocol, protocolText };
}

// The RunDeps the CLI hands to runQualification, in one place so that a batch cable runs exactly like `cablequal run`.
export function cliRunDeps(o: {
  clock: Clock;
  runners: Map<string, CommandRunner>;
  nodes: NodeSpec[];
  protocol: Protocol;
  protocolText: string;
  outDir: string;
  label: string | null;
  signal: AbortSignal;
  sim?: string;
  onStatus?: RunDeps['onStatus'];
}): RunDeps {
  const runId = newRunId(o.clock);
  return {
    clock: o.clock,
    runners: o.runners,
    nodes: o.nodes,
    protocol: o.protocol,
    protocolText: o.protocolText,
    outDir: o.outDir,
    label: o.label,
    runId,
    log: (runDir) => pino({ level: 'info', base: { runId } }, pino.destination({ dest: join(runDir, 'run.log'), sync: true })),
    signal: o.signal,
    simulated: Boolean(o.sim),
    ...(o.sim ? { scenario: o.sim } : {}),
    makeTickSource: (ns, intervalS) => persistentTickSource(ns, o.clock, { measureCpu: !o.sim, intervalS }),
    ...(o.onStatus ? { onStatus: o.onStatus } : {}),
  };
}

export function newRunId(clock: Clock): string {
  const t = new Date(clock.now()).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${t}-${randomBytes(3).toString('hex')}`;
}

// `--speed N` only makes sense against simulated nodes running at that same speed (`cablequal sim serve --speed N`):
// real time cannot be sped up. Each node says what it is in its DMI strings; checked before anything is loaded.
async function checkSpeedUp(runners: Map<string, CommandRunner>, speed: number): Promise<void> {
  for (const [name, runner] of runners) {
    const r = await runner.run(cmd.dmi(), { timeoutMs: 20_000 });
    let facts;
    try {
      facts = parseDmi(r.stdout);
    } catch {
      facts = null;
    }
    if (!facts?.simulated) {
      const what = facts?.sysVendor ? `DMI sys_vendor "${facts.sysVendor}"` : 'no simulated-lab DMI strings';
      throw new UsageError(`--speed ${speed}: ${name} is not a simulated node (${what}); a real node runs in real time: drop --speed`);
    }
    const theirs = simulatedSpeed(facts);
    if (theirs !== speed) {
      throw new UsageError(`--speed ${speed}: ${name} runs at ${theirs === null ? 'an unknown speed' : `speed x${theirs}`} (\`cablequal sim serve --speed\`): give the same --speed to both`);
    }
  }
}

// `cablequal run`: the main job, on the simulated lab (--sim) or on real nodes over SSH (--nodes).
export async function runCommand(args: RunArgs, io: CliIo, signal: AbortSignal): Promise<number> {
  // --dry-run runs nothing and writes nothing: no store, no metrics.
  if (args.dryRun) {
    if (!args.sim && !args.nodes) throw new UsageError('run: give either --sim <scenario> or --nodes a,b');
    const { protocol, protocolText } = loadProtocolArg(args.protocol, io.cwd);
    return dryRunCommand(args, protocol, protocolText, io);
  }
  // The results store and --metrics-port watch the run; closed on every way out.
  const observers = new RunObservers({ storeDir: resolve(io.cwd, args.out), db: args.preflightOnly ? 'off' : args.db, metricsPort: args.metricsPort, metricsHost: args.metricsHost }, io);
  try {
    return await qualifyCommand(args, io, signal, observers);
  } finally {
    await observers.close();
  }
}

async function qualifyCommand(args: RunArgs, io: CliIo, signal: AbortSignal, observers: RunObservers): Promise<number> {
  if (!args.sim && !args.nodes) throw new UsageError('run: give either --sim <scenario> or --nodes a,b');
  const speed = args.speed ?? 1;
  if (!(Number.isFinite(speed) && speed > 0 && speed <= 1000)) throw new UsageError(`--speed: expected a speed-up factor in (0, 1000], got ${args.speed}`);
  if (speed !== 1 && args.sim) throw new UsageError('--speed: --sim runs in virtual time already (seconds for the whole protocol); --speed is for --nodes served by `cablequal sim serve --speed N`');
  const { protocol, protocolText } = loadProtocolArg(args.protocol, io.cwd);
  await observers.listen();
  let clock: Clock;
  let runners: Map<string, CommandRunner>;
  let nodes: NodeSpec[];
  if (args.sim) {
    clock = new VirtualClock(Math.floor(Date.now() / 1000) * 1000);
    ({ nodes, runners } = simNodes(args, clock));
  } else {
    clock = speed === 1 ? systemClock : new ScaledClock(speed);
    nodes = parseNodes(args.nodes!, args.port);
    runners = await makeRunners(nodes, { acceptNewHostKeys: Boolean(args.acceptNewHostKeys), env: io.env, warn: (l) => io.stderr(`${l}\n`), ...(args.sshConfig ? { sshConfig: resolve(io.cwd, args.sshConfig) } : {}) });
    if (speed !== 1) {
      try {
        await checkSpeedUp(runners, speed);
      } catch (e) {
        await Promise.all([...runners.values()].map((r) => r.close().catch(() => undefined)));
        throw e;
      }
    }
  }
  const outDir = resolve(io.cwd, args.out);
  let lastProgress = Date.now();
  const onStatus = (s: Parameters<typeof formatStatus>[0]) => {
    if (io.isTTY && !args.json) io.stderr(`\r\x1b[2K${formatStatus(s)}`);
    else if (Date.now() - lastProgress >= 30_000) {
      lastProgress = Date.now();
      io.stderr(`${formatStatus(s)}\n`);
    }
  };
  let result: RunResult;
  await observers.open();
  const deps = cliRunDeps({ clock, runners, nodes, protocol, protocolText, outDir, label: args.label ?? null, signal, ...(args.sim ? { sim: args.sim } : {}), onStatus: (s) => {
    onStatus(s);
    observers.status(deps.runId, s);
  } });
  observers.started(observedRunOf(deps));
  try {
    result = await runQualification({
      ...deps,
      preflightOnly: Boolean(args.preflightOnly),
      breakLock: Boolean(args.breakLock),
    });
  } catch (e) {
    // The journal could not even be started (disk full, read-only --out): one line, exit 3.
    await observers.abandoned(deps.runId);
    if (!(e instanceof JournalWriteError)) throw e;
    io.stderr(`cablequal: ERROR: ${e.message}\n`);
    return EXIT.error;
  } finally {
    await Promise.all([...runners.values()].map((r) => r.close().catch(() => undefined)));
  }
  if (io.isTTY && !args.json) io.stderr('\r\x1b[2K');
  const { record, runDir } = result;
  // The journal broke mid-run: no report is rendered on a full disk, only the one-line ERROR (record.json if it fitted).
  const journalWrite = record.reasons.find((r) => r.rule === 'journal-write');
  if (journalWrite) {
    await observers.finished(record, runDir);
    io.stderr(`cablequal: ERROR: ${journalWrite.message}; loads stopped; run directory ${runDir}\n`);
    return EXIT.error;
  }
  const written = args.preflightOnly ? [] : await writeReports(record, runDir, io);
  const certificate = written.find((p) => p.endsWith('certificate.html')) ?? null;
  if (!args.preflightOnly) await observers.finished(record, runDir);
  if (args.json) {
    io.stdout(
      `${JSON.stringify({
        outcome: record.outcome,
        reasons: record.reasons.map((r) => ({ rule: r.rule, message: r.message, ...(r.node ? { node: r.node } : {}), ...(r.lane !== undefined ? { lane: r.lane } : {}), ...(r.phase ? { phase: r.phase } : {}), ...(r.advice ? { advice: r.advice } : {}) })),
        runDir,
        certificate,
        cable: { vendor: record.cable.vendor, pn: record.cable.partNumber, serial: record.cable.serial },
        decidedAtS: record.decidedAtS,
        simulated: record.simulated,
        sampling: { ticks: record.sampling.ticks, intervalP50Ms: record.sampling.intervalP50Ms, intervalP99Ms: record.sampling.intervalP99Ms, skewP99Ms: record.sampling.skewP99Ms },
      })}\n`,
    );
  } else {
    io.stdout(`${record.outcome}${record.simulated ? ' (simulated lab)' : ''}: ${record.cable.vendor ?? '?'} ${record.cable.partNumber ?? ''} serial ${record.cable.serial ?? '?'}\n`);
    for (const r of record.reasons) io.stdout(`  - [${r.rule}] ${r.message}${r.advice ? `\n    what to do: ${r.advice}` : ''}\n`);
    if (record.decidedAtS !== null) io.stdout(`  decided at ${record.decidedAtS.toFixed(0)} s into the run\n`);
    io.stdout(`  run directory: ${runDir}\n`);
  }
  if (signal.aborted) return EXIT.interrupted;
  return exitCodeFor(record.outcome);
}

// The simulated lab of `--sim`: its two nodes, or with --nodes a:0,b:1 renamed and with the cable in those cages (the
// triangle wiring); --port names the cage for nodes that do not.
function simNodes(args: RunArgs, clock: Clock): { nodes: NodeSpec[]; runners: Map<string, CommandRunner> } {
  const named = args.nodes ? parseNodes(args.nodes, args.port) : null;
  const cageOf = (n: NodeSpec) => (n.cage === 'auto' ? undefined : (n.cage as 0 | 1));
  const lab = createLab({
    scenario: args.sim!,
    ...(args.seed !== undefined ? { seed: args.seed } : {}),
    faults: args.simFault ?? [],
    clock,
    ...(named ? { nodeNames: [named[0]!.name, named[1]!.name] as [string, string], cages: [cageOf(named[0]!), cageOf(named[1]!)] as [0 | 1 | undefined, 0 | 1 | undefined] } : {}),
  });
  const nodes = named ?? lab.nodes.map((name) => ({ name, host: name, cage: args.port ? parseCage(args.port, '--port') : ('auto' as const) }));
  return { nodes, runners: new Map(lab.nodes.map((n) => [n, lab.runner(n)])) };
}

// `--dry-run`: print every command the run would execute on each node, in order. With --sim the simulated nodes are
// used; with --nodes only read-only discovery runs on the real nodes (which cage, which rail addresses).
async function dryRunCommand(args: RunArgs, protocol: Protocol, protocolText: string, io: CliIo): Promise<number> {
  let text: string;
  try {
    text = await dryRunPlan(args, protocol, protocolText, io);
  } catch (e) {
    if (!(e instanceof DiscoveryError)) throw e;
    io.stderr(`cablequal: ERROR: dry run: ${e.message}\n`);
    return EXIT.error;
  }
  io.stdout(text);
  return EXIT.ok;
}

// Read-only discovery on a real node failed (unreachable, no cabled cage, a rail without address): nothing to plan.
export class DiscoveryError extends Error {
  override readonly name = 'DiscoveryError';
}

// The dry-run text for one pair of nodes (shared by run and batch).
export async function dryRunPlan(args: Pick<RunArgs, 'sim' | 'nodes' | 'port' | 'seed' | 'acceptNewHostKeys' | 'sshConfig'>, protocol: Protocol, protocolText: string, io: CliIo): Promise<string> {
  const clock = new VirtualClock(Math.floor(Date.now() / 1000) * 1000);
  if (args.sim) {
    const { nodes, runners } = simNodes({ ...args, out: '', json: false, simFault: [] }, clock);
    const plan = await planRun({ protocol, protocolText, nodes, runners, clock, scenario: args.sim });
    const shown = nodes.map((n) => ({ name: n.name, cage: n.cage }));
    return formatPlan(plan, shown, { protocol, real: false });
  }
  const specs = parseNodes(args.nodes!, args.port);
  const real = await makeRunners(specs, { acceptNewHostKeys: Boolean(args.acceptNewHostKeys), env: io.env, warn: (l) => io.stderr(`${l}\n`), ...(args.sshConfig ? { sshConfig: resolve(io.cwd, args.sshConfig) } : {}) });
  let found: DiscoveredNode[];
  try {
    found = await Promise.all(specs.map((s) => discoverNode(real.get(s.name)!, s)));
  } catch (e) {
    if (e instanceof UsageError || !(e instanceof Error)) throw e;
    throw new DiscoveryError(`${e instanceof TransportError ? '' : 'discovery: '}${e.message}`);
  } finally {
    await Promise.all([...real.values()].map((r) => r.close().catch(() => undefined)));
  }
  const [a, b] = found as [DiscoveredNode, DiscoveredNode];
  const lab = createLab({ scenario: 'good-qsfp56', clock, nodeNames: [a.name, b.name], cages: [a.cage, b.cage], railIps: [a.railIps, b.railIps], interfaces: [a.interfaces, b.interfaces] });
  const nodes: NodeSpec[] = specs.map((s, i) => ({ ...s, cage: found[i]!.cage }));
  const plan = await planRun({ protocol, protocolText, nodes, runners: new Map(lab.nodes.map((n) => [n, lab.runner(n)])), clock });
  plan.commands = [...nodes.flatMap((n) => lockCommands(n.name).slice(0, 2)), ...plan.commands, ...nodes.flatMap((n) => lockCommands(n.name).slice(2))];
  return formatPlan(plan, nodes.map((n) => ({ name: n.name, cage: n.cage })), { protocol, real: true });
}
