import { CABLEQUAL_VERSION } from '../domain/version.js';
import type { CableFamily } from '../domain/cable.js';
import type { CableEnd } from '../domain/node.js';
import type { Measurement } from '../domain/limit.js';
import type { Outcome, Reason } from '../domain/outcome.js';
import { CABLE_VERDICTS } from '../domain/outcome.js';
import type {
  FunctionDivergence,
  BenchmarkRecord,
  Headline,
  LaneTempStats,
  NodeRecord,
  PhaseRecord,
  ReadingStats,
  RunRecord,
  SamplingStats,
  SoakLoadRecord,
  TogetherRecord,
  WindowStats,
} from '../domain/record.js';
import type { RunResult } from '../domain/result.js';
import { laneRatioText, resultOfRecord } from '../rules/result.js';

// ERROR/ABORTED runs could not judge the cable: they get a run report, never a certificate. A set-up check (a protocol
// short of a qualification, src/rules/qualification.ts) gets a set-up-check report with its verdict, never a certificate.
export type DocumentKind = 'certificate' | 'setup-check' | 'run-report';

// One end of the cable as its EEPROM told us (flattened for tables and JSON).
export interface CableEndContent {
  node: string;
  netdev: string;
  standard: string | null;
  identifier: string | null;
  vendorName: string | null;
  vendorOui: string | null;
  vendorPn: string | null;
  vendorRev: string | null;
  vendorSn: string | null;
  dateCode: string | null;
  lengthM: number | null;
  attenuationDb: Record<string, number>;
  anomalies: string[];
  error: string | null;
}

// One receiver over one phase: the figures the certificate table shows.
export interface NodePhaseContent {
  node: string;
  phase: string;
  seconds: number;
  lanes: number;
  laneBer: { lane: number; errors: number; ratePerS: number; ber: number; berUb95: number }[];
  preFecBer: number;
  preFecBerUb95: number;
  correctedBits: number;
  crcErrors: number;
  postFecErrors: number;
  symbolErrors: number;
  linkDownEvents: number;
  recoveries?: number; // successful PHY recoveries (total_success_recovery_phy); absent where not read
  counterResets: number;
  worstLane: number | null;
  worstLaneRatio: number;
  laneRatioText: string; // "no errors", "at least 1200x", "1.8x" (rules version 2: a certain ratio, a lower bound against zero lanes)
  nicTempMaxC: number | null;
  nicTempMeanC: number | null;
  gpuUtilMeanPct: number | null;
  gpuTempMaxC: number | null;
  readings?: Record<string, ReadingStats>; // registered extra readings (src/probes/readings.ts)
}

// Everything the certificate says, in one plain object: HTML renders it, certificate.json signs it.
// What a protocol that is not a built-in changes from the built-in it derives from (src/protocol/derivation.ts).
export interface ProtocolDerived {
  from: string;
  fromSha256: string;
  changes: string[];
}

