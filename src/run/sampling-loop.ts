import { phyToNames, type NodeSample } from '../domain/sample.js';
import type { Reason } from '../domain/outcome.js';
import type { SamplingStats } from '../domain/record.js';
import { clip } from '../domain/text.js';
import type { NodeState, RunContext } from './context.js';
import { u64ToJson } from '../domain/u64.js';
import { JournalWriteError } from './journal.js';
import { encodeSample } from './sample-codec.js';
import { CURRENT_ANALYSIS, functionsRuleOf, resetRuleOf } from '../analysis/analyze.js';
import { LiveIntervals, type CountedTotals, type TakenInterval } from '../analysis/intervals.js';
import { tickNode, type NodeTick } from '../sampling/sampler.js';
import { runOnSchedule } from '../sampling/schedule.js';
import { TickFigures } from '../sampling/stats.js';
import { meanGpuUtilPct, type GpuUtilSample } from '../grading/gpu-load-check.js';
import { cmd } from '../transport/commands.js';
import { CommandAbortedError, TransportError } from '../transport/types.js';
import { takeLinkSnapshot } from '../probes/link-snapshot.js';
import { MAX_SNAPSHOTS_PER_NODE, linkDropOf, snapshotLine } from './link-snapshots.js';

// Whatever gives the run one sample set per node per tick (the persistent sampler, or a test double).
export interface TickSource {
  tick(tick: number): Promise<NodeTick[]>;
  // Each node's clock minus the controller's as calibrated (for the skew figure); absent: only the raw skew is known.
  offsetsMs?(): ReadonlyMap<string, number>;
  close(): Promise<void>;
}

// Decides, tick by tick, when a FAIL is already certain (link down, CRC, post-FEC, a FEC window or lane ratio held
// beyond its FAIL line): the run wraps src/analysis/early-stop.ts's EarlyStopDetector, the same watch a re-grade
// runs over the journal, into this. It is handed the sample's interval as the loop took it (null: none).
export interface FailWatch {
  push(phase: string, sample: NodeSample, interval: TakenInterval | null): Reason | null;
}

// A node's boot id now (journaled raw), or null when it cannot be read (the node does not answer, or the answer is not
// one).
export async function bootIdOf(ctx: RunContext, node: NodeState): Promise<string | null> {
  try {
    const r = await ctx.runLogged(node, cmd.bootId(), 'boot-id', 10_000);
    const id = r.stdout.trim();
    return r.exitCode === 0 && /^[0-9a-f-]{8,64}$/i.test(id) ? id : null;
  } catch (e) {
    if (e instanceof TransportError) return null;
    throw e;
  }
}

// The run's background sampler: every interval, one tick on every node; journals it, watches for gaps,
// resets and certain FAILs, and keeps the figures the live status shows.
export class SamplingLoop {
  // Each node's GPU utilisation as read (ticks that read it), at the tS of its journal line: what the GPU-load check
  // judges live, as a re-grade judges the journal's sample lines.
  readonly gpuUtil = new Map<string, GpuUtilSample[]>();
  decision: Reason | null = null;
  decidedAtS: number | null = null;
  setupFault: Reason | null = null;
  // A FAIL seen while another node was unreachable: a peer's reboot also drops the link, so wait for the peer.
  private pending: { reason: Reason; tS: number; phase: string; node: string; raw?: Record<string, string> } | null = null;
  private tick = 0;
  private stopped = false;
  private done: Promise<void> | null = null;
  private readonly figures = new TickFigures();
  private static readonly NO_OFFSETS: ReadonlyMap<string, number> = new Map();
  private readonly gapStart = new Map<string, number>();
  // Link snapshots taken per node (at most MAX_SNAPSHOTS_PER_NODE).
  private readonly snapshots = new Map<string, number>();
  // Nodes whose drop under way has its snapshot (until a sample reads their link up again).
  private readonly snapped = new Set<string>();
  // Every gap the loop noticed, with its cause: a node without a sample (transport), or ticks lost to a late or slow tick.
  readonly gaps: SamplingStats['gaps'] = [];
  private prevTick: { startMs: number; endMs: number; tS: number } | null = null;
  private readonly lastBytes = new Map<string, bigint>();
  readonly last = new Map<string, NodeSample>();
  // Latest gauges per node (temperatures and GPU telemetry are read every few ticks, not every tick).
  readonly gauges = new Map<string, { nicTempC: number | null; gpu: NodeSample['gpus'][number] | null }>();
  // Each sample's interval, taken once (today's analysis: its reset rule, both PCIe functions, the link's lanes) and
  // handed to the watch; the lane rates and counted totals (live status, metrics) follow from it.
  private readonly intervals: LiveIntervals;

