import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { Clock } from '../domain/clock.js';
import { systemClock } from '../domain/clock.js';
import { UsageError } from '../domain/errors.js';
import { didYouMean } from '../domain/suggest.js';
import type { NodeSpec } from '../domain/node.js';
import { ownOrBuiltin, parseProtocol, type Protocol } from '../protocol/index.js';
import { runQualification, type RunDeps, type RunResult } from '../run/qualify.js';
import { JournalWriteError } from '../run/journal.js';
import { journalSignerOf } from '../run/journal-signing.js';
import { labKeyPath, readLabKey } from '../report/sign.js';
import { persistentTickSource } from '../run/tick-source.js';
import { VirtualClock } from '../sim/virtual-clock.js';
import { ScaledClock } from '../sim/scaled-clock.js';
import { parseDmi, simulatedSpeed, type DmiFacts } from '../probes/dmi.js';
import { createLab } from '../sim/lab.js';
import type { CommandRunner } from '../transport/types.js';
import { cmd, validate } from '../transport/commands.js';
import { checkDir, ensureDir } from '../io/ensure-dir.js';
import { readInputText } from '../io/read-input.js';
import { printable, quoteInput } from '../domain/text.js';
import type { RunRecord } from '../domain/record.js';
import { TransportError } from '../transport/types.js';
import { discoverNode, formatPlan, formatPlanJson, lockCommands, planRun, type DiscoveredNode, type RunPlan } from '../run/dry-run.js';
import { exitCodeFor, EXIT } from './exit-codes.js';
import { SPEED } from './options.js';
import { signalExitCode, type CliIo, type HangupMode } from './io.js';
import { formatStatus } from './status.js';
import { makeRunners } from './transports.js';
import { writeReports } from './reports.js';
import { observedRunOf, RunObservers } from '../store/run-observers.js';
import { cableJson } from '../report/run-json.js';
import { reasonJson } from '../domain/result.js';
import { printOutcome } from './run-summary.js';

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
  dryRun?: boolean;
  onHangup?: HangupMode;
  db?: string; // results store: postgres://... or a SQLite file (default <out>/cablequal.db; "off": none)
  metricsPort?: number;
  metricsHost?: string;
  metricsLingerS?: number; // --metrics-linger (default: none)
  // Speed-up of time against `cablequal sim serve --speed N` nodes (refused against real nodes).
  speed?: number;
  // Every cable of a cluster of 2-8 nodes, from its cabling map (run-cluster.ts).
  cluster?: boolean;
}

// `cablequal preflight` takes the run's node, port, protocol and output options, and no cable options.
export type PreflightArgs = Pick<RunArgs, 'sim' | 'nodes' | 'port' | 'protocol' | 'out' | 'json' | 'acceptNewHostKeys' | 'sshConfig'>;

// Resolve `--protocol`: a built-in name (spark-burnin, quick) or a path.
export function resolveProtocolPath(p: string | undefined, cwd: string): string {
  const name = p ?? 'spark-burnin';
  if (/^[a-z0-9-]+$/.test(name)) return join(PACKAGE_ROOT, 'protocols', `${name}.json`);
  return resolve(cwd, name);
}

