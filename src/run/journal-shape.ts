// The journal is untrusted on re-reading (edited, corrupted, written by something else): each line of a type the
// record is built from must have the fields the builder dereferences, with the right JSON types, before it is
// used. A line that does not is left out and reported with its number and the first field at fault, so that a
// record is still built from the rest (never a crash on `null.node`, or on a `vendorSn: 5` printed as text). Each
// line type read has a JSON Schema (ajv, compiled once: a 10 Hz journal has 85,000 sample lines); extra fields are
// allowed (forward compatible); types this reader does not know are passed through untouched.
import { nestingExceeds } from '../domain/json-depth.js';
import { compileSchema, problemOf, type JsonSchema, type SchemaCheck } from '../io/json-schema.js';
import { arrayOf, bool, cableEnd, isoTime, mapOf, nodeRecord, num, obj, orNull, reason, str, whole } from '../report/record-schema.js';
import type { JournalContents, JournalLine } from './journal.js';

// Counters are u64: a JSON number or a decimal string (above 2^53).
const counter: JsonSchema = { type: ['number', 'string'] };
const rail = obj({
  netdev: str,
  'counters?': mapOf(counter),
  'countersFrom?': str,
  'linkUp?': bool,
  'speedMbps?': orNull(num),
  'lanes?': orNull(num),
  'fec?': orNull({ type: 'object' }),
});
// Every sample line the sampler writes has all of these (NodeSample); the analysis reads each of them.
const gpu = obj({ utilizationPct: orNull(num), temperatureC: orNull(num), powerW: orNull(num) });
const sample = obj({
  node: str,
  tick: whole,
  tMs: num,
  controllerMs: num,
  rails: arrayOf(rail),
  nicTempC: orNull(num),
  gpus: arrayOf(gpu),
  errors: { type: 'array' },
});
const tS = { 'tS?': num };

// The journal line types the record is built from (journal.ts writes them), as JSON Schemas.
const LINE_SCHEMAS: Record<string, JsonSchema> = {
  // nodes: entries that are not node records are dropped from the line and reported (see screenJournal); the rest
  // of a run-start is needed whole (no record without the run id and the protocol).
  'run-start': obj({
    ...tS,
    runId: str,
    startedAt: isoTime,
    protocolText: str,
    nodes: { type: 'array' },
    'protocol?': orNull(obj({ 'file?': str, 'name?': str })),
    'rulesVersion?': whole,
    'journalFormat?': whole,
    'cablequalVersion?': str,
    'label?': orNull(str),
    'scenario?': orNull(str),
    'simulated?': bool,
    'sharedNodes?': arrayOf(str),
    'together?': obj({ cage: whole, with: arrayOf(obj({ cage: whole, runId: str, 'link?': str })), 'topology?': str, 'link?': str }),
  }),
  'run-end': obj({ ...tS, 'endedAt?': str }),
  'phase-start': obj({ ...tS, phase: str, 'kind?': str }),
  'phase-end': obj({ ...tS, phase: str, status: str }),
  sample: obj({ ...tS, phase: str, sample }),
  'setup-error': obj({ ...tS, reason }),
  decision: obj({ tS: num, reason }),
  aborted: obj({ ...tS, 'why?': str }),
  'node-info': obj({ ...tS, record: nodeRecord }),
  identity: obj({ ...tS, ends: arrayOf(cableEnd) }),
  sampling: obj({ ...tS, stats: obj({ ticks: whole, 'gaps?': arrayOf({ type: 'object' }) }) }),
  throughput: obj({ ...tS, 'rails?': arrayOf(obj({ rail: num, gbps: arrayOf(num) })), 'startS?': num }),
  // A cluster's check (src/run/steps/cluster-check.ts): the record reads its figures from the raw text.
  'cluster-check': obj({
    ...tS,
    topology: str,
    ranks: arrayOf(obj({ node: str, host: str, devices: arrayOf(str) })),
    env: mapOf(str),
    command: str,
    exitCode: orNull(num),
    stdout: str,
    stderr: str,
    'stopped?': str,
  }),
  // What the PHY said at a link drop (src/run/link-snapshots.ts): the record re-reads the raw `ethtool <if>` text.
  'link-snapshot': obj({ ...tS, node: str, netdev: str, snapshot: obj({ atS: num, link: obj({ raw: str, 'stderr?': str }) }) }),
};