  constructor(
    private readonly ctx: RunContext,
    private readonly source: TickSource,
    private readonly detector: FailWatch | null,
    private readonly opts: { intervalMs: number; maxGapS: number; anomalyRawTicks?: number; lanes?: number | null },
  ) {
    const v = CURRENT_ANALYSIS;
    this.intervals = new LiveIntervals({ resets: resetRuleOf(v), functions: functionsRuleOf(v), lanes: { carried: opts.lanes ?? null } });
  }

  // Pre-FEC errors/s per lane of each node over its last interval.
  get laneRates(): ReadonlyMap<string, number[]> {
    return this.intervals.laneRates;
  }

  // What each node counted since its first sample (the live metrics' counters).
  get counted(): ReadonlyMap<string, CountedTotals> {
    return this.intervals.counted;
  }

  start(): void {
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
    await this.source.close();
    // A gap still open when sampling stops ends there (the record keeps it even when the journal broke).
    for (const node of [...this.gapStart.keys()]) {
      try {
        this.endGap(node, 'no sample (transport) until sampling stopped');
      } catch (e) {
        if (!(e instanceof JournalWriteError)) throw e;
      }
    }
  }

  // Nodes without a sample right now (a gap is open): the load processes there cannot be judged either.
  get nodesInGap(): string[] {
    return [...this.gapStart.keys()];
  }

  // The record's figures: intervals between tick starts, and the skew with the calibrated clock offsets removed (the
  // raw skew, offsets included, beside it); gaps as journaled.
  stats(): SamplingStats {
    const f = this.figures.summary();
    const r = (x: number | null) => (x === null ? null : Math.round(x * 10) / 10);
    return {
      ticks: this.tick,
      intervalP50Ms: r(f.intervalP50Ms),
      intervalP99Ms: r(f.intervalP99Ms),
      skewP99Ms: r(f.skewP99Ms),
      rawSkewP99Ms: r(f.rawSkewP99Ms),
      gaps: this.gaps,
    };
  }

  // On the one schedule (src/sampling/schedule.ts): fixed rate, missed deadlines skipped, never drifting.
  private async loop(): Promise<void> {
    const stop = () => this.stopped;
    try {
      await runOnSchedule({ clock: this.ctx.clock, intervalMs: this.opts.intervalMs, signal: this.ctx.signal, stop }, () => this.once());
    } catch (e) {
      // A tick that cannot be recorded ends the sampling; the phase sees setupFault and the run ends ERROR.
      this.setupFault ??=
        e instanceof JournalWriteError
          ? { rule: 'journal-write', message: e.message, advice: 'free space on the controller (or choose another --out) and run again' }
          : { rule: 'harness', message: `sampler stopped: ${(e as Error).message}` };
    }
  }