// The built-in protocols' names (protocols/*.json, the schema aside).
function builtinProtocols(): string[] {
  return readdirSync(join(PACKAGE_ROOT, 'protocols'))
    .filter((f) => f.endsWith('.json') && !f.endsWith('.schema.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

// `--nodes a,b` or `a:0,b:1`; `--port` applies to nodes without their own cage.
export function parseNodes(spec: string, port: string | undefined): NodeSpec[] {
  const nodes = parseNodeList(spec, port);
  if (nodes.length !== 2) throw new UsageError(`--nodes: a cable joins two nodes, got ${nodes.length}`);
  if (nodes[0]!.name === nodes[1]!.name) throw new UsageError('--nodes: the two nodes must differ');
  return nodes;
}

// The nodes of a cluster: 2 to 8, each once, without cages (the cabling map finds them).
export function clusterNodes(spec: string): NodeSpec[] {
  const nodes = parseNodeList(spec, undefined);
  if (spec.includes(':')) throw new UsageError("--cluster: give the nodes without cages (--nodes a,b,c): the cabling map finds each cable's cages");
  if (nodes.length < 2 || nodes.length > 8) throw new UsageError(`--nodes: a cluster has 2 to 8 nodes, got ${nodes.length}`);
  if (new Set(nodes.map((n) => n.name)).size !== nodes.length) throw new UsageError('--nodes: every node must be named once');
  return nodes;
}

// Any number of nodes in the `--nodes` syntax (user@host:cage, comma separated).
export function parseNodeList(spec: string, port: string | undefined): NodeSpec[] {
  const defaultCage = parseCage(port ?? 'auto', '--port');
  const nodes = spec.split(',').map((part) => {
    if (part.length > 300) throw new UsageError(`--nodes: ${quoteInput(part)} is too long for a host name (at most 253 characters)`);
    const m = /^([^:@\s]+@)?([^:\s]+)(?::(\d|auto))?$/.exec(part.trim());
    if (!m) throw new UsageError(`--nodes: cannot read ${quoteInput(part)}: expected host or host:cage, e.g. spark-a:1,spark-b:1`);
    const host = validate.host(m[2]!);
    const user = m[1] ? m[1].slice(0, -1) : undefined;
    return { name: host, host, ...(user ? { user } : {}), cage: m[3] ? parseCage(m[3], `--nodes ${part}`) : defaultCage } satisfies NodeSpec;
  });
  return nodes;
}

function parseCage(v: string, where: string): number | 'auto' {
  if (v === 'auto') return 'auto';
  if (v === '0' || v === '1') return Number(v);
  // `run` and `batch` take both cages at once (handled before the nodes are read); a preflight reads one cage.
  if (v === 'both') throw new UsageError(`${where} both: a preflight checks one cage: run it with --port 0, then with --port 1`);
  throw new UsageError(`${where}: cage must be 0, 1 or auto, got ${quoteInput(v)}${/^\d+$/.test(v) ? '' : didYouMean(v, ['auto', 'both'])}`);
}

// `--protocol` read and validated (shared by run and batch).
export function loadProtocolArg(p: string | undefined, cwd: string): { protocol: Protocol; protocolText: string } {
  const protocolPath = resolveProtocolPath(p, cwd);
  let protocolText: string;
  try {
    protocolText = readInputText(protocolPath, 'protocol');
  } catch (e) {
    if (!existsSync(protocolPath) && p !== undefined && /^[a-z0-9-]+$/.test(p))
      throw new UsageError(
        `--protocol ${p}: no built-in protocol of that name${didYouMean(p, builtinProtocols()) || ` (built in: ${builtinProtocols().join(', ')})`} (or give a protocol file's path)`,
      );
    throw e;
  }
  const protocol = ownOrBuiltin(parseProtocol(protocolText, p && !/^[a-z0-9-]+$/.test(p) ? p : `protocols/${p ?? 'spark-burnin'}.json`));
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
  // The nodes said they are the simulated lab (sim serve over real SSH: nodeDmi).
  simulatedNodes?: boolean;
  onStatus?: RunDeps['onStatus'];
  onWarning?: RunDeps['onWarning'];
  // Hears of the run's logger once it exists (to note a SIGHUP in run.log).
  onLogger?: (log: pino.Logger) => void;
  // Where the lab key is looked for ($CABLEQUAL_LAB_KEY, else the default path): it signs the journal as it is written
  // (absent: an unsigned journal).
  env?: NodeJS.ProcessEnv;
}): RunDeps {
  const runId = newRunId(Date.now());
  const labKey = o.env ? readLabKey(labKeyPath(undefined, o.env)) : null;
  return {
    journalSigner: labKey ? journalSignerOf(labKey) : null,
    clock: o.clock,
    runners: o.runners,
    nodes: o.nodes,
    protocol: o.protocol,
    protocolText: o.protocolText,
    outDir: o.outDir,
    label: o.label,
    runId,
    log: (runDir) => {
      const log = pino({ level: 'info', base: { runId } }, pino.destination({ dest: join(runDir, 'run.log'), sync: true }));
      o.onLogger?.(log);
      return log;
    },
    signal: o.signal,
    simulated: Boolean(o.sim) || Boolean(o.simulatedNodes),
    ...(o.sim ? { scenario: o.sim } : {}),
    makeTickSource: (ns, intervalS) => persistentTickSource(ns, o.clock, { intervalS }),
    ...(o.onStatus ? { onStatus: o.onStatus } : {}),
    ...(o.onWarning ? { onWarning: o.onWarning } : {}),
  };
}

// A run id: the wall-clock time it started (never a simulated clock's) and six random hex digits.
export function newRunId(nowMs: number): string {
  const t = new Date(nowMs)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${t}-${randomBytes(3).toString('hex')}`;
}

// What each node says it is in its DMI strings, read before a run starts: a node of the simulated lab served over real
// SSH (`cablequal sim serve`) says so there, and the run is marked simulated from its journal's first line, its run.log,
// live state and metrics on, not only once the record is built. A node that did not answer them gives why (the run's
// preflight then finds out about it, as before).
export async function nodeDmi(runners: Map<string, CommandRunner>): Promise<Map<string, DmiFacts | { unanswered: string }>> {
  const facts = await Promise.all(
    [...runners].map(async ([name, runner]): Promise<[string, DmiFacts | { unanswered: string }]> => {
      try {
        return [name, parseDmi((await runner.run(cmd.dmi(), { timeoutMs: 20_000 })).stdout)];
      } catch (e) {
        return [name, { unanswered: e instanceof Error ? e.message : String(e) }];
      }
    }),
  );
  return new Map(facts);
}

// Whether any node says it is the simulated lab.
export const saysSimulated = (facts: Map<string, DmiFacts | { unanswered: string }>): boolean =>
  [...facts.values()].some((f) => 'simulated' in f && f.simulated);

// `--speed N` only makes sense against simulated nodes running at that same speed (`cablequal sim serve --speed N`):
// real time cannot be sped up. Each node says what it is in its DMI strings; checked before anything is loaded.
function checkSpeedUp(dmi: Map<string, DmiFacts | { unanswered: string }>, speed: number): void {
  for (const [name, answer] of dmi) {
    if ('unanswered' in answer) throw new UsageError(`--speed ${speed}: ${name} did not say what it is (its DMI strings: ${printable(answer.unanswered)})`);
    const facts = answer;
    if (!facts.simulated) {
      const what = facts.sysVendor ? `DMI sys_vendor "${facts.sysVendor}"` : 'no simulated-lab DMI strings';
      throw new UsageError(`--speed ${speed}: ${name} is not a simulated node (${what}); a real node runs in real time: drop --speed`);
    }
    const theirs = simulatedSpeed(facts);
    if (theirs !== speed) {
      throw new UsageError(
        `--speed ${speed}: ${name} runs at ${theirs === null ? 'an unknown speed' : `speed x${theirs}`} (\`cablequal sim serve --speed\`): give the same --speed to both`,
      );
    }
  }
}

