// JSON Schemas of the record's parts as src/domain declares them (record.ts, cable.ts, node.ts, outcome.ts): what is
// read back from a journal line, a record.json or a certificate is checked against them before it is used (a
// `vendorSn: 5` is refused at the boundary, never printed with a crash). Each follows its TypeScript type field for
// field; extra fields are allowed (later versions add some), absent optional fields too.
import { compileSchema, type JsonSchema } from '../io/json-schema.js';

export const str: JsonSchema = { type: 'string' };
export const num: JsonSchema = { type: 'number' };
// A count or index: whole and >= 0.
export const whole: JsonSchema = { type: 'integer', minimum: 0, title: 'a whole number' };
export const bool: JsonSchema = { type: 'boolean' };
// An ISO 8601 time as toISOString writes it (older journals: with an offset).
export const isoTime: JsonSchema = {
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})$',
  title: 'an ISO time',
};

// The same schema, or null.
export function orNull(s: JsonSchema): JsonSchema {
  if (typeof s['type'] === 'string') return { ...s, type: [s['type'], 'null'], ...(typeof s['title'] === 'string' ? { title: `${s['title']} or null` } : {}) };
  return { anyOf: [s, { type: 'null' }] };
}

export const arrayOf = (items: JsonSchema): JsonSchema => ({ type: 'array', items });
export const mapOf = (values: JsonSchema): JsonSchema => ({ type: 'object', additionalProperties: values });

