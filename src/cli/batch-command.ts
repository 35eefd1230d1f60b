import { fit, reasonLine } from '../report/summary-lines.js';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Clock } from '../domain/clock.js';
import { systemClock } from '../domain/clock.js';
import { UsageError } from '../domain/errors.js';
import type { NodeSpec } from '../domain/node.js';
import { runQualification } from '../run/qualify.js';
import { createLab, type SimLab } from '../sim/lab.js';
import { loadScenario } from '../sim/scenario.js';
import { DEFAULT_CABLED_CAGE } from '../sim/lab-core.js';
import { VirtualClock } from '../sim/virtual-clock.js';
import type { CommandRunner } from '../transport/types.js';
import { parseManifest, simCableOf, type ManifestCable } from '../batch/manifest.js';
import { initialState, runBatch, type Bench, type CableRunRequest } from '../batch/campaign.js';
import { runBothCages } from '../run/both-cages.js';
import type { RunResult } from '../run/qualify.js';
import { silentOperator, streamOperator, type Operator } from '../batch/operator.js';
import { loadState } from '../batch/state.js';
import { controllerNodes } from '../batch/controller.js';
import { writeBatchSummary } from '../batch/summary.js';
import { throughputLines, throughputOf } from '../batch/throughput.js';
import { rebootSudoersLine, type BenchLogEntry, type RebootMode } from '../batch/settle.js';
import { cmd } from '../transport/commands.js';
import { EXIT } from './exit-codes.js';
import { ensureDir } from '../io/ensure-dir.js';
import { readInputText } from '../io/read-input.js';
import { printable } from '../domain/text.js';
import { signalExitCode, type CliIo, type HangupMode } from './io.js';
import { cliRunDeps, DiscoveryError, dryRunPlan, loadProtocolArg, nodeDmi, parseNodes, saysSimulated } from './run-command.js';
import type { Protocol } from '../protocol/index.js';
import { makeRunners } from './transports.js';
import { writeReports } from './reports.js';
import { observedRunOf, RunObservers } from '../store/run-observers.js';
import { batchIdOf, batchRowOf } from '../store/import.js';

export interface BatchArgs {
  manifest: string;
  nodes?: string;
  pair?: string[];
  port?: string;
  protocol?: string;
  goldenProtocol?: string;
  golden?: string;
  autoDetect: boolean;
  resume: boolean;
  sim?: string;
  seed?: number;
  // With --sim: seconds the scripted operator takes to swap one cable (default 60), and a node to reboot.
  simSwapS?: number;
  simRebootS?: number;
  out?: string;
  acceptNewHostKeys?: boolean;
  dryRun?: boolean;
  sshConfig?: string;
  onHangup?: HangupMode;
  // After each swap: the batch reboots both nodes (auto, the default) or tells the operator to and waits (manual).
  reboot?: RebootMode;
  db?: string; // results store (default cablequal.db in the directory holding the batch directory)
  metricsPort?: number;
  metricsHost?: string;
  metricsLingerS?: number; // --metrics-linger (default: none)
  operator?: Operator; // tests inject a scripted operator (with --sim: attended mode unless autoDetect)
  // This machine's boot id, to find a node that is the controller itself (default: read from /proc; tests inject one).
  controllerBootId?: string | null;
}

// This machine's boot id (Linux), or null where there is none.
function ownBootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null;
  }
}

// A cage holds one cable: the same node and cage in two pairs is refused, and a node in two pairs must name its
// cage in each (with `auto` both pairs could pick the same one).
export function checkPairCages(pairs: NodeSpec[][]): void {
  const owner = new Map<string, number>();
  pairs.forEach((nodes, p) => {
    for (const n of nodes) {
      const elsewhere = pairs.findIndex((other, q) => q !== p && other.some((x) => x.name === n.name));
      if (elsewhere >= 0 && n.cage === 'auto')
        throw new UsageError(
          `--pair: ${n.name} is in pairs ${Math.min(p, elsewhere) + 1} and ${Math.max(p, elsewhere) + 1}: give its cage in each (e.g. ${n.name}:0 and ${n.name}:1)`,
        );
      const key = `${n.name}:${n.cage}`;
      const first = owner.get(key);
      if (first !== undefined) throw new UsageError(`--pair: cage ${n.cage} of ${n.name} is given to pairs ${first + 1} and ${p + 1}: a cage holds one cable`);
      owner.set(key, p);
    }
  });
}