// Benchmark lines differ by kind.
const BENCHMARK_SCHEMAS: Record<string, JsonSchema> = {
  loopback: obj({ ...tS, results: arrayOf(obj({ node: str, 'rail?': num, gbps: num })) }),
  ib_write_bw: obj({
    ...tS,
    perRail: arrayOf(obj({ rail: num })),
    sumMedianGbps: num,
    'perDirection?': { type: 'array' },
    'rows?': arrayOf(obj({ rail: num, gbps: arrayOf(num) })),
  }),
  nccl: obj({ ...tS, busbwGBs: orNull(num), 'maxBusbwGBs?': orNull(num), 'network?': orNull(str), devices: arrayOf(str), 'ranks?': { type: 'array' } }),
};

const compileAll = (src: Record<string, JsonSchema>) =>
  Object.fromEntries(Object.entries(src).map(([k, v]) => [k, compileSchema(v)])) as Record<string, SchemaCheck>;
const LINE_CHECKS = compileAll(LINE_SCHEMAS);
const BENCHMARK_CHECKS = compileAll(BENCHMARK_SCHEMAS);
const checkTS = compileSchema(obj(tS));
const checkNodeRecord = compileSchema(nodeRecord);

// Journal lines nest a few levels (an EEPROM identity inside an end inside a line): far deeper is not ours.
const MAX_LINE_DEPTH = 64;

// Why a parsed journal line cannot be used (its type's fields at fault), or null when it can.
export function journalLineProblem(line: { type: string } & Record<string, unknown>): string | null {
  // Sample lines are read field by field and never copied whole into the record: their depth is not walked (cost).
  if (line.type !== 'sample' && nestingExceeds(line, MAX_LINE_DEPTH)) return `${line.type}: nested deeper than ${MAX_LINE_DEPTH} levels`;
  const t = checkTS(line);
  if (t) return problemOf(line.type, t);
  const check = line.type === 'benchmark' ? BENCHMARK_CHECKS[String(line.kind)] : LINE_CHECKS[line.type];
  const p = check?.(line);
  return p ? problemOf(`${line.type}${line.type === 'benchmark' ? ` ${String(line.kind)}` : ''}`, p) : null;
}

// The journal's lines with the unusable ones left out and reported (badLines, problems, in file order); a journal
// screened once is returned as it is.
export function screenJournal(contents: JournalContents): JournalContents {
  if (contents.screened) return contents;
  const lines: JournalLine[] = [];
  const lineNos: number[] = [];
  const problems = [...(contents.problems ?? contents.badLines.map((line) => ({ line, reason: 'not JSON' })))];
  contents.lines.forEach((l, i) => {
    const n = contents.lineNos?.[i] ?? i + 1;
    const why = journalLineProblem(l);
    if (why) return void problems.push({ line: n, reason: why });
    if (l.type === 'run-start') {
      // A bad node entry is left out of the line (reported); the run's id and protocol are still worth a record.
      const nodes = l.nodes as unknown[];
      const bad = nodes.map((x, k) => [k, checkNodeRecord(x)] as const).filter(([, p]) => p !== null);
      if (bad.length) {
        problems.push({ line: n, reason: `run-start: ${bad.map(([k, p]) => `nodes[${k}]${p!}`).join('; ')} (left out of the line)` });
        l = { ...l, nodes: nodes.filter((_, k) => !bad.some(([b]) => b === k)) };
      }
    }
    lines.push(l);
    lineNos.push(n);
  });
  problems.sort((a, b) => a.line - b.line);
  return { ...contents, lines, lineNos, problems, badLines: problems.map((p) => p.line), screened: true };
}

// How messages name the protocol text a run-start line carries: the journal line it is on (a problem there is the
// journal's, never the file on disk it was read from when the run started), with that file for reference.
export function recordedProtocolLabel(contents: JournalContents, start: JournalLine, journalFile: string): string {
  const i = contents.lines.indexOf(start);
  const line = contents.lineNos?.[i] ?? i + 1;
  const file = (start['protocol'] as { file?: unknown } | null | undefined)?.file;
  return `${journalFile} line ${line} (the protocol the run recorded${typeof file === 'string' ? `, read from ${file} when it started` : ''})`;
}