// What `run` and `preflight` set up before anything runs on a node: protocol, output directory, transports.
// The options `run`, `preflight` and `run --dry-run` refuse before anything runs: no target, an empty label, a speed-up
// out of range or with --sim, simulator options against real nodes.
function checkRunOptions(args: RunArgs, what: string): void {
  if (!args.sim && !args.nodes) throw new UsageError(`${what}: give either --sim <scenario> or --nodes a,b`);
  if (args.label !== undefined && args.label.trim() === '')
    throw new UsageError('--label: empty; give the cable a label or leave --label out (its EEPROM serial names the report folder)');
  const speed = args.speed ?? 1;
  if (!(Number.isFinite(speed) && speed >= SPEED.min && speed <= SPEED.max))
    throw new UsageError(`--speed: expected a speed-up factor from ${SPEED.min} to ${SPEED.max}, got ${args.speed}`);
  // In process the controller's own work runs at the lab's pace too: beyond this it falls behind its sampling ticks.
  if (args.sim && speed > SPEED.simMax)
    throw new UsageError(
      `--speed ${speed}: with --sim at most ${SPEED.simMax} (the controller's own work would take simulated minutes and miss samples); leave --speed out to run in virtual time`,
    );
  if (!args.sim && (args.simFault?.length || args.seed !== undefined))
    throw new UsageError(`${what}: --sim-fault and --seed apply to the simulated lab only (--sim)`);
}

