import type { CableFamily, CableIdentity } from '../domain/cable.js';
import { classifyCable } from '../eeprom/classify.js';
import type { Outcome, Reason } from '../domain/outcome.js';
import type { NodeSample } from '../domain/sample.js';
import type { BenchmarkRecord, CableEndRecord, NodeRecord, PhaseRecord, RunRecord, SamplingStats } from '../domain/record.js';
import { parseProtocol, type Protocol } from '../protocol/index.js';
import { analyzeRun, RunAnalyzer, type LabelledSample } from '../analysis/analyze.js';
import { gradeRun } from '../grading/index.js';
import { reviveSample } from './revive.js';
import type { JournalContents, JournalLine } from './journal.js';

// The journal is the single source of truth: the live run and `cablequal grade` both build the record from it,
// so a re-grade of an untouched journal always gives the verdict the run gave.
export interface BuildOptions {
  protocol?: Protocol; // override the protocol recorded in the journal (grade with changed limits)
  journalFile: string;
  journalBytes: number;
}

function linesOf<T extends JournalLine>(lines: JournalLine[], type: string): T[] {
  return lines.filter((l) => l.type === type) as T[];
}

// The cable's class from its EEPROM (not from how it trained): a 400G-class cable that trained 4 x 50G is QSFP112.
function classOf(id: CableIdentity | null): { family: CableFamily; familyBasis: string } {
  if (!id) return { family: 'unknown', familyBasis: 'no EEPROM identity was read' };
  const c = classifyCable(id);
  return { family: c.family, familyBasis: c.basis };
}

// Rebuild phases from phase-start/phase-end lines; a phase without an end was cut off.
function phasesOf(lines: JournalLine[], aborted: boolean): PhaseRecord[] {
  const out: PhaseRecord[] = [];
  for (const l of lines) {
    if (l.type === 'phase-start') out.push({ name: String(l.phase), kind: String(l.kind), startS: Number(l.tS), endS: null, status: aborted ? 'aborted' : 'error' });
    if (l.type === 'phase-end') {
      const p = [...out].reverse().find((x) => x.name === l.phase && x.endS === null);
      if (p) {
        p.endS = Number(l.tS);
        p.status = l.status as PhaseRecord['status'];
        if (l.note) p.note = String(l.note);
      }
    }
  }
  return out;
}

