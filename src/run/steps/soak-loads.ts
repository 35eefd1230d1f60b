// The loads of one soak as the run keeps them. Every journal line about them (src/grading/soak-evidence.ts: the link
// load's start, each client's throughput rows as they are read, each node's GPU load start, a load process that ended
// by itself, the stop) is written as it happens, so nothing collected is lost if the controller dies, and is applied
// to the same evidence a re-grade reads back from the journal; the same checks (src/grading/link-load-check.ts,
// gpu-load-check.ts) judge it as the soak goes and once it has run.
import type { Reason } from '../../domain/outcome.js';
import type { SoakPhase } from '../../protocol/index.js';
import { limitOf } from '../../protocol/index.js';
import { checkGpuLoad } from '../../grading/gpu-load-check.js';
import { checkLinkLoad, exitGraceS, type SoakWindow } from '../../grading/link-load-check.js';
import { LOAD_LINES, applyLoadLine, emptyEvidence, streamKey, type SoakLoadEvidence } from '../../grading/soak-evidence.js';
import { TransportError, type RemoteProcess } from '../../transport/types.js';
import type { JournalLine } from '../journal.js';
import type { RunContext } from '../context.js';
import type { SamplingLoop } from '../sampling-loop.js';
import { latestPerDirection, linkLoadRows, loadOutputWarning, processState, type LinkLoad, type StreamRows } from './link-load.js';

// How often the clients' rows are read: ib_write_bw prints one every 5 s; a third of the row-gap limit at most, so a
// stopped client is seen within the limit.
const ROWS_EVERY_S = 10;

export class SoakLoads {
  private readonly soaks = new Map<string, SoakLoadEvidence>();
  private link: LinkLoad | null = null;
  private readonly gpu = new Map<string, RemoteProcess>();
  private readonly ended = new Set<RemoteProcess>();
  private readonly allRows = new Map<string, StreamRows>();
  private readonly warned = new Map<string, number>();
  private lastReadS: number;
  private linkChanged = false;
  // The GPU load is judged every ROWS_EVERY_S (a mean over every utilisation reading so far: at each tick it made an
  // hour's soak quadratic), and at once when a GPU load process has ended.
  private lastGpuCheckS = -Infinity;
  private gpuChanged = false;

  constructor(
    private readonly ctx: RunContext,
    private readonly phase: SoakPhase,
    private readonly loop: SamplingLoop,
    private readonly startS: number,
  ) {
    this.lastReadS = startS;
  }

  // What the lines written so far say (the evidence a re-grade would read).
  get evidence(): SoakLoadEvidence {
    return this.soaks.get(this.phase.name) ?? emptyEvidence();
  }

  private write(line: JournalLine): void {
    this.ctx.journal.append(line);
    applyLoadLine(this.soaks, line);
  }

  linkStarted(load: LinkLoad): void {
    this.link = load;
    const streams = load.streams.map((s) => ({ rail: s.rail, from: s.from, to: s.to, device: s.device, client: s.client.name, server: s.server.name }));
    // Beside another cable's load (two cables qualified at once): which one, so each direction is judged on its share.
    const shared = this.ctx.soakSharedWith.length ? { sharedWith: this.ctx.soakSharedWith } : {};
    this.write({ type: LOAD_LINES.start, tS: this.ctx.tS, phase: this.phase.name, load: 'link', streams, ...shared });
  }

  gpuStarted(node: string, p: RemoteProcess): void {
    this.gpu.set(node, p);
    this.write({ type: LOAD_LINES.start, tS: this.ctx.tS, phase: this.phase.name, load: 'gpu', node, process: p.name });
  }

  // Read the clients' rows when due (or now), journaling the rows each stream printed since the last read; a node
  // that does not answer is left to the sampler (no line).
  async readRows(now = false): Promise<void> {
    if (!this.link || (!now && this.ctx.tS - this.lastReadS < Math.min(ROWS_EVERY_S, this.maxRowGapS() / 3))) return;
    this.lastReadS = this.ctx.tS;
    let rows: StreamRows[];
    try {
      rows = await linkLoadRows(this.link);
    } catch (e) {
      if (e instanceof TransportError) return;
      throw e;
    }
    const had = this.evidence.rowsSoFar;
    const streams = rows.map((r) => {
      const first = had.get(streamKey(r)) ?? 0;
      this.allRows.set(streamKey(r), r);
      const warnings = this.newWarnings(r);
      return {
        rail: r.rail,
        from: r.from,
        to: r.to,
        first,
        gbps: r.gbps.slice(first),
        ...(r.error ? { error: r.error } : {}),
        ...(warnings.length ? { warnings } : {}),
      };
    });
    this.write({ type: LOAD_LINES.rows, tS: this.ctx.tS, phase: this.phase.name, streams });
    this.linkChanged = true;
    const latest = [...latestPerDirection(rows).values()];
    if (latest.length) this.ctx.lastThroughputGbps = Math.min(...latest);
  }