  private async once(): Promise<void> {
    const ctx = this.ctx;
    const tick = this.tick++;
    const phase = ctx.currentPhase;
    const startMs = ctx.clock.now();
    const results = await this.source.tick(tick);
    const endMs = ctx.clock.now();
    this.figures.add({ startMs, endMs, nodes: results.map(tickNode) }, this.source.offsetsMs?.() ?? SamplingLoop.NO_OFFSETS);
    this.noticeStretch(startMs, endMs, results, phase);
    for (const r of results) {
      if (!r.sample) {
        this.onMissing(r, phase);
        continue;
      }
      this.onRecovered(r.node);
      const sample = r.sample;
      const lost = sample.errors.length ? this.lostCounters(sample) : [];
      if (lost.length) {
        // Unreadable output for a counter the analysis uses: the tick is kept as evidence but skipped, so the
        // next interval spans it (errors in between are counted, never dropped with a half-read tick).
        ctx.journal.append({ type: 'sample-skipped', tS: ctx.tS, tick, phase, node: r.node, missing: lost, sample: encodeSample(sample, true) });
        ctx.journal.append({ type: 'raw', tS: ctx.tS, phase, node: r.node, what: 'tick-with-errors', errors: sample.errors, raw: r.raw ?? {} });
        ctx.log.warn({ node: r.node, errors: sample.errors }, 'unreadable tick skipped');
        continue;
      }
      const prev = this.last.get(r.node);
      this.last.set(r.node, sample);
      const g = this.gauges.get(r.node) ?? { nicTempC: null, gpu: null };
      this.gauges.set(r.node, { nicTempC: sample.nicTempC ?? g.nicTempC, gpu: sample.gpus[0] ?? g.gpu });
      const tS = ctx.tS;
      ctx.journal.append({ type: 'sample', tS, tick, phase, node: r.node, sample: encodeSample(sample) }, { plain: true });
      const pct = meanGpuUtilPct(sample.gpus);
      if (pct !== null) {
        const list = this.gpuUtil.get(r.node) ?? [];
        list.push({ tS, pct });
        this.gpuUtil.set(r.node, list);
      }
      if (sample.errors.length && r.raw) {
        ctx.journal.append({ type: 'raw', tS: ctx.tS, phase, node: r.node, what: 'tick-with-errors', errors: sample.errors, raw: r.raw });
      }
      const interval = this.intervals.push(sample);
      await this.checkReset(sample, phase);
      await this.snapshotDrop(prev, sample, phase);
      if (this.detector && !this.decision) {
        const reason = this.detector.push(phase, sample, interval);
        if (reason && !this.pending) this.pending = { reason, tS: ctx.tS, phase, node: r.node, ...(r.raw ? { raw: r.raw } : {}) };
      }
    }
    this.settlePending();
  }

  // A receiver's link went down since its last sample: what the PHY says about it now, while it is still down (the
  // reason is gone once the link is back), journaled before the tick's decision (src/run/link-snapshots.ts).
  private async snapshotDrop(prev: NodeSample | undefined, sample: NodeSample, phase: string): Promise<void> {
    if (sample.rails.some((r) => r.linkUp === true)) this.snapped.delete(sample.node);
    const drop = linkDropOf(prev, sample, this.snapped.has(sample.node));
    const taken = this.snapshots.get(sample.node) ?? 0;
    if (!drop || taken >= MAX_SNAPSHOTS_PER_NODE) return;
    this.snapshots.set(sample.node, taken + 1);
    this.snapped.add(sample.node);
    const ctx = this.ctx;
    let s;
    try {
      s = await takeLinkSnapshot(ctx.node(sample.node).runner, drop.rail.netdev, ctx.clock, { originMs: ctx.startedMs, signal: ctx.signal });
    } catch (e) {
      if (e instanceof CommandAbortedError) return; // Ctrl-C: the run is stopping
      throw e;
    }
    ctx.journal.append(snapshotLine(phase, drop.trigger, s));
    if (s.link.reason) ctx.log.warn({ node: sample.node, netdev: s.netdev, reason: s.link.reason }, 'link down: the PHY says why');
  }

  // Commit a pending FAIL once every node answers again and none was reset or lost; a host change makes it ERROR instead.
  private settlePending(): void {
    const p = this.pending;
    if (!p || this.decision) return;
    if (this.setupFault) {
      this.pending = null;
      return;
    }
    if (this.gapStart.size > 0) return;
    const ctx = this.ctx;
    this.pending = null;
    this.decision = p.reason;
    this.decidedAtS = p.tS;
    ctx.journal.append({ type: 'decision', tS: p.tS, phase: p.phase, outcome: 'FAIL', reason: p.reason });
    if (p.raw) ctx.journal.append({ type: 'raw', tS: p.tS, phase: p.phase, node: p.node, what: 'decision', raw: p.raw });
    ctx.log.warn({ reason: p.reason }, 'FAIL decided');
    // Whatever phase runs, its loads stop now: its sleeps and waits are cut and no load starts from here on.
    ctx.decide();
  }

  private onMissing(r: NodeTick, phase: string): void {
    const ctx = this.ctx;
    if (!this.gapStart.has(r.node)) {
      this.gapStart.set(r.node, ctx.tS);
      ctx.journal.append({ type: 'gap-start', tS: ctx.tS, phase, node: r.node, error: clip(r.error ?? 'no sample', 300) });
      ctx.log.warn({ node: r.node, error: r.error }, 'node sample missing');
    }
    const from = this.gapStart.get(r.node)!;
    if (ctx.tS - from > this.opts.maxGapS && !this.setupFault) {
      this.setupFault = {
        rule: 'node-lost',
        node: r.node,
        message: `${r.node}: no sample for ${Math.round(ctx.tS - from)} s (${clip(r.error ?? 'unknown', 300)}), more than the ${this.opts.maxGapS} s tolerated`,
        advice: 'check the node and its SSH path; the cable was not judged',
      };
    }
  }