export async function prepare(args: RunArgs, io: CliIo, what: string, observers: RunObservers | null) {
  checkRunOptions(args, what);
  const speed = args.speed ?? 1;
  const { protocol, protocolText } = loadProtocolArg(args.protocol, io.cwd);
  await observers?.listen();
  let clock: Clock;
  let runners: Map<string, CommandRunner>;
  let nodes: NodeSpec[];
  if (args.sim) {
    // Virtual time (the whole protocol in seconds), or with --speed N the lab's time at N times real time, so a
    // person can watch the run on the terminal, the dashboard's live page and --metrics-port as it goes.
    clock = args.speed === undefined ? new VirtualClock(Math.floor(Date.now() / 1000) * 1000) : new ScaledClock(speed);
    ({ nodes, runners } = simNodes(args, clock));
  } else {
    clock = speed === 1 ? systemClock : new ScaledClock(speed);
    nodes = args.cluster ? clusterNodes(args.nodes!) : parseNodes(args.nodes!, args.port);
    runners = await makeRunners(nodes, {
      acceptNewHostKeys: Boolean(args.acceptNewHostKeys),
      env: io.env,
      warn: (l) => io.stderr(`${l}\n`),
      ...(args.sshConfig ? { sshConfig: resolve(io.cwd, args.sshConfig) } : {}),
    });
  }
  try {
    const dmi = args.sim ? null : await nodeDmi(runners);
    if (speed !== 1 && dmi) checkSpeedUp(dmi, speed);
    // A bad --out (a file, /proc/x, read-only) is refused before anything runs on a node; nothing is created
    // before the arguments are known good.
    const outDir = ensureDir(resolve(io.cwd, args.out), '--out');
    return { clock, runners, nodes, protocol, protocolText, outDir, simulatedNodes: dmi !== null && saysSimulated(dmi) };
  } catch (e) {
    await Promise.all([...runners.values()].map((r) => r.close().catch(() => undefined)));
    throw e;
  }
}

