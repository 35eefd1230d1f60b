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
import { formatStatus } from './status.js';

// The cages, in the order the cables are run and reported.
const CAGES = [0, 1] as const;

// Run both cables; the exit code is the worst of the two (ABORTED, ERROR, FAIL, then PASS or MARGINAL), or the signal's.
export async function runBothCages(args: RunArgs, io: CliIo, signal: AbortSignal, observers: RunObservers): Promise<number> {
  if (args.nodes?.includes(':'))
    throw new UsageError('--port both: give the nodes without cages (--nodes a,b): each node has one cable in cage 0 and one in cage 1');
  const { clock, runners, nodes, protocol, protocolText, outDir, simulatedNodes } = await prepare({ ...args, port: 'auto' }, io, 'run', observers);
  const status = new Map<number, LiveStatus>();
  const loggers: pino.Logger[] = [];
  io.onHangup?.(args.onHangup ?? 'continue', () => {
    for (const l of loggers) l.warn({ signal: 'SIGHUP', onHangup: args.onHangup ?? 'continue' }, 'controller terminal closed');
  });
  const runs = CAGES.map((cage) => {
    const d: RunDeps = cliRunDeps({
      clock,
      runners,
      nodes: nodes.map((n): NodeSpec => ({ ...n, cage })),
      protocol,
      protocolText,
      outDir,
      label: args.label !== undefined ? `${args.label}-cage${cage}` : null,
      signal,
      ...(args.sim ? { sim: args.sim } : {}),
      simulatedNodes,
      env: io.env,
      onStatus: (s) => {
        status.set(cage, s);
        observers.status(d.runId, s);
        showStatus(status, io, args.json);
      },
      onWarning: (l) => io.stderr(`${io.isTTY && !args.json ? '\r\x1b[2K' : ''}cablequal: warning: [cage ${cage}] ${printable(l)}\n`),
      onLogger: (l) => loggers.push(l),
    });
    return d;
  }) as [RunDeps, RunDeps];
  let settled: PromiseSettledResult<RunResult>[];
  try {
    await observers.open();
    for (const d of runs) observers.started(observedRunOf(d));
    settled = await runBoth({ runs, ...(args.breakLock ? { breakLock: true } : {}) });
  } catch (e) {
    for (const d of runs) await observers.abandoned(d.runId);
    throw e;
  } finally {
    io.onHangup?.('continue');
    await Promise.all([...runners.values()].map((r) => r.close().catch(() => undefined)));
    if (io.isTTY && !args.json) io.stderr('\r\x1b[2K');
  }
  const cables: CableJson[] = [];
  const codes: number[] = [];
  for (const [i, s] of settled.entries()) {
    const cage = CAGES[i]!;
    if (s.status === 'rejected') {
      await observers.abandoned(runs[i]!.runId);
      // The journal could not even be started (disk full, read-only --out): one line, exit 3; anything else is a bug.
      if (!(s.reason instanceof JournalWriteError)) throw s.reason;
      io.stderr(`cablequal: ERROR: [cage ${cage}] ${printable(s.reason.message)}\n`);
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
    cables.push(cableJson(s.value.record, { cage, runDir: s.value.runDir, certificate, document }));
    codes.push(exitCodeFor(s.value.record.outcome));
    if (!args.json) printOutcome(s.value.record, s.value.runDir, io, `cage ${cage}: `, document);
  }
  if (args.json)
    io.stdout(`${JSON.stringify({ mode: 'both-cages', simulated: settled.some((s) => s.status === 'fulfilled' && s.value.record.simulated), cables })}\n`);
  if (signal.aborted) {
    const by = io.interruptedBy?.();
    return by ? signalExitCode(by) : EXIT.interrupted;
  }
  return worstCode(codes);
}

// Of two cables' exit codes, the one to exit with: a FAIL before an ERROR (as a batch does), ABORTED or ERROR before a pass.
function worstCode(codes: number[]): number {
  if (codes.includes(EXIT.fail)) return EXIT.fail;
  return Math.max(EXIT.ok, ...codes);
}

// Both runs on one status line (a terminal), each half as wide; a log gets each run's line when its phase changes.
const lastPhase = new WeakMap<Map<number, LiveStatus>, Map<number, string>>();
function showStatus(status: Map<number, LiveStatus>, io: CliIo, json: boolean): void {
  if (io.isTTY && !json) {
    const width = Math.floor(((io.columns?.() ?? 80) - 3) / 2);
    io.stderr(`\r\x1b[2K${[...status].map(([cage, s]) => `c${cage} ${formatStatus(s, width - 3)}`).join(' ‖ ')}`);
    return;
  }
  let seen = lastPhase.get(status);
  if (!seen) lastPhase.set(status, (seen = new Map()));
  for (const [cage, s] of status) {
    if (seen.get(cage) === s.phase) continue;
    seen.set(cage, s.phase);
    io.stderr(`[cage ${cage}] ${formatStatus(s)}\n`);
  }
}