  private onRecovered(node: string): void {
    this.endGap(node, 'no sample (transport)');
  }

  // A node's transport gap ends: in `gaps` and journaled.
  private endGap(node: string, reason: string): void {
    const from = this.gapStart.get(node);
    if (from === undefined) return;
    this.gapStart.delete(node);
    this.recordGap({ node, fromS: from, toS: this.ctx.tS, reason });
  }

  private recordGap(gap: SamplingStats['gaps'][number], phase?: string): void {
    this.gaps.push(gap);
    this.ctx.journal.append({ type: 'gap-end', tS: this.ctx.tS, ...(phase ? { phase } : {}), ...gap });
  }

  // More than two intervals between one tick's samples and the next's: at least one tick was lost, to a tick that
  // started late (the controller was held up: blocked or suspended) or to a slow one (the nodes answered late). Every
  // node not already in a transport gap (recorded when it ends) gets the stretch in `gaps`, with that cause.
  private noticeStretch(startMs: number, endMs: number, results: NodeTick[], phase: string): void {
    const prev = this.prevTick;
    this.prevTick = { startMs, endMs, tS: this.ctx.tS };
    const interval = this.opts.intervalMs;
    if (!prev || interval <= 0 || endMs - prev.endMs <= 2 * interval) return;
    const lateMs = startMs - Math.max(prev.startMs + interval, prev.endMs);
    const tookMs = endMs - startMs;
    const s = (ms: number) => (ms / 1000).toFixed(1);
    const reason =
      lateMs >= tookMs
        ? `late tick (started ${s(lateMs)} s after its time: the controller was held up)`
        : `slow tick (the nodes took ${s(tookMs)} s to answer)`;
    for (const r of results) if (!this.gapStart.has(r.node)) this.recordGap({ node: r.node, fromS: prev.tS, toS: this.ctx.tS, reason }, phase);
  }

  // Counters the node's last good sample had and this one lacks (a garbled line drops its counter).
  private lostCounters(s: NodeSample): string[] {
    const prev = this.last.get(s.node);
    if (!prev) return [];
    const lost: string[] = [];
    for (const pr of prev.rails) {
      const cur = s.rails.find((r) => r.netdev === pr.netdev);
      const has = new Set(cur ? phyToNames(cur.phy).map(([name]) => name) : []);
      for (const [name] of phyToNames(pr.phy)) if (!has.has(name)) lost.push(`${pr.netdev}:${name}`);
    }
    return lost;
  }

  // Falling traffic counters: the node rebooted (its boot id changed, or cannot be read), and the run cannot judge the
  // cable; or its counters were cleared on the running node (mlxlink --pc, a driver reset), an event the journal keeps
  // while the analysis counts on from zero.
  private async checkReset(s: NodeSample, phase: string): Promise<void> {
    const bytes = s.rails[0]?.phy.rxBytes;
    if (bytes === undefined) return;
    const prev = this.lastBytes.get(s.node);
    this.lastBytes.set(s.node, bytes);
    if (prev === undefined || bytes >= prev || this.setupFault) return;
    const tS = this.ctx.tS;
    const node = this.ctx.node(s.node);
    const before = node.bootId ?? null;
    const now = before === null ? null : await bootIdOf(this.ctx, node);
    const rebooted = now === null || now !== before;
    this.ctx.journal.append({
      type: 'counter-reset',
      tS,
      phase,
      node: s.node,
      counter: 'rx_bytes_phy',
      from: u64ToJson(prev),
      to: u64ToJson(bytes),
      bootId: now,
      rebooted,
    });
    const went = `${s.node}: counters went backwards (rx_bytes_phy ${prev} -> ${bytes})`;
    if (!rebooted) {
      this.ctx.log.warn({ node: s.node, phase }, 'counters cleared on a running node (same boot id): counted from zero');
      return;
    }
    this.setupFault = {
      rule: 'node-reset',
      node: s.node,
      phase,
      message: `${went}: ${now === null ? 'its boot id could not be read, so the node may have rebooted' : 'its boot id changed: the node rebooted'}`,
      advice: 'check uptime on the node (a reboot or a power loss) and run again; the cable was not judged',
    };
  }
}