// Turn a run's journal into its record: outcome, reasons, analysis, measurements.
export function buildRecord(contents: JournalContents, opts: BuildOptions): RunRecord {
  const lines = contents.lines;
  const start = lines.find((l) => l.type === 'run-start');
  if (!start) throw new Error('journal has no run-start line: not a cablequal journal');
  const protocol = opts.protocol ?? parseProtocol(String(start.protocolText), String((start.protocol as { file?: string })?.file ?? 'journal'));
  const end = lines.find((l) => l.type === 'run-end');
  const setupErrors = linesOf<JournalLine & { reason: Reason }>(lines, 'setup-error').map((l) => l.reason);
  const abortedLine = lines.find((l) => l.type === 'aborted');
  const decisionLine = lines.find((l) => l.type === 'decision') as (JournalLine & { reason: Reason }) | undefined;
  const aborted = !end || abortedLine !== undefined;

  const nodeInfo = linesOf<JournalLine & { record: NodeRecord }>(lines, 'node-info').map((l) => l.record);
  // A node's facts: preflight's node-info line, completed by later ones (the NCCL run's versions).
  const nodes: NodeRecord[] = (start.nodes as NodeRecord[]).map((n) => nodeInfo.filter((x) => x.name === n.name).reduce<NodeRecord>((acc, x) => ({ ...acc, ...x }), n));
  const ends = (lines.find((l) => l.type === 'identity')?.ends as CableEndRecord[] | undefined) ?? [];
  const benchmarks: BenchmarkRecord = { loopback: [], ibWriteBw: null, nccl: null };
  for (const b of linesOf(lines, 'benchmark')) {
    // Journals before per-rail loopback measured rail 0 only and did not say so.
    if (b.kind === 'loopback') benchmarks.loopback = (b.results as { node: string; rail?: number; gbps: number }[]).map((r) => ({ node: r.node, rail: r.rail ?? 0, gbps: r.gbps }));
    if (b.kind === 'ib_write_bw') {
      benchmarks.ibWriteBw = { perRail: b.perRail as never, sumMedianGbps: Number(b.sumMedianGbps), ...(Array.isArray(b.perDirection) ? { perDirection: b.perDirection as never } : {}) };
    }
    if (b.kind === 'nccl') {
      benchmarks.nccl = { busbwGBs: b.busbwGBs as number | null, maxBusbwGBs: b.maxBusbwGBs as number | null, network: b.network as string | null, devices: b.devices as string[], ...(Array.isArray(b.ranks) ? { ranks: b.ranks as never } : {}) };
    }
  }
  const lanes = nodes.find((n) => n.lanes != null)?.lanes ?? null;
  const scan = scanSamples(lines);
  const analysis = scan.count ? analyzeSamples(lines, scan, protocol.phases, lanes) : null;
  const graded = analysis ? gradeRun(analysis, benchmarks, protocol) : null;

  let outcome: Outcome;
  let reasons: Reason[];
  if (setupErrors.length) {
    outcome = 'ERROR';
    reasons = setupErrors;
  } else if (aborted) {
    outcome = 'ABORTED';
    const lastTick = scan.lastTick;
    reasons = [
      abortedLine
        ? { rule: 'aborted', message: `run stopped: ${String(abortedLine.why)}` }
        : { rule: 'aborted', message: `journal ends without an end marker (controller stopped)${lastTick !== null ? `; last tick ${lastTick}` : ''}${contents.truncatedTail ? '; torn last line dropped' : ''}` },
    ];
  } else if (start.preflightOnly === true) {
    // `cablequal preflight`: the nodes are ready; no cable was judged (no certificate is written for it).
    outcome = 'PASS';
    reasons = [{ rule: 'preflight', message: 'preflight passed on every node (tools, rails Up at 200G, RS-FEC, addresses, sudo for ethtool -m); no cable was judged' }];
  } else if (graded) {
    outcome = graded.outcome;
    reasons = graded.reasons;
    if (decisionLine && !reasons.some((r) => r.grade === 'FAIL')) {
      outcome = 'FAIL';
      reasons = [decisionLine.reason, ...reasons];
    }
  } else {
    outcome = 'ERROR';
    reasons = [{ rule: 'no-samples', message: 'the run ended without a single sample: nothing to judge' }];
  }

  const sampling = (lines.find((l) => l.type === 'sampling')?.stats as SamplingStats | undefined) ?? {
    ticks: scan.ticks.size,
    intervalP50Ms: null,
    intervalP99Ms: null,
    skewP99Ms: null,
    gaps: [],
  };
  const id = ends.find((e) => e.identity)?.identity ?? null;
  const lastLine = lines[lines.length - 1];
  const startedAt = String(start.startedAt);
  const endedAt = end ? String(end.endedAt) : lastLine?.tS !== undefined ? new Date(Date.parse(startedAt) + Number(lastLine.tS) * 1000).toISOString() : null;
  return {
    schema: 'cablequal.run/1',
    runId: String(start.runId),
    label: (start.label as string | null) ?? null,
    outcome,
    reasons,
    decidedAtS: decisionLine && outcome === 'FAIL' ? Number(decisionLine.tS) : null,
    // Simulated when run with --sim, or when a node said it is the simulated lab (sim serve over real SSH).
    simulated: Boolean(start.simulated) || nodes.some((n) => n.simulated === true),
    ...(start.scenario ? { scenario: String(start.scenario) } : {}),
    startedAt,
    endedAt,
    protocol: { name: protocol.name, sha256: protocol.sha256, file: protocol.file },
    nodes,
    cable: {
      ...classOf(id),
      lanes,
      trainedSpeedMbps: nodes.reduce<number | null>((m, n) => (n.speedMbps != null && (m === null || n.speedMbps > m) ? n.speedMbps : m), null),
      ends,
      serial: id?.vendorSn ?? null,
      vendor: id?.vendorName ?? null,
      partNumber: id?.vendorPn ?? null,
    },
    phases: phasesOf(lines, aborted),
    benchmarks,
    analysis,
    measurements: graded?.measurements ?? [],
    sampling,
    journal: { file: opts.journalFile, lines: lines.length, bytes: opts.journalBytes },
    ...(Array.isArray(start.sharedNodes) && start.sharedNodes.length ? { sharedNodes: start.sharedNodes.map(String) } : {}),
  };
}