  // The lines of a client's output the parser did not know that were not journaled yet (each once), reported.
  private newWarnings(r: StreamRows): string[] {
    const key = streamKey(r);
    const all = r.warnings ?? [];
    const fresh = all.slice(this.warned.get(key) ?? 0);
    this.warned.set(key, all.length);
    for (const w of fresh) this.ctx.warn(loadOutputWarning(r, w));
    return fresh;
  }

  // Journal every load process that has ended by itself since the last look (a process whose status cannot be read is
  // not taken for ended: its rows, its utilisation and the sampler tell).
  async noteExits(): Promise<void> {
    const procs: { p: RemoteProcess; node: string; load: 'link' | 'gpu'; stream?: { rail: number; from: string; to: string } }[] = [];
    for (const s of this.link?.streams ?? []) {
      const stream = { rail: s.rail, from: s.from, to: s.to };
      procs.push({ p: s.client, node: s.from, load: 'link', stream }, { p: s.server, node: s.to, load: 'link', stream });
    }
    for (const [node, p] of this.gpu) procs.push({ p, node, load: 'gpu' });
    for (const x of procs) {
      if (this.ended.has(x.p)) continue;
      const st = await processState(x.p);
      if (st === 'running' || st === 'unknown') continue;
      this.ended.add(x.p);
      this.write({
        type: LOAD_LINES.exit,
        tS: this.ctx.tS,
        phase: this.phase.name,
        load: x.load,
        node: x.node,
        process: x.p.name,
        exitCode: st.exitCode,
        ...(st.signal ? { signal: st.signal } : {}),
        ...(x.stream ?? {}),
      });
      if (x.load === 'link') this.linkChanged = true;
      else this.gpuChanged = true;
    }
  }

  // The checks over what the soak has so far (final: it ran to its end); the reasons it cannot be judged on.
  check(final: boolean): Reason[] {
    const e = this.evidence;
    const soak: SoakWindow = { name: this.phase.name, startS: this.startS, durationS: this.phase.durationS, endS: this.ctx.tS };
    const out: Reason[] = [];
    // The link's checks after what could change them (rows read, a process ended) or while an ended one waits out its grace.
    if (this.link && (final || this.linkChanged || e.exits.some((x) => x.load === 'link'))) {
      this.linkChanged = false;
      const graceS = exitGraceS(this.ctx.protocol.samplingIntervalS);
      const limit = limitOf(this.ctx.protocol, 'soak-link-load');
      out.push(...checkLinkLoad({ soak, final, measure: false, evidence: e, benchmark: this.ctx.benchmarks.ibWriteBw, limit, exitGraceS: graceS }).reasons);
    }
    if (this.phase.gpuLoad && (final || this.gpuChanged || this.ctx.tS - this.lastGpuCheckS >= ROWS_EVERY_S)) {
      this.lastGpuCheckS = this.ctx.tS;
      this.gpuChanged = false;
      const nodes = this.ctx.nodes.map((n) => n.spec.name);
      const limit = limitOf(this.ctx.protocol, 'gpu-util-min');
      out.push(...checkGpuLoad({ soak, final, nodes, utilisation: this.loop.gpuUtil, starts: e.gpuStartS, exits: e.exits, limit }).reasons);
    }
    return out;
  }

  // Beside another cable's load (two cables qualified at once): once that load has stopped (its early FAIL), the rows
  // printed so far, then the line that says so: from here on this cable has the rails alone, each row judged so.
  async noteSharing(): Promise<void> {
    const e = this.evidence;
    const together = this.ctx.together;
    if (!together || !e.sharedWith.length || e.sharedUntilS !== null || together.othersLoading(this.phase.name)) return;
    await this.readRows(true);
    this.write({ type: LOAD_LINES.sharing, tS: this.ctx.tS, phase: this.phase.name, sharedWith: [] });
  }

  // The loads are about to be stopped (`early`: before the soak's end): the end of the loaded window, and every row of
  // the soak in one line (what throughput.csv spreads over the soak; the rows lines already hold each of them).
  stopping(early: boolean): void {
    if (early) this.ctx.together?.soakLoadStoppedEarly(this.phase.name);
    this.write({ type: LOAD_LINES.stop, tS: this.ctx.tS, phase: this.phase.name });
    if (this.link) {
      const rails = [...this.allRows.values()];
      this.ctx.journal.append({
        type: 'throughput',
        tS: this.ctx.tS,
        phase: this.phase.name,
        startS: this.startS,
        bidirectional: this.phase.bidirectional,
        rails,
      });
    }
  }

  private maxRowGapS(): number {
    return limitOf(this.ctx.protocol, 'soak-link-load').params?.['maxRowGapS'] ?? 30;
  }
}