// Run the protocol (or its preflight only) with the CLI's status output; an exit code when no journal could be started.
// `observers` (run only): the results store and --metrics-port, told when the run starts, how it goes and how it ended.
async function execute(args: RunArgs, io: CliIo, signal: AbortSignal, what: 'run' | 'preflight', observers: RunObservers | null): Promise<RunResult | number> {
  const { clock, runners, nodes, protocol, protocolText, outDir, simulatedNodes } = await prepare(args, io, what, observers);
  let lastProgress = Date.now();
  let lastPhase = '';
  // A terminal gets one live line; a log (not a TTY) gets a line at each phase change and every 30 s.
  const onStatus = (s: Parameters<typeof formatStatus>[0]) => {
    // Fitted to the terminal's width: a wrapped line would leave its first row behind at each redraw.
    if (io.isTTY && !args.json) io.stderr(`\r\x1b[2K${formatStatus(s, io.columns?.() ?? 80)}`);
    else if (s.phase !== lastPhase || Date.now() - lastProgress >= 30_000) {
      lastProgress = Date.now();
      lastPhase = s.phase;
      io.stderr(`${formatStatus(s)}\n`);
    }
  };
  // SIGHUP (the terminal or the SSH session to the controller closed): noted in run.log; the run goes on unless
  // the operator chose --on-hangup abort.
  let logger: pino.Logger | null = null;
  io.onHangup?.(args.onHangup ?? 'continue', () =>
    logger?.warn(
      { signal: 'SIGHUP', onHangup: args.onHangup ?? 'continue' },
      args.onHangup === 'abort' ? 'controller terminal closed: stopping the run' : 'controller terminal closed: the run goes on (cablequal status finds it)',
    ),
  );
  let deps: RunDeps | null = null;
  try {
    await observers?.open();
    const d = cliRunDeps({
      clock,
      runners,
      nodes,
      protocol,
      protocolText,
      outDir,
      label: what === 'preflight' ? 'preflight' : (args.label ?? null),
      signal,
      ...(args.sim ? { sim: args.sim } : {}),
      simulatedNodes,
      onStatus: (s) => {
        onStatus(s);
        observers?.status(d.runId, s);
      },
      // A warning takes the status line's place on a terminal, then the status line comes back.
      onWarning: (l) => io.stderr(`${io.isTTY && !args.json ? '\r\x1b[2K' : ''}cablequal: warning: ${printable(l)}\n`),
      onLogger: (l) => (logger = l),
      env: io.env,
    });
    deps = d;
    observers?.started(observedRunOf(d));
    return await runQualification({ ...d, preflightOnly: what === 'preflight', breakLock: Boolean(args.breakLock) });
  } catch (e) {
    if (deps) await observers?.abandoned(deps.runId);
    // The journal could not even be started (disk full, read-only --out): one line, exit 3.
    if (!(e instanceof JournalWriteError)) throw e;
    io.stderr(`cablequal: ERROR: ${printable(e.message)}\n`);
    return EXIT.error;
  } finally {
    io.onHangup?.('continue');
    await Promise.all([...runners.values()].map((r) => r.close().catch(() => undefined)));
    if (io.isTTY && !args.json) io.stderr('\r\x1b[2K');
  }
}

// The exit code of a finished run: the signal's (130 SIGINT, 143 SIGTERM, 129 SIGHUP) when one stopped it.
export function finalCode(record: RunRecord, io: CliIo, signal: AbortSignal): number {
  if (!signal.aborted) return exitCodeFor(record.outcome);
  const by = io.interruptedBy?.();
  return by ? signalExitCode(by) : EXIT.interrupted;
}

// The reasons, each on its own line with its advice; text from cables and nodes is shown escaped.
export function printReasons(record: RunRecord, io: CliIo): void {
  for (const r of record.reasons)
    io.stdout(`  - [${printable(r.rule)}] ${printable(r.message)}${r.advice ? `\n    what to do: ${printable(r.advice)}` : ''}\n`);
}

// A run that broke its journal mid-way (disk full, journal deleted, run directory unwritable): the loads are stopped,
// the record and the run report are written where they could be (the run directory, else the fallback named), and
// the one-line ERROR says where.
export async function journalBroke(result: RunResult, io: CliIo): Promise<number | null> {
  const journalWrite = result.record.reasons.find((r) => r.rule === 'journal-write');
  if (!journalWrite) return null;
  await writeReports(result.record, result.runDir, io, undefined, result.journalContents);
  const where = result.rescuedFrom
    ? `the run directory ${result.rescuedFrom} could not take them: journal, record and run report are in ${result.runDir}`
    : `journal, record and run report in ${result.runDir}`;
  io.stderr(`cablequal: ERROR: ${printable(journalWrite.message)}; loads stopped; ${printable(where)}\n`);
  return EXIT.error;
}