type RawSampleLine = JournalLine & { phase: string; sample: { node: string; tick: number; tMs: number; rails: { netdev: string; lanes?: number | null }[] } };

// What one pass over the sample lines tells before any is revived: per node its canonical netdev (first rail of
// its first sample with rails), lane count (first one the canonical rail reported) and whether its samples are in time order.
interface SampleScan {
  count: number;
  lastTick: number | null;
  ticks: Set<number>;
  nodes: Map<string, { netdev: string | undefined; lanes: number | null; lastTMs: number; ordered: boolean }>;
}

function scanSamples(lines: JournalLine[]): SampleScan {
  const scan: SampleScan = { count: 0, lastTick: null, ticks: new Set(), nodes: new Map() };
  for (const l of lines) {
    if (l.type !== 'sample') continue;
    const s = (l as RawSampleLine).sample;
    scan.count++;
    scan.lastTick = s.tick;
    scan.ticks.add(s.tick);
    let n = scan.nodes.get(s.node);
    if (!n) scan.nodes.set(s.node, (n = { netdev: undefined, lanes: null, lastTMs: -Infinity, ordered: true }));
    if (n.netdev === undefined && s.rails.length > 0) n.netdev = s.rails[0]!.netdev;
    if (n.lanes === null && n.netdev !== undefined) {
      const lanes = s.rails.find((r) => r.netdev === n!.netdev)?.lanes;
      if (lanes != null) n.lanes = lanes;
    }
    if (!(s.tMs >= n.lastTMs)) n.ordered = false; // out of order, or NaN: leave it to the sorting path
    else n.lastTMs = s.tMs;
  }
  return scan;
}

// Analyse the journal's samples: streamed one by one (only the canonical rail revived) when every node's samples
// are in time order, as the sampler writes them; otherwise all revived and sorted by analyzeRun.
function analyzeSamples(lines: JournalLine[], scan: SampleScan, phases: Protocol['phases'], lanes: number | null) {
  if ([...scan.nodes.values()].some((n) => !n.ordered)) {
    const samples: LabelledSample[] = linesOf<RawSampleLine>(lines, 'sample').map((l) => ({ phase: l.phase, sample: reviveSample(l.sample) }));
    return analyzeRun({ samples, phases, ...(lanes ? { lanes } : {}) });
  }
  const analyzer = new RunAnalyzer(phases);
  for (const [node, n] of scan.nodes) analyzer.node(node, n.netdev, n.lanes ?? lanes ?? null);
  for (const l of lines) {
    if (l.type !== 'sample') continue;
    const raw = (l as RawSampleLine).sample;
    analyzer.push((l as RawSampleLine).phase, reviveSample(raw, scan.nodes.get(raw.node)!.netdev));
  }
  return analyzer.finish();
}

// Samples in journal order with phases (for time-series outputs).
export function journalSamples(contents: JournalContents): LabelledSample[] {
  return linesOf<JournalLine & { phase: string; sample: unknown }>(contents.lines, 'sample').map((l) => ({ phase: l.phase, sample: reviveSample(l.sample) }));
}

export type { NodeSample };