export interface CertificateContent {
  schema: 'cablequal.certificate/1';
  kind: DocumentKind;
  // The cablequal that wrote the document (absent in documents written before 0.1.0 recorded it).
  cablequalVersion?: string;
  // What the protocol that ran lacks to qualify a cable (empty for a qualification); documents written before set-up
  // checks were told apart do not have it.
  shortOfQualification: string[];
  runId: string;
  label: string | null;
  outcome: Outcome;
  verdict: 'PASS' | 'MARGINAL' | 'FAIL' | null; // null for a run report; a set-up check's verdict is that of a short run
  // The grading rules that produced the verdict; `verify` re-grades with the same version (absent: version 1).
  rulesVersion: number;
  // What the loaded soak proved, per receiver and lane (the first thing a PASS states; shown for every verdict).
  headline: Headline | null;
  reasons: Reason[];
  decidedAtS: number | null;
  simulated: boolean;
  scenario: string | null;
  startedAt: string;
  endedAt: string | null;
  protocol: { name: string; sha256: string }; // whose limits graded the run
  protocolRecorded?: { name: string; sha256: string }; // what ran, when the run was graded with other limits
  // The protocol that ran is not a built-in: the built-in it derives from and every setting it changes (#32 item 1b).
  protocolDerived?: ProtocolDerived;
  nodes: NodeRecord[];
  // Nodes shared with another cable under test at the same time (batch, one node in two pairs).
  sharedNodes: string[];
  // Qualified at once with the cable in the nodes' other cage (run --port both); absent for a run of one cable.
  together?: TogetherRecord;
  // A cable of a cluster: the cluster's check across every node, the result's sentence (it does not grade the cable).
  clusterCheck?: string;
  cable: {
    family: CableFamily; // as the EEPROM advertises it
    familyBasis: string | null; // the EEPROM bytes that said so
    lanesTrained: number | null;
    trainedMode: string | null; // how the link trained, e.g. "4 x 50G"

    vendor: string | null;
    partNumber: string | null;
    serial: string | null;
    ends: CableEndContent[];
    anomalies: string[]; // union over both ends, each prefixed with its node
    endsAgree: boolean | null; // both ends read and report the same vendor/PN/SN
    differentCages: CableEnd[] | null; // the ends in different cages (each node's cage), null when both use the same
  };
  phases: PhaseRecord[];
  benchmarks: BenchmarkRecord;
  perNodePhase: NodePhaseContent[];
  // Per receiver and lane: the worst sliding window held for holdS, and how the error rate followed the NIC temperature.
  worstWindows: WindowStats[];
  laneTemperature: LaneTempStats[];
  summary: {
    fecMarginDecades: number | null;
    maxLaneRatio: number | null;
    loadedVsIdleRatio: number | null;
    logRateVsTempSlope: number | null;
    preFecBerIdle: number | null; // worst receiver, the graded soak before the headline soak
    preFecBerLoaded: number | null;
    preFecBerLoadedUb95: number | null;
    crcErrors: number;
    postFecErrors: number;
    linkDownEvents: number;
    recoveries?: number; // all receivers and phases, where total_success_recovery_phy was read
    nicTempMaxC: number | null;
  };
  measurements: Measurement[];
  result: RunResult;
  sampling: SamplingStats;
  // The conditions the soaks measured (rules version 3 on): each direction's link load against its own ib_write_bw
  // figure, the GPU utilisation judged on each node, and counters cleared during the run.
  soakLoad?: SoakLoadRecord;
  counterResets?: NonNullable<RunRecord['counterResets']>;
  // Rules version 4 on: the graded counters the two PCIe functions of a cage counted differently (empty: they agreed).
  functionDivergence?: FunctionDivergence[];
}

// The summary figures of the certificate, the CSVs and compare, each the result's (src/rules/result.ts): over the
// graded soaks, the loaded one being the headline soak; the two ratios of the whole analysis as it states them.
export function summarise(record: RunRecord): CertificateContent['summary'] {
  const r = resultOfRecord(record);
  return {
    fecMarginDecades: r.fecMargin?.value ?? null,
    maxLaneRatio: r.laneRatio?.value ?? null,
    loadedVsIdleRatio: record.analysis?.loadedVsIdleRatio ?? null,
    logRateVsTempSlope: record.analysis?.logRateVsTempSlope ?? null,
    preFecBerIdle: r.idleSoak?.preFecBer ?? null,
    preFecBerLoaded: r.loadedSoak?.preFecBer ?? null,
    preFecBerLoadedUb95: r.loadedSoak?.preFecBerUb95 ?? null,
    crcErrors: r.crcErrors ?? 0,
    postFecErrors: r.postFecErrors ?? 0,
    linkDownEvents: r.linkDownEvents ?? 0,
    ...(r.recoveries !== null ? { recoveries: r.recoveries } : {}),
    nicTempMaxC: r.nicTempMaxC,
  };
}

// How the link trained, from ethtool's Lanes and Speed: "4 x 50G" (lanes x speed per lane), or the lanes alone.
export function trainedMode(lanes: number | null, speedMbps: number | null): string | null {
  if (lanes === null || lanes <= 0) return null;
  if (speedMbps === null) return `${lanes} lanes`;
  return `${lanes} x ${Math.round(speedMbps / lanes / 100) / 10}G`;
}

// Which document a run gets: a run report when it could not judge the cable, else a certificate or, for a set-up
// check, a set-up-check report (a record from before they were told apart has no kind: it got a certificate).
export function documentKind(record: Pick<RunRecord, 'outcome' | 'kind'>): DocumentKind {
  if (!CABLE_VERDICTS.includes(record.outcome)) return 'run-report';
  return record.kind === 'setup-check' ? 'setup-check' : 'certificate';
}

function endContent(end: RunRecord['cable']['ends'][number]): CableEndContent {
  const id = end.identity;
  const checksumProblems = Object.entries(end.checksums ?? {})
    .filter(([, c]) => !c.ok)
    .map(([name, c]) => `EEPROM checksum ${name} stored 0x${c.stored.toString(16)} computed 0x${c.computed.toString(16)}`);
  return {
    node: end.node,
    netdev: end.netdev,
    standard: id?.standard ?? null,
    identifier: id ? `0x${id.identifier.toString(16).padStart(2, '0')}${id.identifierText ? ` (${id.identifierText})` : ''}` : null,
    vendorName: id?.vendorName ?? null,
    vendorOui: id?.vendorOui ?? null,
    vendorPn: id?.vendorPn ?? null,
    vendorRev: id?.vendorRev ?? null,
    vendorSn: id?.vendorSn ?? null,
    dateCode: id?.dateCode ?? null,
    lengthM: id?.lengthM ?? null,
    attenuationDb: id?.attenuationDb ?? {},
    anomalies: [...(id?.anomalies ?? []), ...checksumProblems],
    error: end.error ?? null,
  };
}

