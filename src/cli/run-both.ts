// `cablequal run --port both`: the cables in cage 0 and cage 1 between the same two nodes qualified at once
// (src/run/both-cages.ts). Each cable gets its own run directory, record, certificate and store row; the status line
// shows both; --json prints one object with a `cables` array.
import type pino from 'pino';
import { UsageError } from '../domain/errors.js';
import type { NodeSpec } from '../domain/node.js';
import { printable } from '../domain/text.js';
import type { LiveStatus } from '../run/context.js';
import { JournalWriteError } from '../run/journal.js';
import { runBothCages as runBoth } from '../run/both-cages.js';
import type { RunDeps, RunResult } from '../run/qualify.js';
import { observedRunOf, type RunObservers } from '../store/run-observers.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { signalExitCode, type CliIo } from './io.js';
import { cliRunDeps, finishRun, journalBroke, prepare, type RunArgs } from './run-command.js';
import { printOutcome } from './run-summary.js';
import { cableJson, type CableJson } from '../report/run-json.js';
import { resultOfRecord } from '../rules/result.js';
import { wrap } from '../report/summary-lines.js';
import { formatStatus } from './status.js';

// The cages, in the order the cables are run and reported.
const CAGES = [0, 1] as const;

// One cable of a multi-cable run as the CLI runs and reports it: its status labels (short on the terminal's line, long
// in a log), its two nodes at its cages, its label, and what its --json line says of it first.
export interface CablePlan {
  short: string;
  long: string;
  nodes: NodeSpec[];
  label: string | null;
  json: Record<string, unknown>;
}

// What `prepare` gave the run (clock, runners, nodes, protocol, output).
export type Prepared = Awaited<ReturnType<typeof prepare>>;

// Run both cables; the exit code is the worst of the two (ABORTED, ERROR, FAIL, then PASS or MARGINAL), or the signal's.
export async function runBothCages(args: RunArgs, io: CliIo, signal: AbortSignal, observers: RunObservers): Promise<number> {
  if (args.nodes?.includes(':'))
    throw new UsageError('--port both: give the nodes without cages (--nodes a,b): each node has one cable in cage 0 and one in cage 1');
  const prepared = await prepare({ ...args, port: 'auto' }, io, 'run', observers);
  const plans = CAGES.map((cage) => ({
    short: `c${cage}`,
    long: `cage ${cage}`,
    nodes: prepared.nodes.map((n): NodeSpec => ({ ...n, cage })),
    label: args.label !== undefined ? `${args.label}-cage${cage}` : null,
    json: { cage },
  }));
  return runPlannedCables(
    args,
    io,
    signal,
    observers,
    prepared,
    plans,
    (runs) => runBoth({ runs: runs as [RunDeps, RunDeps], ...(args.breakLock ? { breakLock: true } : {}) }),
    {
      mode: 'both-cages',
    },
  );
}