// `cablequal run`: the main job, on the simulated lab (--sim) or on real nodes over SSH (--nodes).
export async function runCommand(args: RunArgs, io: CliIo, signal: AbortSignal): Promise<number> {
  // --dry-run runs nothing and writes nothing: no store, no metrics.
  if (args.dryRun) {
    if (args.port === 'both')
      throw new UsageError(
        "--dry-run --port both: plan each cage on its own (--port 0, then --port 1); the run of both runs the same commands, the second cable's link-load ports 10 above the first's",
      );
    // Every option a run would refuse is refused here too; --out is checked, never created.
    checkRunOptions(args, 'run');
    checkDir(resolve(io.cwd, args.out), '--out');
    const { protocol, protocolText } = loadProtocolArg(args.protocol, io.cwd);
    return dryRunCommand(args, protocol, protocolText, io, signal);
  }
  // The results store and --metrics-port watch the run; closed on every way out.
  const observers = new RunObservers(
    { storeDir: resolve(io.cwd, args.out), db: args.db, metricsPort: args.metricsPort, metricsHost: args.metricsHost, metricsLingerS: args.metricsLingerS },
    io,
    { signal },
  );
  try {
    return await runObserved(args, io, signal, observers);
  } finally {
    await observers.close();
  }
}

async function runObserved(args: RunArgs, io: CliIo, signal: AbortSignal, observers: RunObservers): Promise<number> {
  if (args.cluster) {
    const { runCluster } = await import('./run-cluster.js');
    return runCluster(args, io, signal, observers);
  }
  if (args.port === 'both') {
    const { runBothCages } = await import('./run-both.js');
    return runBothCages(args, io, signal, observers);
  }
  const result = await execute(args, io, signal, 'run', observers);
  if (typeof result === 'number') return result;
  const { record, runDir } = result;
  const broke = await journalBroke(result, io);
  if (broke !== null) {
    await observers.finished(record, runDir);
    return broke;
  }
  const { certificate, document } = await finishRun(result, io, observers);
  if (args.json) {
    io.stdout(
      `${JSON.stringify({
        ...cableJson(record, { runDir, certificate, document }),
        sampling: {
          ticks: record.sampling.ticks,
          intervalP50Ms: record.sampling.intervalP50Ms,
          intervalP99Ms: record.sampling.intervalP99Ms,
          skewP99Ms: record.sampling.skewP99Ms,
        },
      })}\n`,
    );
  } else {
    printOutcome(record, runDir, io, '', document);
  }
  return finalCode(record, io, signal);
}

// A finished run's reports written and the store told: the HTML document written (a certificate only for a
// qualification that judged the cable).
export async function finishRun(result: RunResult, io: CliIo, observers: RunObservers): Promise<{ certificate: string | null; document: string | null }> {
  const written = await writeReports(result.record, result.runDir, io, undefined, result.journalContents);
  const document = written.find((p) => p.endsWith('.html')) ?? null;
  await observers.finished(result.record, result.runDir);
  return { certificate: document?.endsWith('certificate.html') ? document : null, document };
}

// `cablequal preflight`: checks both nodes without loading anything; says what each node showed, no cable verdict.
export async function preflightCommand(args: PreflightArgs, io: CliIo, signal: AbortSignal): Promise<number> {
  const result = await execute({ ...args }, io, signal, 'preflight', null);
  if (typeof result === 'number') return result;
  const { record, runDir } = result;
  const broke = await journalBroke(result, io);
  if (broke !== null) return broke;
  const ready = record.outcome === 'PASS';
  if (args.json) {
    io.stdout(
      `${JSON.stringify({
        ready,
        outcome: record.outcome,
        reasons: record.reasons.map(reasonJson),
        nodes: record.nodes,
        runDir,
        simulated: record.simulated,
      })}\n`,
    );
  } else {
    io.stdout(`preflight ${ready ? 'OK: both nodes are ready' : `${record.outcome}: the nodes are not ready`}${record.simulated ? ' (simulated lab)' : ''}\n`);
    for (const n of record.nodes) io.stdout(`  ${printable(describeNode(n))}\n`);
    if (!ready) printReasons(record, io);
    io.stdout(`  run directory: ${runDir}\n`);
  }
  return finalCode(record, io, signal);
}