// `cablequal batch`: qualify a box of cables one after another, on one or several node pairs.
export async function batchCommand(args: BatchArgs, io: CliIo, signal: AbortSignal): Promise<number> {
  // The results store (beside the batch directory, in the reports directory) and --metrics-port watch every run.
  const dir = resolve(io.cwd, args.out ?? `reports/batch-${basename(args.manifest).replace(/\.csv$/i, '')}`);
  const observers = new RunObservers(
    { storeDir: dirname(dir), db: args.db, metricsPort: args.metricsPort, metricsHost: args.metricsHost, metricsLingerS: args.metricsLingerS },
    io,
    { signal },
  );
  try {
    return await batchWith(args, io, signal, observers, dir);
  } finally {
    await observers.close();
  }
}

async function batchWith(args: BatchArgs, io: CliIo, signal: AbortSignal, observers: RunObservers, dir: string): Promise<number> {
  const manifestPath = resolve(io.cwd, args.manifest);
  const manifest = parseManifest(readInputText(manifestPath, 'manifest', args.manifest), args.manifest);
  const pairSpecs = args.pair?.length ? args.pair : args.nodes ? [args.nodes] : args.sim ? ['spark-a,spark-b'] : [];
  if (!pairSpecs.length) throw new UsageError('batch: give --nodes a,b, one --pair per bench, or --sim');
  if (args.nodes && args.pair?.length) throw new UsageError('batch: give either --nodes or --pair, not both');
  // --port both: each pair's two cages, one cable in each, two cables per swap (the nodes name no cage then).
  const both = args.port === 'both';
  if (both && pairSpecs.some((p) => p.includes(':')))
    throw new UsageError('--port both: give the nodes without cages (a,b): each pair has one cable in cage 0 and one in cage 1');
  const pairNodes = pairSpecs.map((p) => parseNodes(p, both ? '0' : args.port) as [NodeSpec, NodeSpec]);
  if (both) {
    const names = pairNodes.flat().map((n) => n.name);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice) throw new UsageError(`--port both: ${twice} is in two pairs, but each pair uses both cages of its nodes`);
  }
  checkPairCages(pairNodes);
  if (args.sim !== undefined) {
    // Each simulated pair is a lab of its own: a node named in two pairs takes turns for the benchmarks (the
    // per-node lock is real), but its bandwidth and temperature are not shared in the simulation. Say so.
    const names = pairNodes.flat().map((n) => n.name);
    const twice = [...new Set(names.filter((n, i) => names.indexOf(n) !== i))];
    if (twice.length)
      io.stderr(
        `cablequal batch --sim: ${twice.join(', ')} in two pairs: benchmarks take turns, but each simulated pair is its own lab (bandwidth and heat of a shared node are not shared in the simulation)\n`,
      );
  }
  const { protocol, protocolText } = loadProtocolArg(args.protocol, io.cwd);
  // --dry-run: per pair, the commands one cable's run executes (each cable repeats them; between cables the batch
  // polls for the swap and reboots the nodes, which the header line says).
  if (args.dryRun && both) throw new UsageError('--dry-run --port both: plan one cage at a time (--port 0, then --port 1)');
  if (args.dryRun) return batchDryRun(args, pairSpecs, manifest, protocol, protocolText, io, signal);
  const goldenProto = args.goldenProtocol ? loadProtocolArg(args.goldenProtocol, io.cwd) : { protocol, protocolText };
  // A bad --out (a file, /proc/x) is refused in one line before anything runs.
  ensureDir(dir, '--out');
  let state = loadState(dir);
  if (state && !args.resume) throw new UsageError(`${dir} already holds a batch: add --resume to continue it, or choose another --out`);
  if (!state && args.resume) throw new UsageError(`--resume: no batch state in ${dir}`);
  if (state && state.labels.join('\n') !== manifest.map((c) => c.label).join('\n'))
    throw new UsageError(`--resume: ${args.manifest} lists other cables than the batch in ${dir} was started with`);
  if (state && state.pairs.length !== pairSpecs.length)
    throw new UsageError(`--resume: the batch ran on ${state.pairs.length} pair(s), got ${pairSpecs.length}`);
  if (state && Boolean(state.both) !== both)
    throw new UsageError(`--resume: the batch ran ${state.both ? 'with --port both (two cables per swap)' : 'one cable per swap'}: give the same --port`);
  state ??= initialState({
    manifestFile: basename(args.manifest),
    manifest,
    pairs: pairSpecs,
    protocol: protocol.name,
    golden: args.golden ?? null,
    ...(both ? { both } : {}),
  });
  await observers.open();
  const batchId = batchIdOf(observers.store.controller, dir);
  const storeBatch = () => {
    const b = batchRowOf(dir, observers.store.controller, new Date().toISOString());
    if (b) observers.store.write((st) => st.upsertBatch(b.row));
  };

  // The simulated box: cable i is the i-th entry of --sim (a comma list or a file of lines), or the manifest's scenario column.
  let box: string[] | null = null;
  // What the lab plugs for a cable of the batch: its box entry, or for the golden runs a good cable carrying the
  // --golden serial (a lab's reference cable is a good one), so the golden control chart can be shown on the simulated lab.
  const simCableAt = (c: { label: string; golden?: unknown }): { scenario: string; serial?: string } =>
    c.golden && args.golden ? { scenario: SIM_GOLDEN_SCENARIO, serial: args.golden } : simCableOf(box![manifest.findIndex((m) => m.label === c.label)] ?? '');
  let clock: Clock = systemClock;
  const labs: SimLab[] = [];
  const benches: Bench[] = [];
  const simulatedBench: boolean[] = []; // per bench (pair): its nodes said they are the simulated lab (sim serve)
  if (args.sim !== undefined) {
    box = simBox(args.sim, manifest, io.cwd);
    const vclock = new VirtualClock(Math.floor(Date.now() / 1000) * 1000);
    clock = vclock;
    pairNodes.forEach((nodes, p) => {
      // The cables in the lab from the start: the pair's first (two, with --port both) untested.
      const [first, second] = state!.cables.filter((c) => c.pair === p && (c.status === 'pending' || c.status === 'running'));
      const entry = first ? simCableAt(first) : simCableOf(box![0]!);
      // The simulated cable sits in the cages the pair names (a:0,b:1 is the triangle wiring); auto keeps the scenario's.
      const cageOf = (n: NodeSpec) => (n.cage === 'auto' ? undefined : (n.cage as 0 | 1));
      // With --port both the first cable is in cage 0 and the second in cage 1.
      const next = both && second ? simCableAt(second) : null;
      const lab = createLab({
        scenario: next?.scenario ?? entry.scenario,
        clock,
        nodeNames: [nodes[0].name, nodes[1].name],
        cages: both ? (next ? [1, 1] : [0, 0]) : [cageOf(nodes[0]), cageOf(nodes[1])],
        ...((next ?? entry).serial ? { serial: (next ?? entry).serial } : {}),
        ...(next ? { secondCable: { scenario: entry.scenario, ...(entry.serial ? { serial: entry.serial } : {}), cage: 0 as const } } : {}),
        ...(args.seed !== undefined ? { seed: args.seed } : {}),
        ...(args.simRebootS !== undefined ? { rebootS: args.simRebootS } : {}),
      });
      labs.push(lab);
      const where = (i: 0 | 1): NodeSpec => ({ ...nodes[i], cage: both ? 0 : (lab.scenario.nodes[i].cage ?? DEFAULT_CABLED_CAGE) });
      benches.push({ nodes: [where(0), where(1)], runners: new Map(lab.nodes.map((n) => [n, lab.runner(n)])), ...(both ? { both } : {}) });
    });
  } else {
    const sshConfig = args.sshConfig ? { sshConfig: resolve(io.cwd, args.sshConfig) } : {};
    for (const nodes of pairNodes) {
      const runners = (await makeRunners(nodes, {
        acceptNewHostKeys: Boolean(args.acceptNewHostKeys),
        env: io.env,
        warn: (l) => io.stderr(`${l}\n`),
        ...sshConfig,
      })) as Map<string, CommandRunner>;
      benches.push({ nodes, runners, ...(both ? { both } : {}) });
      // Nodes of the simulated lab served over SSH say so: every run on them is marked simulated from its start.
      simulatedBench.push(saysSimulated(await nodeDmi(runners)));
    }
  }
  // --sim implies auto-detect (the lab's scripted operator swaps the cables and nobody is at the keyboard), unless the
  // caller brings an operator to answer the attended prompts: tests type Enter / s / q against the simulated lab.
  const rebootMode: RebootMode = args.reboot ?? 'auto';
  if (rebootMode !== 'auto' && rebootMode !== 'manual') throw new UsageError(`--reboot: "${String(rebootMode)}" is not auto or manual`);
  // A node that is this machine is never rebooted by the batch (it would end the batch): see src/batch/controller.ts.
  const controllers = await controllerNodes(benches, args.controllerBootId !== undefined ? args.controllerBootId : ownBootId());
  for (const [p, b] of benches.entries()) {
    const mine = b.nodes.filter((n) => controllers.has(n.name));
    if (mine.length === 2)
      throw new UsageError(`batch: both nodes of pair ${p + 1} (${mine.map((n) => n.name).join(', ')}) are this machine: give the two Sparks the cable joins`);
  }
  if (rebootMode === 'auto') await checkRebootAllowed(benches, controllers);
  const autoDetect = args.autoDetect || (args.sim !== undefined && !args.operator);
  // Operator lines carry EEPROM serials and part numbers (untrusted): shown escaped.
  const toOperator = (s: string) => io.stderr(s.split('\n').map(printable).join('\n'));
  const stdinOp = !args.operator && !autoDetect ? streamOperator(process.stdin, toOperator) : null;
  const operator = args.operator ?? stdinOp ?? silentOperator(toOperator);
  let lastPhase = new Map<string, string>();
  // The simulated operator's hands, per pair: the cables of one swap are swapped one after the other.
  const operatorBusy = new Map<number, Promise<void>>();
  const warned = new Set<string>();
  // SIGHUP: the batch goes on (each run keeps its live.json for `cablequal status`), or stops cleanly if chosen.
  io.onHangup?.(args.onHangup ?? 'continue', () =>
    operator.say(
      `cablequal batch: SIGHUP: the terminal closed; ${args.onHangup === 'abort' ? 'stopping' : 'the batch goes on (cablequal status --out <reports> finds its runs)'}`,
    ),
  );
  for (const [p, b] of benches.entries()) {
    const mine = b.nodes.find((n) => controllers.has(n.name));
    const other = b.nodes.find((n) => n !== mine);
    if (mine && other)
      operator.say(
        `[pair ${p + 1}] ${mine.name} is the machine this batch runs on: after each swap the batch reboots ${other.name} ${rebootMode === 'auto' ? '' : '(or asks you to) '}and asks you to reboot ${mine.name}, then to run the same command with --resume`,
      );
  }
  // The run of one cable of the batch: the deps `cablequal run` would use, and its place in the store's batch.
  const cableRun = (req: CableRunRequest) => {
    const bench = benches[req.pair]!;
    const proto = req.golden ? goldenProto : { protocol, protocolText };
    const simEntry = box ? simCableAt(req) : null;
    const place = { batchId, batchRole: req.golden ? (req.label === 'golden-last' ? 'golden-last' : 'golden-first') : 'cable' } as const;
    const deps = cliRunDeps({
      clock,
      runners: bench.runners,
      nodes: req.nodes,
      ...proto,
      outDir: req.outDir,
      label: req.label,
      signal,
      ...(simEntry ? { sim: simEntry.scenario } : {}),
      simulatedNodes: simulatedBench[req.pair] ?? false,
      env: io.env,
      onStatus: (st) => {
        observers.status(deps.runId, st);
        if (lastPhase.get(req.label) !== st.phase) {
          lastPhase.set(req.label, st.phase);
          operator.say(`[pair ${req.pair + 1}] ${req.label}: ${st.phase}`);
        }
      },
      // Said once per pair (every cable of the pair would repeat it), kept in each run's run.log.
      onWarning: (line) => {
        if (warned.has(`${req.pair}:${line}`)) return;
        warned.add(`${req.pair}:${line}`);
        operator.say(`[pair ${req.pair + 1}] warning: ${line}`);
      },
    });
    return { deps: { ...deps, portOffset: req.portOffset, ...(req.golden ? { role: 'golden' as const } : {}) }, place };
  };
  // A cable's run has ended: its reports, the store told, the batch row updated.
  const cableDone = async (r: RunResult, place: { batchId: string; batchRole: 'golden-first' | 'golden-last' | 'cable' }): Promise<CableDone> => {
    const written = await writeReports(r.record, r.runDir, io, undefined, r.journalContents);
    const report = written.find((p) => p.endsWith('.html')) ?? null;
    await observers.finished(r.record, r.runDir, place);
    storeBatch();
    return { record: r.record, runDir: r.runDir, report };
  };
  try {
    state = await runBatch({
      dir,
      clock,
      signal,
      state,
      manifest,
      benches,
      protocol,
      autoDetect,
      operator,
      reboot: rebootMode,
      controllerNodes: controllers,
      benchLog: benchLogWriter(dir, clock),
      runCable: async (req) => {
        const { deps, place } = cableRun(req);
        observers.started(observedRunOf(deps), place);
        const result = await runQualification({
          ...deps,
          sharedNodes: req.sharedNodes,
          ...(req.benchmarkGate ? { benchmarkGate: req.benchmarkGate } : {}),
        });
        return cableDone(result, place);
      },
      // --port both: the swap's two cables at once, as `cablequal run --port both` qualifies them.
      runCables: async (reqs) => {
        const runs = reqs.map(cableRun);
        for (const r of runs) observers.started(observedRunOf(r.deps), r.place);
        const settled = await runBothCages({ runs: [runs[0]!.deps, runs[1]!.deps] });
        const out = [];
        for (const [i, x] of settled.entries()) {
          if (x.status === 'rejected') throw x.reason;
          out.push(await cableDone(x.value, runs[i]!.place));
        }
        return out as [CableDone, CableDone];
      },
      ...(box
        ? {
            onPlugRequest: (pair, cable, cage) => {
              const lab = labs[pair]!;
              const entry = simCableAt(cable);
              const serial = entry.serial ?? undefined;
              const there = cage === undefined ? lab.cable : lab.cableIn(cage);
              // The same scenario (by name: an entry may be a scenario file's path) and serial, and up: nothing to swap.
              // An entry without a serial has its scenario's own: the golden run's cable (the same scenario with the
              // --golden serial) is not it.
              const wanted = loadScenario(entry.scenario);
              const inPlace =
                there !== null &&
                there.name === wanted.name &&
                there.cable.eeprom.vendorSn === (serial ?? wanted.cable.eeprom.vendorSn) &&
                lab.state(lab.nodes[0]!, cage).linkUp;
              if (inPlace) return;
              // The scripted operator, one cable after the other: pulls the old cable a third of the way into its swap
              // time, plugs the next one at its end (virtual time; 60 s a cable unless --sim-swap says otherwise).
              const swapMs = (args.simSwapS ?? 60) * 1000;
              const turn = (operatorBusy.get(pair) ?? Promise.resolve()).then(async () => {
                await clock.sleep(swapMs / 3);
                lab.unplug(cage);
                await clock.sleep(swapMs - swapMs / 3);
                lab.plug(entry.scenario, { ...(serial ? { serial } : {}), ...(cage !== undefined ? { cage } : {}) });
              });
              operatorBusy.set(pair, turn);
              void turn;
            },
            // With --reboot manual the scripted operator reboots the nodes 30 s after being told (virtual time).
            onRebootRequest: (pair, nodes) => {
              void (async () => {
                await clock.sleep(30_000);
                for (const n of nodes) labs[pair]!.reboot(n);
              })();
            },
          }
        : {}),
    });
  } finally {
    io.onHangup?.('continue');
    stdinOp?.close();
    lastPhase = new Map();
    for (const b of benches) await Promise.all([...b.runners.values()].map((r) => r.close().catch(() => undefined)));
  }
  storeBatch();
  const { csv, html, rows } = await writeBatchSummary(dir, state);
  // One short line per tested cable (the full reasons are in batch.html, batch.csv and each run's document).
  const columns = io.columns?.() ?? 80;
  for (const r of rows) {
    const first = r.record?.reasons[0];
    const why = first ? reasonLine(first, r.record!.outcome) : r.reason;
    const kind = r.result?.kind === 'setup-check' ? ' (set-up check)' : '';
    // A cable with no record says what to do next (reboot, --resume): that line is never cut.
    const line = printable(`${r.cable.label.padEnd(16)} ${`${r.outcome || 'not tested'}${kind}`.padEnd(10)} ${r.cable.serial ?? ''}${why ? `  ${why}` : ''}`);
    io.stdout(`${r.record ? fit(line, columns) : line}\n`);
  }
  // What the batch measured of its own pace: cables per hour and per pair per day, swap, reboot and settle times.
  const pace = throughputOf(state);
  if (pace) for (const line of throughputLines(pace)) io.stdout(`${line}\n`);
  io.stdout(`batch summary: ${csv}\n               ${html}\n`);
  // Where the batch's runs are shown: the embedded store is the reports directory's, beside the batch directory.
  const db = args.db ?? io.env.CABLEQUAL_DB;
  if (db === undefined) io.stdout(`dashboard:     cablequal dashboard --out ${dirname(dir)}\n`);
  // The last thing the operator reads when the batch stopped for a reboot only they may do.
  const asked = [...new Set(state.cables.flatMap((c) => (c.controllerReboot ? [c.controllerReboot.node] : [])))];
  if (asked.length)
    io.stderr(`cablequal batch: now reboot ${asked.join(' and ')} with the cable in (sudo systemctl reboot), then run the same command with --resume\n`);
  if (signal.aborted) {
    const by = io.interruptedBy?.();
    return by ? signalExitCode(by) : EXIT.interrupted;
  }
  // A bench that could not be made measurable is an ERROR (its cable stays pending for --resume).
  if (state.cables.some((c) => c.benchError)) return EXIT.error;
  if (state.cables.some((c) => c.status === 'running' || c.status === 'pending')) return EXIT.aborted;
  // The golden cable drifted: the bench changed, no verdict of the batch is trusted.
  if (state.goldenDrift?.ok === false) return EXIT.error;
  if (rows.some((r) => r.outcome === 'FAIL')) return EXIT.fail;
  if (rows.some((r) => r.outcome === 'ERROR' || r.outcome === 'ABORTED')) return EXIT.error;
  return EXIT.ok;
}

