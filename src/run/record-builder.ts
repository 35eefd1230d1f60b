import { clusterCheckRecordOf } from './steps/cluster-check.js';
import { CABLEQUAL_VERSION } from '../domain/version.js';
import type { CableFamily, CableIdentity } from '../domain/cable.js';
import { classifyCable } from '../eeprom/classify.js';
import type { Reason } from '../domain/outcome.js';
import type { AnalysisRecord, BenchmarkRecord, CableEndRecord, NodeRecord, PhaseRecord, RunRecord, SamplingStats } from '../domain/record.js';
import { UsageError } from '../domain/errors.js';
import { differentCages } from '../domain/node.js';
import { parseProtocol, type Protocol } from '../protocol/index.js';
import { gradeWithVersion, type GradedJournal, type JournalSamples } from '../grading/engine.js';
import { KNOWN_RULES_VERSIONS, RULES_VERSION, rulesOf, rulesVersionOf } from '../rules/versions.js';
import { qualificationShortfalls } from '../rules/qualification.js';
import { resultOf } from '../rules/result.js';
import { decodeSample } from './sample-codec.js';
import type { JournalContents, JournalLine } from './journal.js';
import { recordedProtocolLabel, screenJournal } from './journal-shape.js';
import { chainOfLines, type JournalChain } from './journal-chain.js';
import { checkEvidence, type NodeTimeline, type TickGap } from '../grading/evidence.js';
import { integrityReasons } from './journal-integrity.js';
import { stopNote, verdictOf } from '../grading/verdict.js';
import { meanGpuUtilPct } from '../grading/gpu-load-check.js';
import { soakLoadsOf } from '../grading/soak-evidence.js';
import { togetherOf } from './together.js';
import { withPhyWord } from './link-snapshots.js';
import { derivePhases, relabelNote, simulatedOf } from './journal-labels.js';

// The journal is the single source of truth: the live run and `cablequal grade` both build the record from it,
// so a re-grade of an untouched journal always gives the verdict the run gave. The outcome comes from the samples:
// the early-stop watch is run again over them, never taken from the journal's `decision` line.
export interface BuildOptions {
  protocol?: { text: string; file: string }; // override the protocol recorded in the journal (grade with changed limits)
  rulesVersion?: number; // grade with this version of the rules (default: today's, RULES_VERSION)
  journalFile: string;
  journalBytes: number;
}

// The rules version a journal was written under (journals of version 1 do not say).
export function journalRulesVersion(contents: JournalContents): number {
  const start = contents.lines.find((l) => l.type === 'run-start');
  const v = start?.['rulesVersion'];
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : 1;
}

// A version as cablequal writes one (a journal is untrusted: anything else is not carried into the record).
const VERSION_TEXT = /^\d{1,6}\.\d{1,6}\.\d{1,6}(-[0-9A-Za-z.]{1,30})?$/;

function linesOf<T extends JournalLine>(lines: JournalLine[], type: string): T[] {
  return lines.filter((l) => l.type === type) as T[];
}

// The cable's class from its EEPROM (not from how it trained): a 400G-class cable that trained 4 x 50G is QSFP112.
function classOf(id: CableIdentity | null): { family: CableFamily; familyBasis: string } {
  if (!id) return { family: 'unknown', familyBasis: 'no EEPROM identity was read' };
  try {
    const c = classifyCable(id);
    return { family: c.family, familyBasis: c.basis };
  } catch {
    // The identity is read back from an untrusted journal: a field missing or of the wrong type classifies nothing.
    return { family: 'unknown', familyBasis: 'the EEPROM identity in the journal is damaged (a field missing or of the wrong type)' };
  }
}