// One line per node: the cage and its rails, link speed, lanes, FEC, versions (what preflight read).
function describeNode(n: RunRecord['nodes'][number]): string {
  const parts = [
    n.cage ? `cage ${n.cage.index} (${n.cage.rails.map((r) => r.netdev).join(', ')})` : 'no cage found',
    n.speedMbps != null ? `${n.speedMbps} Mb/s` : null,
    n.lanes != null ? `${n.lanes} lanes` : null,
    n.fecActive ? `FEC ${n.fecActive}` : null,
    n.kernel ? `kernel ${n.kernel}` : null,
    n.firmware ? `firmware ${n.firmware}` : null,
    n.gpuDriverVersion ? `GPU driver ${n.gpuDriverVersion}${n.cudaVersion ? ` (CUDA ${n.cudaVersion})` : ''}` : null,
    n.openMpiVersion ? `Open MPI ${n.openMpiVersion}` : null,
  ].filter(Boolean);
  return `${n.name}: ${parts.join(', ')}`;
}

// The simulated lab of `--sim`: its two nodes, or with --nodes a:0,b:1 renamed and with the cable in those cages (the
// triangle wiring); --port names the cage for nodes that do not.
function simNodes(args: RunArgs, clock: Clock): { nodes: NodeSpec[]; runners: Map<string, CommandRunner> } {
  if (args.cluster) {
    // A cluster's every node, under its scenario's names; the map gives each cable its cages.
    const lab = createLab({ scenario: args.sim!, ...(args.seed !== undefined ? { seed: args.seed } : {}), faults: args.simFault ?? [], clock });
    const names = args.nodes ? clusterNodes(args.nodes).map((n) => n.name) : lab.nodes;
    const stray = names.find((n) => !lab.nodes.includes(n));
    if (stray) throw new UsageError(`--nodes: no simulated node "${stray}" in ${args.sim} (its nodes: ${lab.nodes.join(', ')})`);
    return { nodes: names.map((name) => ({ name, host: name, cage: 'auto' })), runners: new Map(names.map((n) => [n, lab.runner(n)])) };
  }
  const named = args.nodes ? parseNodes(args.nodes, args.port) : null;
  const cageOf = (n: NodeSpec) => (n.cage === 'auto' ? undefined : (n.cage as 0 | 1));
  const lab = createLab({
    scenario: args.sim!,
    ...(args.seed !== undefined ? { seed: args.seed } : {}),
    faults: args.simFault ?? [],
    clock,
    ...(named
      ? {
          nodeNames: [named[0]!.name, named[1]!.name] as [string, string],
          cages: [cageOf(named[0]!), cageOf(named[1]!)] as [0 | 1 | undefined, 0 | 1 | undefined],
        }
      : {}),
  });
  const nodes = named ?? lab.nodes.map((name) => ({ name, host: name, cage: args.port !== undefined ? parseCage(args.port, '--port') : ('auto' as const) }));
  return { nodes, runners: new Map(lab.nodes.map((n) => [n, lab.runner(n)])) };
}

// `--dry-run`: print every command the run would execute on each node, in order. With --sim the simulated nodes are
// used; with --nodes only read-only discovery runs on the real nodes (which cage, which rail addresses). Ctrl-C stops
// it as it stops a run (exit 130), with nothing printed but the interruption.
async function dryRunCommand(args: RunArgs, protocol: Protocol, protocolText: string, io: CliIo, signal: AbortSignal): Promise<number> {
  let text: string;
  try {
    text = await dryRunPlan(args, protocol, protocolText, io, signal, args.json);
  } catch (e) {
    if (!(e instanceof DiscoveryError)) throw e;
    io.stderr(`cablequal: ERROR: dry run: ${printable(e.message)}\n`);
    return EXIT.error;
  }
  if (signal.aborted) {
    io.stderr('cablequal: dry run interrupted: no plan printed, nothing was run on any node\n');
    const by = io.interruptedBy?.();
    return by ? signalExitCode(by) : EXIT.interrupted;
  }
  io.stdout(text);
  return EXIT.ok;
}

