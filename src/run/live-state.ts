// A running run's whereabouts, kept in `live.json` in its run directory so that `cablequal status` can find it
// again after its terminal closed: phase, time, nodes, controller pid. Rewritten atomically every few seconds and
// at every phase start, removed when the run ends; a live.json whose pid is gone is a run that died without a run-end.
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { NodeSpec } from '../domain/node.js';
import type { Protocol } from '../protocol/index.js';
import { writeJsonAtomic } from '../io/atomic-write.js';
import type { LiveProgress } from '../domain/result.js';
import type { LiveStatus, RunContext } from './context.js';
import type { SamplingLoop } from './sampling-loop.js';

export const LIVE_FILE = 'live.json';

export interface LiveState {
  schema: 'cablequal.live/1';
  runId: string;
  label: string | null;
  pid: number;
  controller: string; // host name of the controller running it
  startedAt: string;
  updatedAt: string; // wall clock of the last rewrite (a live run rewrites at least every 5 s)
  phase: string;
  elapsedS: number; // on the run's clock (virtual time under the simulator)
  remainingS: number | null; // the whole procedure's time left (LiveProgress.runRemainingS), at least
  phaseRemainingS?: number | null; // the current timed phase's time left (absent in files written before it)
  nodes: { name: string; host: string; cage: number | 'auto' }[];
  runDir: string;
  protocol: string;
  simulated: boolean;
}

// The run's one clock at tS: the current timed phase's rest (its end once the phase set it, its whole duration before
// then: a soak just started) and the whole procedure's, that plus every later phase's duration (phases without one, the
// benchmarks, count 0: elapsed + run remaining is the procedure as far as it is known).
export function progressOf(protocol: Protocol, phase: string, phaseEndsAtS: number | null, tS: number): LiveProgress {
  const i = protocol.phases.findIndex((p) => p.name === phase);
  if (i < 0) return { phase, elapsedS: tS, phaseRemainingS: null, runRemainingS: protocol.phases.reduce((s, p) => s + (p.durationS ?? 0), 0) };
  const own = protocol.phases[i]!.durationS;
  const current = phaseEndsAtS !== null ? Math.max(0, phaseEndsAtS - tS) : (own ?? null);
  const later = protocol.phases.slice(i + 1).reduce((s, p) => s + (p.durationS ?? 0), 0);
  return { phase, elapsedS: tS, phaseRemainingS: current, runRemainingS: (current ?? 0) + later };
}

// Keeps one run's live.json up to date; every failure to write it is ignored (it is a convenience, never the record).
export class LiveStateFile {
  private runDir: string;
  private lastWriteMs = -Infinity;
  private ended = false;

  constructor(
    runDir: string,
    private readonly base: Pick<LiveState, 'runId' | 'label' | 'startedAt' | 'protocol' | 'simulated'> & { nodes: NodeSpec[] },
    private readonly wallNow: () => number = Date.now,
  ) {
    this.runDir = runDir;
  }

  // The run directory moved (renamed after the cable's serial): the file moved with it.
  moved(runDir: string): void {
    this.runDir = runDir;
  }

  // Rewrite now (force) or when the last write is older than `everyMs`.
  update(now: LiveProgress, force = false, everyMs = 5000): void {
    if (this.ended) return;
    const wall = this.wallNow();
    if (!force && wall - this.lastWriteMs < everyMs) return;
    this.lastWriteMs = wall;
    const state: LiveState = {
      schema: 'cablequal.live/1',
      runId: this.base.runId,
      label: this.base.label,
      pid: process.pid,
      controller: hostname(),
      startedAt: this.base.startedAt,
      updatedAt: new Date(wall).toISOString(),
      phase: now.phase,
      elapsedS: now.elapsedS,
      remainingS: now.runRemainingS,
      phaseRemainingS: now.phaseRemainingS,
      nodes: this.base.nodes.map((n) => ({ name: n.name, host: n.host, cage: n.cage })),
      runDir: this.runDir,
      protocol: this.base.protocol,
      simulated: this.base.simulated,
    };
    try {
      writeJsonAtomic(join(this.runDir, LIVE_FILE), state);
    } catch {
      // a full disk shows in the journal; the live file is only a pointer
    }
  }

  // The run ended (record written, or nothing more can be written): no longer live.
  end(): void {
    this.ended = true;
    try {
      rmSync(join(this.runDir, LIVE_FILE), { force: true });
    } catch {
      // left behind: `cablequal status` shows it as a run that ended without removing it (its pid is gone)
    }
  }
}

// The live figures of a run for the status line and progress output (src/run/qualify.ts's onStatus).
export function liveStatus(ctx: RunContext, loop: SamplingLoop | null): LiveStatus {
  const laneRates: LiveStatus['laneRates'] = {};
  const nicTempC: LiveStatus['nicTempC'] = {};
  const gpuTempC: LiveStatus['gpuTempC'] = {};
  const gpuUtilPct: LiveStatus['gpuUtilPct'] = {};
  for (const n of ctx.nodes) {
    const name = n.spec.name;
    laneRates[name] = loop?.laneRates.get(name) ?? [];
    const g = loop?.gauges.get(name);
    nicTempC[name] = g?.nicTempC ?? null;
    gpuTempC[name] = g?.gpu?.temperatureC ?? null;
    gpuUtilPct[name] = g?.gpu?.utilizationPct ?? null;
  }
  return {
    ...progressOf(ctx.protocol, ctx.currentPhase, ctx.phaseEndsAtS, ctx.tS),
    laneRates,
    nicTempC,
    gpuTempC,
    gpuUtilPct,
    throughputGbps: ctx.lastThroughputGbps,
    ...(loop ? { counted: Object.fromEntries(loop.counted) } : {}),
  };
}
