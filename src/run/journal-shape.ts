// The journal is untrusted on re-reading (edited, corrupted, written by something else): each line of a type the
// record is built from must have the fields the builder dereferences, with the right JSON types, before it is
// used. A line that does not is left out and reported with its number and the first field at fault, so that a
// record is still built from the rest (never a crash on `null.node`). Extra fields are allowed (forward compatible);
// types this reader does not know are passed through untouched.
import { nestingExceeds } from '../domain/json-depth.js';
import type { JournalContents, JournalLine } from './journal.js';

// A field's expected JSON shape.
type Shape =
  | 'string'
  | 'number' // finite
  | 'integer' // finite, whole, >= 0
  | 'boolean'
  | 'any'
  | { opt: Shape } // may be absent
  | { nullable: Shape } // may be null
  | { arrayOf: Shape }
  | { fields: Record<string, Shape> } // an object with at least these fields
  | { valuesOf: Shape }; // an object whose every value has this shape

const opt = (s: Shape): Shape => ({ opt: s });
const maybe = (s: Shape): Shape => ({ opt: { nullable: s } });
const fields = (f: Record<string, Shape>): Shape => ({ fields: f });
const arrayOf = (s: Shape): Shape => ({ arrayOf: s });

const describe = (v: unknown): string => (v === undefined ? 'nothing (missing)' : v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : typeof v === 'string' ? 'a string' : `${typeof v} ${String(v)}`.slice(0, 40));

// The first problem of `v` against `shape`, as "path: expected X, got Y"; null when it fits.
function problem(v: unknown, shape: Shape, path: string): string | null {
  if (typeof shape === 'string') {
    const ok =
      shape === 'any' ||
      (shape === 'string' && typeof v === 'string') ||
      (shape === 'boolean' && typeof v === 'boolean') ||
      (shape === 'number' && typeof v === 'number' && Number.isFinite(v)) ||
      (shape === 'integer' && typeof v === 'number' && Number.isSafeInteger(v) && v >= 0);
    return ok ? null : `${path}: expected ${shape === 'integer' ? 'a whole number' : `a ${shape}`}, got ${describe(v)}`;
  }
  if ('opt' in shape) return v === undefined ? null : problem(v, shape.opt, path);
  if ('nullable' in shape) return v === null ? null : problem(v, shape.nullable, path);
  if ('arrayOf' in shape) {
    if (!Array.isArray(v)) return `${path}: expected an array, got ${describe(v)}`;
    for (let i = 0; i < v.length; i++) {
      const p = problem(v[i], shape.arrayOf, `${path}[${i}]`);
      if (p) return p;
    }
    return null;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return `${path}: expected an object, got ${describe(v)}`;
  const o = v as Record<string, unknown>;
  if ('valuesOf' in shape) {
    for (const k of Object.keys(o)) {
      const p = problem(o[k], shape.valuesOf, `${path}.${k}`);
      if (p) return p;
    }
    return null;
  }
  for (const [k, s] of Object.entries(shape.fields)) {
    const p = problem(o[k], s, path ? `${path}.${k}` : k);
    if (p) return p;
  }
  return null;
}

// Counters are u64: a JSON number or a decimal string (above 2^53).
const counter: Shape = 'any';
const rail = fields({
  netdev: 'string',
  counters: opt({ valuesOf: counter }),
  countersFrom: opt('string'),
  linkUp: opt('boolean'),
  speedMbps: maybe('number'),
  lanes: maybe('number'),
  fec: maybe(fields({ active: opt('any') })),
});
const sample = fields({
  node: 'string',
  tick: 'integer',
  tMs: 'number',
  controllerMs: opt('number'),
  rails: arrayOf(rail),
  nicTempC: maybe('number'),
  gpus: opt(arrayOf(fields({ utilizationPct: maybe('number'), temperatureC: maybe('number'), powerW: maybe('number') }))),
  errors: opt(arrayOf('any')),
});
const reason = fields({ rule: 'string', message: 'string' });
const nodeRecord = fields({ name: 'string' });

const LINE_SHAPES: Record<string, Shape> = {
  // nodes: entries that are not node objects are dropped from the line and reported (see screenJournal); the rest
  // of a run-start is needed whole (no record without the run id and the protocol).
  'run-start': fields({ runId: 'string', startedAt: 'string', protocolText: 'string', nodes: arrayOf('any'), protocol: opt({ nullable: fields({}) }) }),
  'run-end': fields({ endedAt: opt('string') }),
  'phase-start': fields({ phase: 'string', kind: opt('string') }),
  'phase-end': fields({ phase: 'string', status: 'string' }),
  sample: fields({ phase: 'string', sample }),
  'setup-error': fields({ reason }),
  decision: fields({ tS: 'number', reason }),
  'node-info': fields({ record: nodeRecord }),
  identity: fields({ ends: arrayOf(fields({ node: opt('string'), identity: maybe(fields({})) })) }),
  sampling: fields({ stats: fields({ ticks: 'integer', gaps: opt(arrayOf(fields({}))) }) }),
  throughput: fields({ rails: opt(arrayOf(fields({ rail: 'number', gbps: arrayOf('number') }))), startS: opt('number') }),
};

// Benchmark lines differ by kind.
const BENCHMARK_SHAPES: Record<string, Shape> = {
  loopback: fields({ results: arrayOf(fields({ node: 'string', gbps: 'number' })) }),
  ib_write_bw: fields({ perRail: arrayOf(fields({ rail: 'number' })), sumMedianGbps: 'number', rows: opt(arrayOf(fields({ rail: 'number', gbps: arrayOf('number') }))) }),
  nccl: fields({ busbwGBs: maybe('number'), maxBusbwGBs: maybe('number'), network: maybe('string'), devices: arrayOf('string') }),
};

// Journal lines nest a few levels (an EEPROM identity inside an end inside a line): far deeper is not ours.
const MAX_LINE_DEPTH = 64;

// Why a parsed journal line cannot be used (its type's fields at fault), or null when it can.
export function journalLineProblem(line: { type: string } & Record<string, unknown>): string | null {
  // Sample lines are read field by field and never copied whole into the record: their depth is not walked (cost).
  if (line.type !== 'sample' && nestingExceeds(line, MAX_LINE_DEPTH)) return `${line.type}: nested deeper than ${MAX_LINE_DEPTH} levels`;
  const tS = problem(line.tS, opt('number'), 'tS');
  if (tS) return `${line.type}: ${tS}`;
  const shape = line.type === 'benchmark' ? BENCHMARK_SHAPES[String(line.kind)] : LINE_SHAPES[line.type];
  if (!shape) return null;
  const p = problem(line, shape, '');
  return p ? `${line.type}${line.type === 'benchmark' ? ` ${String(line.kind)}` : ''}: ${p}` : null;
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
      const bad = nodes.map((x, k) => [k, problem(x, nodeRecord, `nodes[${k}]`)] as const).filter(([, p]) => p !== null);
      if (bad.length) {
        problems.push({ line: n, reason: `run-start: ${bad.map(([, p]) => p).join('; ')} (left out of the line)` });
        l = { ...l, nodes: nodes.filter((_, k) => !bad.some(([b]) => b === k)) };
      }
    }
    lines.push(l);
    lineNos.push(n);
  });
  problems.sort((a, b) => a.line - b.line);
  return { ...contents, lines, lineNos, problems, badLines: problems.map((p) => p.line), screened: true };
}