// Read-only discovery on a real node failed (unreachable, no cabled cage, a rail without address): nothing to plan.
export class DiscoveryError extends Error {
  override readonly name = 'DiscoveryError';
}

// The dry-run text for one pair of nodes (shared by run and batch); `json`: the plan as one JSON object instead.
export async function dryRunPlan(
  args: Pick<RunArgs, 'sim' | 'nodes' | 'port' | 'seed' | 'acceptNewHostKeys' | 'sshConfig' | 'simFault'>,
  protocol: Protocol,
  protocolText: string,
  io: CliIo,
  signal?: AbortSignal,
  json = false,
): Promise<string> {
  const render = (plan: RunPlan, nodes: { name: string; cage: number | 'auto' }[], real: boolean) =>
    json ? formatPlanJson(plan, nodes, protocol, real) : formatPlan(plan, nodes, { protocol, real });
  const clock = new VirtualClock(Math.floor(Date.now() / 1000) * 1000);
  if (args.sim) {
    // --sim-fault is checked as a run checks it (a lab with the faults), then the plan is made without them: faults
    // are what the simulated lab does, not commands the run sends.
    if (args.simFault?.length) simNodes({ ...args, out: '', json: false }, clock);
    const { nodes, runners } = simNodes({ ...args, out: '', json: false, simFault: [] }, clock);
    const plan = await planRun({ protocol, protocolText, nodes, runners, clock, scenario: args.sim, ...(signal ? { signal } : {}) });
    return render(
      plan,
      nodes.map((n) => ({ name: n.name, cage: n.cage })),
      false,
    );
  }
  const specs = parseNodes(args.nodes!, args.port);
  const real = await makeRunners(specs, {
    acceptNewHostKeys: Boolean(args.acceptNewHostKeys),
    env: io.env,
    warn: (l) => io.stderr(`${l}\n`),
    ...(args.sshConfig ? { sshConfig: resolve(io.cwd, args.sshConfig) } : {}),
  });
  let found: DiscoveredNode[];
  try {
    found = await Promise.all(specs.map((s) => discoverNode(real.get(s.name)!, s)));
  } catch (e) {
    if (e instanceof UsageError || !(e instanceof Error)) throw e;
    throw new DiscoveryError(`${e instanceof TransportError ? '' : 'discovery: '}${e.message}`);
  } finally {
    await Promise.all([...real.values()].map((r) => r.close().catch(() => undefined)));
  }
  if (signal?.aborted) return '';
  const [a, b] = found as [DiscoveredNode, DiscoveredNode];
  const lab = createLab({
    scenario: 'good-qsfp56',
    clock,
    nodeNames: [a.name, b.name],
    cages: [a.cage, b.cage],
    railIps: [a.railIps, b.railIps],
    interfaces: [a.interfaces, b.interfaces],
  });
  const nodes: NodeSpec[] = specs.map((s, i) => ({ ...s, cage: found[i]!.cage }));
  const plan = await planRun({
    protocol,
    protocolText,
    nodes,
    runners: new Map(lab.nodes.map((n) => [n, lab.runner(n)])),
    clock,
    ...(signal ? { signal } : {}),
  });
  plan.commands = [...nodes.flatMap((n) => lockCommands(n.name).slice(0, 2)), ...plan.commands, ...nodes.flatMap((n) => lockCommands(n.name).slice(2))];
  return render(
    plan,
    nodes.map((n) => ({ name: n.name, cage: n.cage })),
    true,
  );
}