// Build the certificate's content from the finished record; no I/O, no clock.
export function certificateContent(record: RunRecord, protocolDerived?: ProtocolDerived | null): CertificateContent {
  const kind = documentKind(record);
  const ends = record.cable.ends.map(endContent);
  const read = ends.filter((e) => e.vendorPn !== null);
  const endsAgree =
    read.length < 2 ? null : read.every((e) => e.vendorName === read[0]!.vendorName && e.vendorPn === read[0]!.vendorPn && e.vendorSn === read[0]!.vendorSn);
  return {
    schema: 'cablequal.certificate/1',
    kind,
    cablequalVersion: CABLEQUAL_VERSION,
    shortOfQualification: record.shortOfQualification ?? [],
    runId: record.runId,
    label: record.label,
    outcome: record.outcome,
    verdict: kind === 'run-report' ? null : (record.outcome as 'PASS' | 'MARGINAL' | 'FAIL'),
    rulesVersion: record.rules?.version ?? 1,
    headline: record.headline ?? null,
    reasons: record.reasons,
    decidedAtS: record.decidedAtS,
    simulated: record.simulated,
    scenario: record.scenario ?? null,
    startedAt: record.startedAt,
    endedAt: record.endedAt,
    protocol: { name: record.protocol.name, sha256: record.protocol.sha256 },
    ...(record.protocolRecorded ? { protocolRecorded: { name: record.protocolRecorded.name, sha256: record.protocolRecorded.sha256 } } : {}),
    ...(protocolDerived ? { protocolDerived } : {}),
    nodes: record.nodes,
    sharedNodes: record.sharedNodes ?? [],
    ...(record.together ? { together: record.together } : {}),
    ...(resultOfRecord(record).clusterCheck ? { clusterCheck: resultOfRecord(record).clusterCheck!.text } : {}),
    cable: {
      family: record.cable.family,
      familyBasis: record.cable.familyBasis ?? null,
      lanesTrained: record.cable.lanes,
      trainedMode: trainedMode(record.cable.lanes, record.cable.trainedSpeedMbps ?? null),
      vendor: record.cable.vendor,
      partNumber: record.cable.partNumber,
      serial: record.cable.serial,
      ends,
      anomalies: ends.flatMap((e) => e.anomalies.map((a) => `${e.node}: ${a}`)),
      endsAgree,
      differentCages: record.cable.differentCages ?? null,
    },
    phases: record.phases,
    benchmarks: record.benchmarks,
    perNodePhase: (record.analysis?.perNodePhase ?? []).map((p) => ({
      node: p.node,
      phase: p.phase,
      seconds: p.seconds,
      lanes: p.lanes,
      laneBer: p.laneStats.map((l) => ({ lane: l.lane, errors: l.errors, ratePerS: l.ratePerS, ber: l.ber, berUb95: l.berUb95 })),
      preFecBer: p.preFecBer,
      preFecBerUb95: p.preFecBerUb95,
      correctedBits: p.correctedBits,
      crcErrors: p.crcErrors,
      postFecErrors: p.postFecErrors,
      symbolErrors: p.symbolErrors,
      linkDownEvents: p.linkDownEvents,
      ...(p.recoveries !== undefined ? { recoveries: p.recoveries } : {}),
      counterResets: p.counterResets,
      worstLane: p.worstLane,
      worstLaneRatio: p.worstLaneRatio,
      laneRatioText: laneRatioText(p),
      nicTempMaxC: p.nicTempMaxC,
      nicTempMeanC: p.nicTempMeanC,
      gpuUtilMeanPct: p.gpuUtilMeanPct,
      gpuTempMaxC: p.gpuTempMaxC,
      ...(p.readings ? { readings: p.readings } : {}),
    })),
    worstWindows: record.analysis?.windows ?? [],
    laneTemperature: record.analysis?.laneTemp ?? [],
    summary: summarise(record),
    // Every figure under its one name (src/domain/result.ts); certificates before it carry summary alone.
    result: resultOfRecord(record),
    measurements: record.measurements,
    sampling: record.sampling,
    ...(record.soakLoad ? { soakLoad: record.soakLoad } : {}),
    ...(record.counterResets?.length ? { counterResets: record.counterResets } : {}),
    ...(record.analysis?.functionDivergence ? { functionDivergence: record.analysis.functionDivergence } : {}),
  };
}