// Run the planned cables at once (`run`), report each (its reports, store row, --json line) and exit with the worst.
export async function runPlannedCables(
  args: RunArgs,
  io: CliIo,
  signal: AbortSignal,
  observers: RunObservers,
  prepared: Prepared,
  plans: readonly CablePlan[],
  run: (runs: RunDeps[]) => Promise<PromiseSettledResult<RunResult>[]>,
  head: Record<string, unknown>,
): Promise<number> {
  const { clock, runners, protocol, protocolText, outDir, simulatedNodes } = prepared;
  const status = new Map<string, LiveStatus>();
  const loggers: pino.Logger[] = [];
  io.onHangup?.(args.onHangup ?? 'continue', () => {
    for (const l of loggers) l.warn({ signal: 'SIGHUP', onHangup: args.onHangup ?? 'continue' }, 'controller terminal closed');
  });
  const runs = plans.map((plan) => {
    const d: RunDeps = cliRunDeps({
      clock,
      runners,
      nodes: plan.nodes,
      protocol,
      protocolText,
      outDir,
      label: plan.label,
      signal,
      ...(args.sim ? { sim: args.sim } : {}),
      simulatedNodes,
      env: io.env,
      onStatus: (s) => {
        status.set(plan.short, s);
        observers.status(d.runId, s);
        showStatus(status, plans, io, args.json);
      },
      onWarning: (l) => io.stderr(`${io.isTTY && !args.json ? '\r\x1b[2K' : ''}cablequal: warning: [${plan.long}] ${printable(l)}\n`),
      onLogger: (l) => loggers.push(l),
    });
    return d;
  });
  let settled: PromiseSettledResult<RunResult>[];
  try {
    await observers.open();
    for (const d of runs) observers.started(observedRunOf(d));
    settled = await run(runs);
  } catch (e) {
    for (const d of runs) await observers.abandoned(d.runId);
    throw e;
  } finally {
    io.onHangup?.('continue');
    await Promise.all([...runners.values()].map((r) => r.close().catch(() => undefined)));
    if (io.isTTY && !args.json) io.stderr('\r\x1b[2K');
  }
  const cables: (CableJson & Record<string, unknown>)[] = [];
  const codes: number[] = [];
  for (const [i, s] of settled.entries()) {
    const plan = plans[i]!;
    if (s.status === 'rejected') {
      await observers.abandoned(runs[i]!.runId);
      // The journal could not even be started (disk full, read-only --out): one line, exit 3; anything else is a bug.
      if (!(s.reason instanceof JournalWriteError)) throw s.reason;
      io.stderr(`cablequal: ERROR: [${plan.long}] ${printable(s.reason.message)}\n`);
      codes.push(EXIT.error);
      continue;
    }
    const broke = await journalBroke(s.value, io);
    if (broke !== null) {
      await observers.finished(s.value.record, s.value.runDir);
      codes.push(broke);
      continue;
    }
    const { certificate, document } = await finishRun(s.value, io, observers);
    cables.push({ ...plan.json, ...cableJson(s.value.record, { runDir: s.value.runDir, certificate, document }) });
    codes.push(exitCodeFor(s.value.record.outcome));
    if (!args.json) printOutcome(s.value.record, s.value.runDir, io, `${plan.long}: `, document);
  }
  // A cluster's check is the same for every cable (each record states it): said once.
  const check = settled.map((s) => (s.status === 'fulfilled' ? resultOfRecord(s.value.record).clusterCheck : undefined)).find((c) => c !== undefined);
  if (check && !args.json) for (const l of wrap(printable(check.text), io.columns?.() ?? 80, '  ')) io.stdout(`${l}\n`);
  if (args.json)
    io.stdout(
      `${JSON.stringify({ ...head, ...(check ? { clusterCheck: check } : {}), simulated: settled.some((s) => s.status === 'fulfilled' && s.value.record.simulated), cables })}\n`,
    );
  if (signal.aborted) {
    const by = io.interruptedBy?.();
    return by ? signalExitCode(by) : EXIT.interrupted;
  }
  return worstCode(codes);
}

// Of the cables' exit codes, the one to exit with: a FAIL before an ERROR (as a batch does), ABORTED or ERROR before a pass.
function worstCode(codes: number[]): number {
  if (codes.includes(EXIT.fail)) return EXIT.fail;
  return Math.max(EXIT.ok, ...codes);
}

// Every run on one status line (a terminal), each a share of its width; a log gets each run's line when its phase changes.
const lastPhase = new WeakMap<Map<string, LiveStatus>, Map<string, string>>();
function showStatus(status: Map<string, LiveStatus>, plans: readonly CablePlan[], io: CliIo, json: boolean): void {
  if (io.isTTY && !json) {
    const width = Math.floor(((io.columns?.() ?? 80) - 3) / Math.max(2, plans.length));
    io.stderr(`\r\x1b[2K${[...status].map(([short, s]) => `${short} ${formatStatus(s, width - 3)}`).join(' ‖ ')}`);
    return;
  }
  let seen = lastPhase.get(status);
  if (!seen) lastPhase.set(status, (seen = new Map()));
  for (const [short, s] of status) {
    if (seen.get(short) === s.phase) continue;
    seen.set(short, s.phase);
    io.stderr(`[${plans.find((p) => p.short === short)!.long}] ${formatStatus(s)}\n`);
  }
}