// What the batch keeps of a cable's run.
type CableDone = { record: RunResult['record']; runDir: string; report: string | null };

// The scenario of the golden cable in a simulated batch.
const SIM_GOLDEN_SCENARIO = 'good-qsfp56';

// Automatic reboots need `sudo -n systemctl reboot --no-block` on every node the batch reboots (not the machine it runs
// on): refuse to start a batch that would stop at the first swap, with the sudoers line (sudo -l asks without rebooting).
async function checkRebootAllowed(benches: Bench[], controllers: ReadonlySet<string>): Promise<void> {
  for (const b of benches) {
    for (const n of b.nodes) {
      if (controllers.has(n.name)) continue;
      const runner = b.runners.get(n.name)!;
      const r = await runner.run(cmd.rebootAllowed(), { timeoutMs: 30_000 });
      if (r.exitCode === 0) continue;
      const user = (await runner.run(cmd.whoami(), { timeoutMs: 30_000 })).stdout.trim() || 'nvidia';
      throw new UsageError(
        `batch: ${n.name} does not allow \`${cmd.reboot()}\`, which the batch runs after each cable swap (a cable plugged into running Sparks stays at ~13 Gb/s until both reboot): add \`${rebootSudoersLine(user)}\` with visudo on the node, or pass --reboot manual`,
      );
    }
  }
}