// Rebuild phases from phase-start/phase-end lines; a phase without an end was cut off.
function phasesOf(lines: JournalLine[], aborted: boolean): PhaseRecord[] {
  const out: PhaseRecord[] = [];
  for (const l of lines) {
    if (l.type === 'phase-start')
      out.push({ name: String(l.phase), kind: String(l.kind), startS: Number(l.tS), endS: null, status: aborted ? 'aborted' : 'error' });
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
export function buildRecord(journal: JournalContents, opts: BuildOptions): RunRecord {
  // The hash chain first, over every line as it was read; then the journal is untrusted: lines without the fields
  // read below are left out and listed in record.journal.
  const chain = journal.chain ?? chainOfLines(journal.lines, journal.lineNos);
  const contents = screenJournal(journal);
  const lines = contents.lines;
  const start = lines.find((l) => l.type === 'run-start');
  if (!start) throw new Error('journal has no run-start line: not a cablequal journal');
  const version = opts.rulesVersion ?? RULES_VERSION;
  const rulesVersion = rulesVersionOf(version);
  if (!rulesVersion) {
    throw new UsageError(`rules version ${version}: this cablequal grades with versions ${KNOWN_RULES_VERSIONS.join(', ').replace(/, (\d+)$/, ' and $1')}`);
  }
  // The journal's own protocol is read leniently (a rule this version does not know is noted, not fatal); a file
  // given to re-grade with is the operator's, checked strictly. Either is read for the rules it is graded with.
  const rules = rulesOf(version);
  const protocol = opts.protocol
    ? parseProtocol(opts.protocol.text, opts.protocol.file, { rules })
    : parseProtocol(String(start.protocolText), recordedProtocolLabel(contents, start, opts.journalFile), { lenient: true, rules });
  const journalVersion = journalRulesVersion(contents);
  // What the loader had to decide for the protocol, for the versions that say so (version 1 did not).
  const notes = rulesVersion.protocolNotes ? [...protocol.notes] : [];
  if (journalVersion !== version) notes.unshift(`journal written under rules version ${journalVersion}; graded with rules version ${version}`);
  if (opts.protocol) {
    const ran = recordedNameOf(start);
    notes.unshift(
      `graded with the limits of ${opts.protocol.file} (${protocol.name}, ${protocol.sha256}), not those of the protocol the run recorded (${ran.name}, ${ran.sha256})`,
    );
  }
  const end = lines.find((l) => l.type === 'run-end');
  const setupErrors = linesOf<JournalLine & { reason: Reason }>(lines, 'setup-error').map((l) => l.reason);
  const abortedLine = lines.find((l) => l.type === 'aborted');
  const decisionLine = lines.find((l) => l.type === 'decision') as (JournalLine & { reason: Reason }) | undefined;
  const aborted = !end || abortedLine !== undefined;

  const nodeInfo = linesOf<JournalLine & { record: NodeRecord }>(lines, 'node-info').map((l) => l.record);
  // A node's facts: preflight's node-info line, completed by later ones (the NCCL run's versions).
  const nodes: NodeRecord[] = (start.nodes as NodeRecord[]).map((n) =>
    nodeInfo.filter((x) => x.name === n.name).reduce<NodeRecord>((acc, x) => ({ ...acc, ...x }), n),
  );
  const ends = (lines.find((l) => l.type === 'identity')?.ends as CableEndRecord[] | undefined) ?? [];
  const benchmarks = benchmarksOf(lines);
  const lanes = nodes.find((n) => n.lanes != null)?.lanes ?? null;
  // Each sample graded under the phase the timeline places it in, not the phase its line states (journal-labels.ts).
  const derived = derivePhases(contents);
  const relabelled = relabelNote(derived);
  if (relabelled) notes.push(relabelled);
  const samples = journalSamplesOf(lines, derived.phaseOf);
  const graded: GradedJournal | null = samples.count ? gradeWithVersion(version, samples, protocol, benchmarks, lanes) : null;
  const phases = phasesOf(lines, aborted);
  const stop = decisionLine && graded && rulesVersion.confirmsStop ? stopNote(decisionLine.reason, journalVersion, graded.decision) : null;
  if (stop) notes.push(stop);
  const unread = rulesVersion.rules['phy-recoveries'] && graded ? recoveriesUnread(graded.analysis) : null;
  if (unread) notes.push(unread);

  // The evidence the verdict needs, checked again from the journal's own lines: the procedure that ran is the
  // journal's protocol (a re-grade with other limits changes the limits, not what was run).
  const ran = opts.protocol ? recordedProtocolOf(start, protocol) : protocol;
  const soakLoads = soakLoadsOf(lines);
  const evidence = checkEvidence({
    protocol: ran,
    phases,
    benchmarks,
    loopbackRowsHaveRails: linesOf(lines, 'benchmark').some(
      (b) => b.kind === 'loopback' && (b.results as { rail?: unknown }[]).some((r) => r.rail !== undefined),
    ),
    nodeNames: (start.nodes as NodeRecord[]).map((n) => n.name),
    nodes,
    ends,
    hasIdentityLine: lines.some((l) => l.type === 'identity'),
    timelines: samples.timelines,
    rules,
    limits: protocol.limits,
    journalVersion,
    soakLoads,
  });
  notes.push(...evidence.notes);

  const { outcome, reasons } = verdictOf({
    chainBreaks: chain.status === 'broken' ? chainReasons(chain) : [],
    integrity: integrityReasons(contents, start, chain),
    setupErrors,
    aborted: aborted ? { why: abortedLine ? String(abortedLine.why) : null, lastTick: samples.lastTick, tornTail: contents.truncatedTail === true } : null,
    preflightOnly: start.preflightOnly === true ? { phaseBeyond: phases.find((p) => p.kind !== 'preflight')?.name ?? null, samples: samples.count } : null,
    graded,
    setupChecks: evidence.setup,
    incomplete: evidence.incomplete,
    unsoaked: phases.filter((p) => p.kind === 'soak' && (p.status === 'skipped' || p.status === 'stopped-early')).map((p) => p.name),
    confirmsStop: rulesVersion.confirmsStop,
    decision: decisionLine ? { reason: decisionLine.reason, journalVersion } : null,
  });

  const sampling = (lines.find((l) => l.type === 'sampling')?.stats as SamplingStats | undefined) ?? {
    ticks: samples.ticks.size,
    intervalP50Ms: null,
    intervalP99Ms: null,
    skewP99Ms: null,
    gaps: [],
  };
  const id = ends.find((e) => e.identity)?.identity ?? null;
  const lastLine = lines[lines.length - 1];
  const startedAt = String(start.startedAt);
  const endedAt = end ? String(end.endedAt) : lastLine?.tS !== undefined ? new Date(Date.parse(startedAt) + Number(lastLine.tS) * 1000).toISOString() : null;
  const record: RunRecord = {
    schema: 'cablequal.run/1',
    // The cablequal that built this record (a re-grade's own), and the one that wrote the journal when it said so.
    cablequalVersion: CABLEQUAL_VERSION,
    ...(typeof start.cablequalVersion === 'string' && VERSION_TEXT.test(start.cablequalVersion) ? { journalWrittenBy: start.cablequalVersion } : {}),
    runId: String(start.runId),
    label: (start.label as string | null) ?? null,
    outcome,
    // A link-down FAIL quotes what the PHY said at the drop, when the journal has a snapshot of it.
    reasons: withPhyWord(reasons, lines),
    decidedAtS: outcome === 'FAIL' ? (graded?.decidedAtS ?? null) : null,
    // Simulated when run with --sim, or when a node said it is the simulated lab (sim serve over real SSH).
    // and whatever the flags say, when the journal holds the simulated lab's own marks (journal-labels.ts).
    simulated: simulatedOf(lines, Boolean(start.simulated) || nodes.some((n) => n.simulated === true)),
    ...(start.scenario ? { scenario: String(start.scenario) } : {}),
    startedAt,
    endedAt,
    protocol: { name: protocol.name, sha256: protocol.sha256, file: protocol.file },
    // Graded with limits given by --protocol: the protocol the run recorded (what ran) as well.
    ...(opts.protocol ? { protocolRecorded: recordedNameOf(start) } : {}),
    ...(start.preflightOnly === true ? { kind: 'preflight' as const } : claimOf(ran)),
    nodes,
    cable: {
      ...classOf(id),
      lanes,
      trainedSpeedMbps: nodes.reduce<number | null>((m, n) => (n.speedMbps != null && (m === null || n.speedMbps > m) ? n.speedMbps : m), null),
      ends,
      serial: id?.vendorSn ?? null,
      vendor: id?.vendorName ?? null,
      partNumber: id?.vendorPn ?? null,
      ...cageEnds(nodes),
    },
    phases,
    benchmarks,
    analysis: graded?.analysis ?? null,
    measurements: graded?.measurements ?? [],
    rules: { version, notes },
    headline: graded?.headline ?? null,
    sampling,
    journal: {
      file: opts.journalFile,
      lines: lines.length,
      bytes: opts.journalBytes,
      ...(contents.badLines.length
        ? {
            badLines: contents.badLines.length,
            problems: (contents.problems ?? contents.badLines.map((line) => ({ line, reason: 'unreadable' }))).slice(0, 50),
          }
        : {}),
      ...(evidence.tickGaps.length ? { tickGaps: tickGapsOf(evidence.tickGaps) } : {}),
      chain: chainRecordOf(chain),
    },
    ...(evidence.soakLoad ? { soakLoad: evidence.soakLoad } : {}),
    ...counterResetsOf(lines),
    ...(Array.isArray(start.sharedNodes) && start.sharedNodes.length ? { sharedNodes: start.sharedNodes.map(String) } : {}),
    ...togetherOf(start, soakLoads),
    ...(start.role === 'golden' ? { role: 'golden' as const } : {}),
    ...clusterCheckOf(lines),
  };
  // The last step: every figure the outputs show, computed once from the record (src/rules/result.ts).
  return { ...record, result: resultOf(record) };
}

// A cluster's check (run --cluster), read from its line's raw text; nothing for every other run.
function clusterCheckOf(lines: JournalLine[]): Pick<RunRecord, 'clusterCheck'> {
  const line = lines.find((l) => l.type === 'cluster-check');
  const check = line ? clusterCheckRecordOf(line) : null;
  return check ? { clusterCheck: check } : {};
}

// The benchmark lines' figures as the record states them (journals before per-rail loopback measured rail 0 only).
function benchmarksOf(lines: JournalLine[]): BenchmarkRecord {
  const benchmarks: BenchmarkRecord = { loopback: [], ibWriteBw: null, nccl: null };
  for (const b of linesOf(lines, 'benchmark')) {
    // Journals before per-rail loopback measured rail 0 only and did not say so.
    if (b.kind === 'loopback')
      benchmarks.loopback = (b.results as { node: string; rail?: number; gbps: number }[]).map((r) => ({ node: r.node, rail: r.rail ?? 0, gbps: r.gbps }));
    if (b.kind === 'ib_write_bw') {
      benchmarks.ibWriteBw = {
        perRail: b.perRail as never,
        sumMedianGbps: Number(b.sumMedianGbps),
        ...(Array.isArray(b.perDirection) ? { perDirection: b.perDirection as never } : {}),
        ...(b.directions === 'one-at-a-time' ? { directions: 'one-at-a-time' as const } : {}),
      };
    }
    if (b.kind === 'nccl') {
      benchmarks.nccl = {
        busbwGBs: b.busbwGBs as number | null,
        maxBusbwGBs: b.maxBusbwGBs as number | null,
        network: b.network as string | null,
        devices: b.devices as string[],
        ...(Array.isArray(b.ranks) ? { ranks: b.ranks as never } : {}),
      };
    }
  }
  return benchmarks;
}

// What the run may claim, from the protocol that ran (a re-grade with other limits does not change what ran).
function claimOf(ran: Protocol): Pick<RunRecord, 'kind' | 'shortOfQualification'> {
  const short = qualificationShortfalls(ran.phases);
  return short.length ? { kind: 'setup-check', shortOfQualification: short } : { kind: 'qualification' };
}

// The counter resets the run journaled with what it found (rules version 3 on: a clearing on a running node, or a
// reboot); older counter-reset lines do not say and are left to the analysis' count.
function counterResetsOf(lines: JournalLine[]): Pick<RunRecord, 'counterResets'> {
  const out = linesOf(lines, 'counter-reset')
    .filter((l) => typeof l['node'] === 'string' && typeof l['phase'] === 'string' && Number.isFinite(l.tS) && typeof l['rebooted'] === 'boolean')
    .map((l) => ({ tS: l.tS!, node: l['node'] as string, phase: l['phase'] as string, rebooted: l['rebooted'] as boolean }));
  return out.length ? { counterResets: out } : {};
}

// The journal's own protocol (what ran), read leniently; the grading protocol when the recorded text cannot be read.
function recordedProtocolOf(start: JournalLine, grading: Protocol): Protocol {
  try {
    return parseProtocol(String(start.protocolText), 'journal', { lenient: true });
  } catch {
    return grading;
  }
}

// The protocol run-start recorded (what ran), as the record names a protocol.
function recordedNameOf(start: JournalLine): { name: string; sha256: string; file: string } {
  const p = (start.protocol ?? {}) as { name?: unknown; sha256?: unknown; file?: unknown };
  return { name: String(p.name ?? ''), sha256: String(p.sha256 ?? ''), file: String(p.file ?? '') };
}

// The chain's breaks as the reasons of an ERROR, the first lines named.
function chainReasons(chain: JournalChain): Reason[] {
  const shown = chain.breaks.slice(0, 5).map((b) => ({
    rule: 'journal-chain',
    value: b.line,
    message: `journal line ${b.line}: ${b.reason}; the journal cannot support a verdict`,
    advice: 'use the journal as the run wrote it (a backup or the lab archive), or qualify the cable again',
  }));
  if (chain.breaks.length > shown.length)
    shown.push({
      ...shown[0]!,
      value: chain.breaks.length,
      message: `and ${chain.breaks.length - shown.length} more line(s) break the journal's hash chain (record.json lists up to 50)`,
    });
  return shown;
}

// The chain as the record states it: intact, broken (the lines named) or unchained (written before the chain).
function chainRecordOf(chain: JournalChain): NonNullable<RunRecord['journal']['chain']> {
  return {
    status: chain.status,
    lastHash: chain.lastHash,
    ...(chain.breaks.length ? { breaks: chain.breaks.slice(0, 50) } : {}),
    ...(chain.status === 'unchained'
      ? {
          note: 'journal written before hash chaining (no "prev" fields): a deleted or edited line is found only by its consequences (the checks the verdict is built from)',
        }
      : {}),
  };
}

// Missing ticks per node, for the record: how many ranges, the first 50 of them.
function tickGapsOf(gaps: TickGap[]): { count: number; ranges: TickGap[] } {
  return { count: gaps.length, ranges: gaps.slice(0, 50) };
}

type RawSampleLine = JournalLine & {
  phase: string;
  sample: { node: string; tick: number; tMs: number; rails: { netdev: string; lanes?: number | null }[]; gpus: { utilizationPct: number | null }[] };
};

function timelineOf(timelines: Map<string, NodeTimeline>, node: string): NodeTimeline {
  let t = timelines.get(node);
  if (!t) timelines.set(node, (t = { tS: [], ticks: [], gpuUtilPct: [], skippedTicks: new Set(), gapStartsS: [] }));
  return t;
}

// What one pass over the sample lines tells before any is revived: per node its canonical netdev (first rail of
// its first sample with rails), lane count (first one the canonical rail reported) and whether its samples are in time
// order; then the samples on demand, in journal order, revived one at a time (only the canonical rail when asked).
function journalSamplesOf(
  lines: JournalLine[],
  phaseOf: ReadonlyMap<number, string>,
): JournalSamples & { lastTick: number | null; ticks: Set<number>; timelines: Map<string, NodeTimeline> } {
  const nodes = new Map<string, { netdev: string | undefined; lanes: number | null; lastTMs: number; ordered: boolean }>();
  const timelines = new Map<string, NodeTimeline>();
  let count = 0;
  let lastTick: number | null = null;
  const ticks = new Set<number>();
  for (const l of lines) {
    // Why a node has no sample at a tick, as the run journaled it (these lines are not screened: read defensively).
    if (l.type === 'sample-skipped' && typeof l['node'] === 'string' && Number.isSafeInteger(l['tick']))
      timelineOf(timelines, l['node']).skippedTicks.add(l['tick'] as number);
    if (l.type === 'gap-start' && typeof l['node'] === 'string' && Number.isFinite(l.tS)) timelineOf(timelines, l['node']).gapStartsS.push(l.tS!);
    if (l.type !== 'sample') continue;
    const s = (l as RawSampleLine).sample;
    count++;
    lastTick = s.tick;
    ticks.add(s.tick);
    const t = timelineOf(timelines, s.node);
    t.tS.push(Number(l.tS ?? 0));
    t.ticks.push(s.tick);
    t.gpuUtilPct.push(meanGpuUtilPct((l as RawSampleLine).sample.gpus));
    let n = nodes.get(s.node);
    if (!n) nodes.set(s.node, (n = { netdev: undefined, lanes: null, lastTMs: -Infinity, ordered: true }));
    if (n.netdev === undefined && s.rails.length > 0) n.netdev = s.rails[0]!.netdev;
    if (n.lanes === null && n.netdev !== undefined) {
      const lanes = s.rails.find((r) => r.netdev === n!.netdev)?.lanes;
      if (lanes != null) n.lanes = lanes;
    }
    if (!(s.tMs >= n.lastTMs))
      n.ordered = false; // out of order, or NaN: leave it to the sorting path
    else n.lastTMs = s.tMs;
  }
  return {
    count,
    lastTick,
    ticks,
    timelines,
    nodes,
    forEach(fn, canonicalOnly) {
      lines.forEach((l, i) => {
        if (l.type !== 'sample') return;
        const raw = (l as RawSampleLine).sample;
        const sample = canonicalOnly ? decodeSample(raw, nodes.get(raw.node)!.netdev) : decodeSample(raw);
        fn(phaseOf.get(i) ?? (l as RawSampleLine).phase, sample, Number(l.tS ?? 0));
      });
    },
  };
}

// The cages each end sat in, when the two differ (the record says so; runs before this field are read the same way).
function cageEnds(nodes: readonly NodeRecord[]): { differentCages?: { node: string; cage: number }[] } {
  const ends = nodes.flatMap((n) => (typeof n.cage?.index === 'number' ? [{ node: n.name, cage: n.cage.index }] : []));
  const differ = differentCages(ends);
  return differ ? { differentCages: differ } : {};
}

// The receivers whose kernel did not expose total_success_recovery_phy, said once (rules version 5 grades recoveries
// where it is read): their recoveries without a link drop were not counted, which is not an error.
function recoveriesUnread(analysis: AnalysisRecord): string | null {
  const nodes = [...new Set(analysis.perNodePhase.map((s) => s.node))];
  const unread = nodes.filter((n) => !analysis.perNodePhase.some((s) => s.node === n && s.recoveries !== undefined));
  if (unread.length === 0) return null;
  const who = unread.length === nodes.length ? `any receiver (${unread.join(', ')})` : unread.join(', ');
  return `total_success_recovery_phy: not exposed on ${who} (mlx5 before the 2025-03 patch, or firmware without the PPCNT recovery group): recoveries without a link drop were not counted there`;
}
