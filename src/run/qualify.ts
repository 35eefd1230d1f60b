import { renameSync, existsSync, rmdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import type { NodeSpec } from '../domain/node.js';
import type { NodeSample } from '../domain/sample.js';
import type { TakenInterval } from '../analysis/intervals.js';
import type { RunRecord } from '../domain/record.js';
import type { Protocol, Phase } from '../protocol/index.js';
import { decisionReason, liveWatch } from '../grading/engine.js';
import { RULES_VERSION } from '../rules/versions.js';
import { CABLEQUAL_VERSION, JOURNAL_FORMAT_VERSION } from '../domain/version.js';
import type { CommandRunner } from '../transport/types.js';
import { TransportError } from '../transport/types.js';
import { UsageError } from '../domain/errors.js';
import { RunContext, type LiveStatus, type NodeState } from './context.js';
import { JournalWriteError, JournalWriter, readJournal, type JournalContents, type JournalIo, type JournalLine } from './journal.js';
import type { JournalSigner } from './journal-signing.js';
import { journalFailed } from './journal-rescue.js';
import { buildRecord } from './record-builder.js';
import { FailDecided, RunAborted, SetupError } from './run-errors.js';
import { runPhase } from './phase-steps.js';
import { anySignal, decidedTail, untilDecided } from './fail-stop.js';
import { SamplingLoop, type TickSource } from './sampling-loop.js';
import { writeJsonAtomic } from '../io/atomic-write.js';
import { ensureDir } from '../io/ensure-dir.js';
import { commandText } from '../domain/text.js';
import { LiveStateFile, liveStatus, progressOf } from './live-state.js';
import { cmd } from '../transport/commands.js';
import type { NodeLock } from '../transport/node-lock.js';
import { keepLocksFresh, releaseLocks, takeNodes as lockAndClean } from './node-taking.js';
import type { Together } from './together.js';

// Everything a run needs from outside, injected (zx/OpenHTF style) so the core runs in virtual time under the simulator.
export interface RunDeps {
  clock: Clock;
  runners: Map<string, CommandRunner>;
  nodes: NodeSpec[];
  protocol: Protocol;
  protocolText: string; // the protocol file's text, kept in the journal so that `grade` re-reads the same limits (same sha256)
  outDir: string;
  label: string | null;
  runId: string;
  log: Logger | ((runDir: string) => Logger);
  signal: AbortSignal;
  simulated: boolean;
  scenario?: string;
  wallNow?: () => number;
  // Builds the per-tick sample source once the rails are known (the persistent sampler over each node's shell).
  makeTickSource: (nodes: NodeState[], intervalS: number) => Promise<TickSource>;
  onStatus?: (s: LiveStatus) => void;
  // Warnings for the operator while the run goes on (one line each, e.g. the cable's ends in different cages).
  onWarning?: (line: string) => void;
  preflightOnly?: boolean;
  // The batch's golden reference cable, run first and last to check the bench (journaled in run-start).
  role?: 'golden';
  // Take over a stale node lock (`--break-lock`); a live lock is never broken.
  breakLock?: boolean;
  // Batch with a node in two pairs: the nodes shared with another cable under test (recorded), and a gate the
  // benchmark phases (loopback, ib_write_bw, nccl) hold so that two cables never benchmark a node at once (a two-cable
  // run gives one too).
  sharedNodes?: string[];
  benchmarkGate?: (phase: Phase) => Promise<() => void>;
  // One of two cables between the same nodes qualified at once (src/run/both-cages.ts): the nodes taken for both, the
  // soaks started together, the GPU load shared (src/run/together.ts).
  together?: Together;
  // This run's link-load streams listen this far above the default TCP ports: another run's servers may be on the same
  // node at the same time (the other cage's cable, another batch pair sharing a node). Default 0.
  portOffset?: number;
  // The journal's file calls (tests inject a disk that fills up).
  journalIo?: JournalIo;
  // Signs the journal as it is written (the lab key, journal-signing.ts); null or absent: an unsigned journal.
  journalSigner?: JournalSigner | null;
  // How often the node locks' heartbeat is refreshed (default 60 s; `cablequal cleanup` judges a lock by it).
  lockHeartbeatMs?: number;
  // A dry run (run/dry-run.ts): each soak is sampled this many seconds only; its loads start as for the whole soak.
  soakCapS?: number;
}

export interface RunResult {
  record: RunRecord;
  runDir: string;
  // The journal as read back for the record (the report writers read the same lines).
  journalContents?: JournalContents;
  // The journal broke and its run directory could not take the rescued journal and record: they are in runDir, a
  // fallback directory, instead of this one.
  rescuedFrom?: string;
}

function safeDirName(s: string): string {
  return (
    s
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .replace(/^[._]+/, '')
      .slice(0, 64) || 'cable'
  );
}

// Run one qualification: the protocol's phases on both nodes, every sample in the journal, the verdict from the journal.
export async function runQualification(deps: RunDeps): Promise<RunResult> {
  const { clock, protocol } = deps;
  if (deps.nodes.length !== 2) throw new UsageError(`a cable joins two nodes: got ${deps.nodes.length} (${deps.nodes.map((n) => n.name).join(', ')})`);
  let runDir = join(deps.outDir, safeDirName(deps.label ?? 'unidentified'), deps.runId);
  ensureDir(runDir, 'reports directory (--out)');
  const log = typeof deps.log === 'function' ? deps.log(runDir) : deps.log;
  const journal = new JournalWriter(join(runDir, 'journal.jsonl'), deps.wallNow ?? Date.now, 5000, deps.journalIo, deps.journalSigner ?? null);
  // Error paths must not fail again on a broken journal: the failure is kept in journal.failure.
  const tryAppend = (line: JournalLine): void => {
    try {
      journal.append(line);
    } catch (e) {
      if (!(e instanceof JournalWriteError)) throw e;
    }
  };
  const nodes: NodeState[] = deps.nodes.map((spec) => {
    const runner = deps.runners.get(spec.name);
    if (!runner) throw new UsageError(`no transport for node ${spec.name}`);
    return { spec, runner, cage: null, railIps: [null, null], railSubnets: [null, null], record: { name: spec.name, host: spec.host, cage: null } };
  });
  const ctx = new RunContext(deps.runId, clock, protocol, nodes, journal, log, deps.signal, `/tmp/cablequal/${deps.runId}`);
  if (deps.onWarning) ctx.onWarning = deps.onWarning;
  if (deps.together) ctx.together = deps.together;
  if (deps.portOffset) ctx.portOffset = deps.portOffset;
  if (deps.soakCapS !== undefined) ctx.soakCapS = deps.soakCapS;
  // The wall clock when the run started, whatever the run's own clock (virtual or sped up on the simulated lab, which
  // would stamp a batch's later runs hours ahead); its end is that plus the run's duration on its own clock.
  const startedAt = new Date((deps.wallNow ?? Date.now)()).toISOString();
  const live = new LiveStateFile(
    runDir,
    { runId: deps.runId, label: deps.label, startedAt, protocol: protocol.name, simulated: deps.simulated, nodes: deps.nodes },
    deps.wallNow ?? Date.now,
  );
  const liveNow = (force = false) => live.update(progressOf(protocol, ctx.currentPhase, ctx.phaseEndsAtS, ctx.tS), force);
  journal.append({
    type: 'run-start',
    tS: 0,
    runId: deps.runId,
    startedAt,
    // The simulated lab's own time at the start (virtual, or sped up): what the lab's events and a batch's bench.jsonl
    // are stamped in, so this run's tS can be placed among them.
    ...(deps.simulated ? { clockStartedAt: new Date(clock.now()).toISOString() } : {}),
    label: deps.label,
    simulated: deps.simulated,
    scenario: deps.scenario ?? null,
    protocol: { name: protocol.name, sha256: protocol.sha256, file: protocol.file },
    protocolText: deps.protocolText,
    // The grading rules this run was watched and graded with (journals without it are rules version 1).
    rulesVersion: RULES_VERSION,
    // Every line carries `prev` (journal-chain.ts): a journal that says so and has none was stripped.
    chain: 'sha256-prev',
    // Who signs the chain head at each checkpoint (journal-signing.ts); null: a run without a lab key.
    journalSigner: deps.journalSigner ? { algorithm: 'Ed25519', fingerprint: deps.journalSigner.fingerprint } : null,
    // The journal's format and the cablequal that wrote it (src/domain/version.ts).
    journalFormat: JOURNAL_FORMAT_VERSION,
    cablequalVersion: CABLEQUAL_VERSION,
    ...(deps.preflightOnly ? { preflightOnly: true } : {}),
    // The batch's golden reference cable (the record says so: counted apart from the box's cables).
    ...(deps.role === 'golden' ? { role: 'golden' } : {}),
    nodes: nodes.map((n) => n.record),
    ...(deps.sharedNodes?.length ? { sharedNodes: deps.sharedNodes } : {}),
    // Qualified at once with the cable in the other cage: this cable's cage, and the other's with its run.
    ...(deps.together ? { together: { cage: deps.together.cage, with: deps.together.others, ...(deps.together.cluster ?? {}) } } : {}),
  });
  log.info({ runId: deps.runId, runDir, simulated: deps.simulated }, 'run started');

  let loop: SamplingLoop | null = null;
  const locks: NodeLock[] = [];
  const statusTimer = deps.onStatus ? setInterval(() => deps.onStatus!(liveStatus(ctx, loop)), 1000) : null;
  liveNow(true);
  // Wall-clock timers: live.json for `cablequal status`, and the node locks' heartbeat (a live run's lock stays fresh).
  const liveTimer = setInterval(() => liveNow(), 5000);
  liveTimer.unref();
  const stopBeating = keepLocksFresh(locks, log, deps.lockHeartbeatMs);
  try {
    await takeNodes(ctx, locks, deps);
    let clusterChecked = false;
    for (const [index, phase] of protocol.phases.entries()) {
      ctx.checkAborted();
      // A FAIL decided between phases, or while this one waited for its turn: it never starts.
      if (ctx.decided.aborted) {
        await decidedTail(ctx, index);
        break;
      }
      // Two cables at once: each soak starts when the other cable's run has reached it too (or has ended); the samples
      // taken while waiting stay with the phase before (the other cable benchmarks meanwhile: this one carries nothing).
      if (phase.kind === 'soak' && deps.together) {
        const waitCut = anySignal([ctx.signal, ctx.decided]);
        try {
          ctx.soakSharedWith = await deps.together.soak(phase.name, ctx.ends.find((e) => e.identity)?.identity?.vendorSn ?? null, waitCut.signal);
        } finally {
          waitCut.dispose();
        }
        // A cluster's check, once, before its first soak: every cable's journal keeps the same line.
        if (deps.together.clusterCheck && !clusterChecked) {
          clusterChecked = true;
          const { line, error } = await deps.together.clusterCheck(ctx);
          journal.append({ type: 'cluster-check', tS: ctx.tS, ...line });
          if (error && !(error instanceof FailDecided)) throw error;
        }
        ctx.checkAborted();
        if (ctx.decided.aborted) {
          await decidedTail(ctx, index);
          break;
        }
      }
      // A node shared with another cable under test: its benchmark phases wait their turn (the phase starts when it runs;
      // as at a soak, the samples taken while waiting stay with the phase before: the other cable benchmarks meanwhile).
      const gated = deps.benchmarkGate && ['loopback', 'ib_write_bw', 'nccl'].includes(phase.kind);
      if (gated)
        journal.append({
          type: 'gate-wait',
          tS: ctx.tS,
          phase: phase.name,
          sharedNodes: deps.sharedNodes ?? (deps.together ? deps.nodes.map((n) => n.name) : []),
        });
      const release = gated ? await untilDecided(ctx, deps.benchmarkGate!(phase)) : null;
      if (gated && !release) {
        await decidedTail(ctx, index);
        break;
      }
      ctx.currentPhase = phase.name;
      liveNow(true);
      let status: 'done' | 'decided';
      try {
        journal.append({ type: 'phase-start', tS: ctx.tS, phase: phase.name, kind: phase.kind });
        log.info({ phase: phase.name }, 'phase started');
        if (loop) await snapshotCounters(ctx, `${phase.name}-start`);
        status = await runPhase(ctx, phase, loop);
      } finally {
        release?.();
      }
      journal.append({ type: 'phase-end', tS: ctx.tS, phase: phase.name, status: status === 'decided' ? 'stopped-early' : 'done' });
      journal.checkpoint(); // signed and synced at each phase's end
      if (phase.kind === 'preflight') {
        for (const n of nodes) journal.append({ type: 'node-info', tS: ctx.tS, node: n.spec.name, record: n.record });
        if (deps.preflightOnly) break;
      }
      if (phase.kind === 'identity') {
        journal.append({ type: 'identity', tS: ctx.tS, ends: ctx.ends });
        if (!deps.label) {
          const serial = ctx.ends[0]?.identity?.vendorSn;
          if (serial) {
            runDir = moveRunDir(runDir, join(deps.outDir, safeDirName(serial), deps.runId));
            journal.relocate(join(runDir, 'journal.jsonl'));
            live.moved(runDir);
          }
        }
        // Sample from here on: counters through the benchmarks and soaks, on both nodes.
        if (!loop) {
          const lanes = nodes.find((n) => n.record.lanes)?.record.lanes;
          // Lanes in use come from `ethtool <if>` at preflight: a 2-lane QSFP112 link leaves rx_err_lane_2/3 at zero.
          // The same watch a re-grade runs over the journal: counts at once, windows and lane ratio held for seconds.
          const detector = liveWatch(protocol, lanes ?? null);
          const push = (phase: string, s: NodeSample, interval: TakenInterval | null) => {
            const d = detector.pushInterval(phase, s, ctx.tS, interval);
            return d ? decisionReason(d, protocol) : null;
          };
          loop = new SamplingLoop(
            ctx,
            await deps.makeTickSource(nodes, protocol.samplingIntervalS),
            { push },
            {
              intervalMs: protocol.samplingIntervalS * 1000,
              maxGapS: protocol.maxSampleGapS,
              lanes: lanes ?? null,
            },
          );
          loop.start();
        }
      }
      if (status === 'decided') {
        await decidedTail(ctx, index + 1);
        break;
      }
    }
  } catch (e) {
    if (e instanceof JournalWriteError || journal.failure) {
      log.error({ err: journal.failure ?? e }, 'journal write failed: stopping the run');
    } else if (e instanceof RunAborted || ctx.signal.aborted) {
      // Whatever a command cut by the abort signal threw (its channel killed, its output cut short) is the abort
      // itself, never a transport or setup fault: the run is ABORTED, with what the cut command said kept.
      const why = e instanceof RunAborted ? e.why : String(ctx.signal.reason ?? 'interrupted');
      const cut = e instanceof RunAborted ? {} : { cut: commandText((e as Error)?.message ?? String(e), 300) };
      tryAppend({ type: 'aborted', tS: ctx.tS, phase: ctx.currentPhase, why, ...cut });
      tryAppend({ type: 'phase-end', tS: ctx.tS, phase: ctx.currentPhase, status: 'aborted' });
    } else if (e instanceof SetupError) {
      tryAppend({ type: 'setup-error', tS: ctx.tS, phase: ctx.currentPhase, reason: e.reason });
      tryAppend({ type: 'phase-end', tS: ctx.tS, phase: ctx.currentPhase, status: 'error', note: e.reason.rule });
      log.error({ reason: e.reason }, 'run cannot judge the cable');
    } else if (e instanceof TransportError) {
      const reason = { rule: 'transport', message: e.message, node: e.node, ...(e.advice ? { advice: e.advice } : {}) };
      tryAppend({ type: 'setup-error', tS: ctx.tS, phase: ctx.currentPhase, reason });
      tryAppend({ type: 'phase-end', tS: ctx.tS, phase: ctx.currentPhase, status: 'error', note: 'transport' });
    } else {
      const reason = { rule: 'harness', message: `harness error in ${ctx.currentPhase}: ${(e as Error).message}` };
      tryAppend({ type: 'setup-error', tS: ctx.tS, phase: ctx.currentPhase, reason });
      log.error({ err: e }, 'harness error');
    }
  } finally {
    // The other cable's run no longer waits for this one at a soak.
    deps.together?.ended();
    if (statusTimer) clearInterval(statusTimer);
    clearInterval(liveTimer);
    stopBeating();
    if (loop && !ctx.signal.aborted && !journal.failure) await snapshotCounters(ctx, 'run-end').catch(() => undefined);
    // Loads stop on every path, a broken journal included (stopping journals nothing).
    await ctx.stopProcesses();
    await releaseLocks(locks, log);
    if (loop) {
      await loop.stop();
      tryAppend({ type: 'sampling', tS: ctx.tS, stats: loop.stats() });
    }
  }
  try {
    const endedAt = () => new Date(Date.parse(startedAt) + ctx.tS * 1000).toISOString();
    const failed = () => journalFailed(journal, { runDir, runId: deps.runId, tS: ctx.tS, phase: ctx.currentPhase, endedAt: endedAt() }, log);
    if (journal.failure) return failed();
    if (!ctx.signal.aborted || journal.stats.lines > 0) {
      tryAppend({ type: 'run-end', tS: ctx.tS, endedAt: endedAt() });
      if (journal.failure) return failed();
    }
    journal.close();
    // The run's own journal, just written: read whatever its size (the bound is for journals handed to cablequal).
    const contents = readJournal(join(runDir, 'journal.jsonl'), OWN_JOURNAL);
    const record = buildRecord(contents, { journalFile: 'journal.jsonl', journalBytes: statSync(join(runDir, 'journal.jsonl')).size });
    writeJsonAtomic(join(runDir, 'record.json'), record);
    log.info({ outcome: record.outcome, runDir }, 'run finished');
    return { record, runDir, journalContents: contents };
  } finally {
    live.end();
  }
}

// How a run reads back the journal it wrote itself: with no size bound, so a run longer than INPUT_LIMITS.journal
// (io/read-input.ts) still gets its record; `grade` of it later is refused with one line naming the bound.
const OWN_JOURNAL = { maxBytes: Number.MAX_SAFE_INTEGER };

// Real nodes: take each node's lock (two runs must never share a pair) and stop load processes a dead earlier run left
// behind (src/run/node-taking.ts), journaling each; a two-cable run has taken them for both of its runs.
async function takeNodes(ctx: RunContext, locks: NodeLock[], deps: RunDeps): Promise<void> {
  const stale = deps.together
    ? deps.together.stale
    : await lockAndClean(
        ctx.nodes.map((n) => ({ name: n.spec.name, runner: n.runner })),
        { runId: ctx.runId, label: deps.label ?? 'cablequal run', ...(deps.breakLock ? { breakLock: true } : {}) },
        locks,
      );
  for (const p of stale) {
    ctx.journal.append({ type: 'stale-process', tS: ctx.tS, node: p.node, run: p.run, name: p.name, pid: p.pid, outcome: p.outcome });
    ctx.log.warn({ node: p.node, stale: p }, 'stopped a load process left by an earlier run');
  }
}

// The full `ethtool -S` of both rails on both nodes, kept raw in the journal at every phase boundary
// (the sampler itself reads only the *_phy lines).
async function snapshotCounters(ctx: RunContext, what: string): Promise<void> {
  await Promise.all(
    ctx.nodes.map(async (n) => {
      for (const rail of n.cage?.rails ?? []) {
        try {
          await ctx.runLogged(n, cmd.ethtoolStats(rail.netdev), `${what}:ethtool-stats:${rail.netdev}`, 30_000);
        } catch (e) {
          if (e instanceof TransportError) return; // the sampler reports lost nodes
          throw e;
        }
      }
    }),
  );
}

function moveRunDir(from: string, to: string): string {
  if (from === to || existsSync(to)) return from;
  ensureDir(join(to, '..'), 'reports directory (--out)');
  renameSync(from, to); // open journal fd stays valid across the rename
  // The run dir began under `unidentified/` (no serial yet): leave no empty folder behind (another run's keeps it).
  try {
    rmdirSync(dirname(from));
  } catch {
    // not empty, or already gone
  }
  return to;
}