// An object with these fields (`?` after a name: optional); other fields are allowed.
export function obj(fields: Record<string, JsonSchema>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [k, s] of Object.entries(fields)) {
    const optional = k.endsWith('?');
    const name = optional ? k.slice(0, -1) : k;
    properties[name] = s;
    if (!optional) required.push(name);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

export const OUTCOMES = ['PASS', 'MARGINAL', 'FAIL', 'ERROR', 'ABORTED'];
export const outcome: JsonSchema = { enum: OUTCOMES };
const grade: JsonSchema = { enum: ['PASS', 'MARGINAL', 'FAIL'] };

// outcome.ts Reason.
export const reason = obj({
  rule: str,
  message: str,
  'grade?': grade,
  'node?': str,
  'phase?': str,
  'lane?': num,
  'rail?': num,
  'value?': { type: ['number', 'string'] },
  'unit?': str,
  'limit?': str,
  'atS?': num,
  'advice?': str,
});

// node.ts Rail and Cage.
const rail = obj({ netdev: str, rdmaDevice: str, 'pci?': str });
const cage = obj({ index: whole, rails: { type: 'array', items: rail, minItems: 2, maxItems: 2 } });

// record.ts NodeRecord.
export const nodeRecord = obj({
  name: str,
  'host?': str,
  'cage?': orNull(cage),
  'kernel?': str,
  'osRelease?': str,
  'driver?': str,
  'firmware?': str,
  'ethtoolVersion?': str,
  'perftestVersion?': str,
  'gpuDriverVersion?': str,
  'cudaVersion?': str,
  'openMpiVersion?': str,
  'ncclVersion?': str,
  'ncclTestsVersion?': str,
  'lanes?': orNull(num),
  'speedMbps?': orNull(num),
  'fecActive?': orNull(str),
  'dmi?': obj({
    'sysVendor?': orNull(str),
    'productName?': orNull(str),
    'productVersion?': orNull(str),
    'boardName?': orNull(str),
    'biosVendor?': orNull(str),
    'biosVersion?': orNull(str),
    'biosDate?': orNull(str),
  }),
  'simulated?': bool,
});

// cable.ts CableIdentity and EepromChecksums; record.ts CableEndRecord.
export const cableIdentity = obj({
  standard: { enum: ['SFF-8636', 'CMIS'] },
  identifier: num,
  'identifierText?': str,
  vendorName: str,
  vendorOui: str,
  vendorPn: str,
  vendorRev: str,
  vendorSn: str,
  dateCode: str,
  lengthM: orNull(num),
  attenuationDb: mapOf(num),
  'transmitterTechnology?': str,
  anomalies: arrayOf(str),
});
const checksums = mapOf(obj({ stored: num, computed: num, ok: bool }));
export const cableEnd = obj({ 'node?': str, 'netdev?': str, 'identity?': orNull(cableIdentity), 'checksums?': checksums, 'error?': str });

// record.ts ThroughputStats with its rail, and BenchmarkRecord.
const railThroughput = obj({ rail: num, 'device?': str, 'minGbps?': num, 'medianGbps?': num, 'maxGbps?': num, 'samples?': num });
const ncclRank = obj({ node: str, network: orNull(str), devices: arrayOf(str) });
export const benchmarkRecord = obj({
  loopback: arrayOf(obj({ node: str, 'rail?': num, gbps: num })),
  ibWriteBw: orNull(
    obj({
      perRail: arrayOf(railThroughput),
      sumMedianGbps: num,
      'perDirection?': arrayOf(obj({ from: str, to: str, perRail: arrayOf(railThroughput), sumMedianGbps: num })),
    }),
  ),
  nccl: orNull(obj({ busbwGBs: orNull(num), maxBusbwGBs: orNull(num), network: orNull(str), devices: arrayOf(str), 'ranks?': arrayOf(ncclRank) })),
});

// record.ts PhaseRecord, SamplingStats, NodePhaseStats (the parts of the analysis a reader of record.json uses).
const phaseRecord = obj({
  name: str,
  kind: str,
  startS: num,
  endS: orNull(num),
  status: { enum: ['done', 'stopped-early', 'error', 'skipped', 'aborted'] },
  'note?': str,
});
const samplingStats = obj({
  ticks: whole,
  intervalP50Ms: orNull(num),
  intervalP99Ms: orNull(num),
  skewP99Ms: orNull(num),
  'rawSkewP99Ms?': orNull(num),
  gaps: arrayOf(obj({ node: str, fromS: num, toS: num, reason: str })),
});
const laneStats = obj({ node: str, phase: str, lane: num, errors: num, seconds: num, ratePerS: num, ber: num, berUb95: num, 'berLb95?': num });
const nodePhaseStats = obj({
  node: str,
  phase: str,
  seconds: num,
  lanes: num,
  laneStats: arrayOf(laneStats),
  correctedBits: num,
  preFecBer: num,
  preFecBerUb95: num,
  postFecErrors: num,
  crcErrors: num,
  symbolErrors: num,
  linkDownEvents: num,
  'recoveries?': num,
  counterResets: num,
  worstLane: orNull(num),
  worstLaneRatio: num,
  nicTempMaxC: orNull(num),
  nicTempMeanC: orNull(num),
  gpuUtilMeanPct: orNull(num),
  gpuTempMaxC: orNull(num),
});

// result.ts RunResult, as the outputs read it (a record.json edited to carry a string where a figure is, is refused).
const located = obj({ value: num, node: str, phase: str, lane: orNull(num) });
const runResult = obj({
  version: whole,
  kind: { enum: ['qualification', 'setup-check', 'preflight'] },
  role: { enum: ['cable', 'golden'] },
  outcome,
  judged: bool,
  qualifies: bool,
  gradedPhases: arrayOf(str),
  headlinePhase: orNull(str),
  fecMargin: orNull(located),
  headlineMargin: orNull(located),
  worstLaneBer: orNull(obj({ value: num, ber: num, node: str, phase: str, lane: orNull(num) })),
  laneRatio: orNull(obj({ value: num, text: str, node: str, phase: str, lane: orNull(num), againstZero: bool })),
  deciding: orNull(
    obj({
      rule: str,
      grade: { enum: ['PASS', 'MARGINAL', 'FAIL', null] },
      node: orNull(str),
      phase: orNull(str),
      lane: orNull(num),
      rail: orNull(num),
      value: { type: ['number', 'string', 'null'] },
      unit: orNull(str),
      limit: orNull(str),
      atS: orNull(num),
      message: str,
      advice: orNull(str),
    }),
  ),
  decidedAtS: orNull(num),
  crcErrors: orNull(num),
  postFecErrors: orNull(num),
  linkDownEvents: orNull(num),
  'recoveries?': orNull(num),
  nicTempMaxC: orNull(num),
  soaks: arrayOf(obj({ phase: str, seconds: num, preFecBer: orNull(num), preFecBerUb95: orNull(num) })),
  ibWriteBwGbps: orNull(num),
  ncclBusbwGBs: orNull(num),
  'clusterCheck?': obj({
    topology: str,
    nodes: arrayOf(str),
    busbwGBs: orNull(num),
    minBusbwGBs: num,
    met: orNull(bool),
    problem: orNull(str),
    text: str,
  }),
});

// record.ts RunRecord: what `compare`, `regress` and `db import` read from a record.json.
export const RUN_RECORD_SCHEMA = obj({
  schema: { const: 'cablequal.run/1' },
  runId: str,
  label: orNull(str),
  outcome,
  reasons: arrayOf(reason),
  decidedAtS: orNull(num),
  simulated: bool,
  'scenario?': orNull(str),
  startedAt: isoTime,
  endedAt: orNull(str),
  protocol: obj({ name: str, sha256: str, 'file?': str }),
  nodes: arrayOf(nodeRecord),
  cable: obj({
    family: str,
    'familyBasis?': str,
    lanes: orNull(num),
    'trainedSpeedMbps?': orNull(num),
    ends: arrayOf(cableEnd),
    serial: orNull(str),
    vendor: orNull(str),
    partNumber: orNull(str),
    'differentCages?': arrayOf(obj({ node: str, cage: whole })),
  }),
  phases: arrayOf(phaseRecord),
  benchmarks: benchmarkRecord,
  analysis: orNull(obj({ perNodePhase: arrayOf(nodePhaseStats), fecMarginDecades: orNull(num), maxLaneRatio: orNull(num) })),
  measurements: arrayOf({ type: 'object' }),
  'rules?': obj({ version: whole, notes: arrayOf(str) }),
  'headline?': orNull(obj({ phase: str, receivers: arrayOf({ type: 'object' }) })),
  sampling: samplingStats,
  journal: obj({ file: str, lines: num, bytes: num, 'badLines?': num, 'problems?': arrayOf(obj({ line: num, reason: str })) }),
  'sharedNodes?': arrayOf(str),
  'together?': obj({ cage: whole, with: arrayOf(obj({ cage: whole, runId: str, serial: orNull(str), 'link?': str })), 'topology?': str, 'link?': str }),
  'role?': { const: 'golden' },
  'clusterCheck?': obj({
    topology: str,
    collective: str,
    nodes: arrayOf(str),
    env: mapOf(str),
    command: str,
    busbwGBs: orNull(num),
    ranks: arrayOf(obj({ node: str, network: orNull(str), devices: arrayOf(str) })),
    problem: orNull(str),
  }),
  'result?': runResult,
});

// The first problem of a parsed record.json (path first), or null.
export const runRecordProblem = compileSchema(RUN_RECORD_SCHEMA);