// The bench log: every command run while bringing a bench into a measurable state, one JSON line each, kept.
function benchLogWriter(dir: string, clock: Clock): (e: BenchLogEntry) => void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'bench.jsonl');
  return (e) => appendFileSync(file, `${JSON.stringify({ at: new Date(clock.now()).toISOString(), ...e })}\n`);
}

function simBox(sim: string, manifest: ManifestCable[], cwd: string): string[] {
  let entries: string[];
  if (sim === '' || sim === 'manifest') {
    entries = manifest.map((m) => m.scenario ?? '');
    const missing = manifest.find((m) => !m.scenario);
    if (missing) throw new UsageError(`batch --sim: manifest line ${missing.line} has no scenario`);
  } else if (sim.includes(',') || !/[/.]/.test(sim)) {
    entries = sim.split(',').map((x) => x.trim());
  } else {
    entries = readInputText(resolve(cwd, sim), 'scenarioList', `--sim ${sim}`)
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
  }
  if (entries.length !== manifest.length) throw new UsageError(`batch --sim: ${entries.length} simulated cable(s) for ${manifest.length} manifest cable(s)`);
  return entries;
}

async function batchDryRun(
  args: BatchArgs,
  pairSpecs: string[],
  manifest: ManifestCable[],
  protocol: Protocol,
  protocolText: string,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  const box = args.sim !== undefined ? simBox(args.sim, manifest, io.cwd) : null;
  const interrupted = () => {
    const by = io.interruptedBy?.();
    return by ? signalExitCode(by) : EXIT.interrupted;
  };
  for (const [p, spec] of pairSpecs.entries()) {
    const reboot =
      args.reboot === 'manual'
        ? `tells you to reboot both nodes, reads ${cmd.bootId()} until it changes`
        : `(--reboot auto) reads ${cmd.bootId()}, runs [sudo] ${cmd.reboot()} on both`;
    let plan: string;
    try {
      plan = await dryRunPlan(
        {
          ...(box ? { sim: simCableOf(box[0]!).scenario } : {}),
          nodes: spec,
          ...(args.port ? { port: args.port } : {}),
          ...(args.seed !== undefined ? { seed: args.seed } : {}),
          acceptNewHostKeys: Boolean(args.acceptNewHostKeys),
          ...(args.sshConfig ? { sshConfig: args.sshConfig } : {}),
        },
        protocol,
        protocolText,
        io,
        signal,
      );
    } catch (e) {
      if (!(e instanceof DiscoveryError)) throw e;
      io.stderr(`cablequal: ERROR: dry run [pair ${p + 1}]: ${printable(e.message)}\n`);
      return EXIT.error;
    }
    // Ctrl-C stops the plans as it stops a batch (exit 130): the interrupted plan is not printed.
    if (signal.aborted) return interrupted();
    io.stdout(
      `[pair ${p + 1}] ${spec}: every cable's run executes these commands. Between cables the batch polls ibdev2netdev and sudo -n ethtool -m on both nodes for the swap, then ${reboot}, waits for SSH, the links and RS-FEC, and checks the loopback of both rails before the next run\n`,
    );
    io.stdout(plan);
  }
  return EXIT.ok;
}
