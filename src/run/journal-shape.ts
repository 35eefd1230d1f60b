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
  | 'date' // a string Date.parse reads (an ISO time)
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

const describe = (v: unknown): string =>
  v === undefined
    ? 'nothing (missing)'
    : v === null
      ? 'null'
      : Array.isArray(v)
        ? 'an array'
        : typeof v === 'object'
          ? 'an object'
          : typeof v === 'string'
            ? 'a string'
            : `${typeof v} ${String(v)}`.slice(0, 40);

// A compiled shape: the first problem of a value, or null when it fits. The problem starts with the path below the
// value (".rails[0].netdev: expected a string, got null"; ": expected ..." for the value itself), built only on
// failure. Shapes are compiled once into closures: a 10 Hz journal has 85,000 sample lines, and the check must cost
// little beside JSON.parse.
type Check = (v: unknown) => string | null;

// Prefix a child's problem with the key or index it was found under.
const under = (key: string, p: string) => (p.startsWith(':') || p.startsWith('[') ? `${key}${p}` : `${key}.${p}`);

const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);

// The leaf shapes: what they are called in a message, and the test.
const LEAVES: Record<Extract<Shape, string>, [string, (v: unknown) => boolean]> = {
  string: ['a string', (v) => typeof v === 'string'],
  number: ['a number', (v) => typeof v === 'number' && Number.isFinite(v)],
  integer: ['a whole number', (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0],
  boolean: ['a boolean', (v) => typeof v === 'boolean'],
  date: ['an ISO time', (v) => typeof v === 'string' && Number.isFinite(Date.parse(v))],
  any: ['anything', () => true],
};

function compile(shape: Shape): Check {
  if (typeof shape === 'string') {
    const [what, ok] = LEAVES[shape];
    return (v) => (ok(v) ? null : `: expected ${what}, got ${describe(v)}`);
  }
  if ('opt' in shape) {
    const inner = compile(shape.opt);
    return (v) => (v === undefined ? null : inner(v));
  }
  if ('nullable' in shape) {
    const inner = compile(shape.nullable);
    return (v) => (v === null ? null : inner(v));
  }
  if ('arrayOf' in shape) {
    const item = compile(shape.arrayOf);
    return (v) => {
      if (!Array.isArray(v)) return `: expected an array, got ${describe(v)}`;
      for (let i = 0; i < v.length; i++) {
        const p = item(v[i]);
        if (p) return under(`[${i}]`, p);
      }
      return null;
    };
  }
  if ('valuesOf' in shape) {
    const anyValue = shape.valuesOf === 'any';
    const value = compile(shape.valuesOf);
    return (v) => {
      if (!isObject(v)) return `: expected an object, got ${describe(v)}`;
      if (anyValue) return null;
      const o = v as Record<string, unknown>;
      for (const k in o) {
        const p = value(o[k]);
        if (p) return under(k, p);
      }
      return null;
    };
  }
  const fields = Object.entries(shape.fields).map(([k, s]) => [k, compile(s)] as const);
  return (v) => {
    if (!isObject(v)) return `: expected an object, got ${describe(v)}`;
    const o = v as Record<string, unknown>;
    for (const [k, check] of fields) {
      const p = check(o[k]);
      if (p) return under(k, p);
    }
    return null;
  };
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
// Every sample line the sampler writes has all of these (NodeSample); the analysis reads each of them.
const gpu = fields({ utilizationPct: { nullable: 'number' }, temperatureC: { nullable: 'number' }, powerW: { nullable: 'number' } });
const sample = fields({
  node: 'string',
  tick: 'integer',
  tMs: 'number',
  controllerMs: 'number',
  rails: arrayOf(rail),
  nicTempC: { nullable: 'number' },
  gpus: arrayOf(gpu),
  errors: arrayOf('any'),
});
const reason = fields({ rule: 'string', message: 'string' });
const nodeRecord = fields({ name: 'string' });

const LINE_SHAPES_SRC: Record<string, Shape> = {
  // nodes: entries that are not node objects are dropped from the line and reported (see screenJournal); the rest
  // of a run-start is needed whole (no record without the run id and the protocol).
  'run-start': fields({ runId: 'string', startedAt: 'date', protocolText: 'string', nodes: arrayOf('any'), protocol: opt({ nullable: fields({}) }) }),
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
const BENCHMARK_SHAPES_SRC: Record<string, Shape> = {
  loopback: fields({ results: arrayOf(fields({ node: 'string', gbps: 'number' })) }),
  ib_write_bw: fields({
    perRail: arrayOf(fields({ rail: 'number' })),
    sumMedianGbps: 'number',
    rows: opt(arrayOf(fields({ rail: 'number', gbps: arrayOf('number') }))),
  }),
  nccl: fields({ busbwGBs: maybe('number'), maxBusbwGBs: maybe('number'), network: maybe('string'), devices: arrayOf('string') }),
};

const compileAll = (src: Record<string, Shape>) => Object.fromEntries(Object.entries(src).map(([k, v]) => [k, compile(v)])) as Record<string, Check>;
const LINE_SHAPES = compileAll(LINE_SHAPES_SRC);
const BENCHMARK_SHAPES = compileAll(BENCHMARK_SHAPES_SRC);
const checkTS = compile(opt('number'));
const checkNodeRecord = compile(nodeRecord);

// Journal lines nest a few levels (an EEPROM identity inside an end inside a line): far deeper is not ours.
const MAX_LINE_DEPTH = 64;

// Why a parsed journal line cannot be used (its type's fields at fault), or null when it can.
export function journalLineProblem(line: { type: string } & Record<string, unknown>): string | null {
  // Sample lines are read field by field and never copied whole into the record: their depth is not walked (cost).
  if (line.type !== 'sample' && nestingExceeds(line, MAX_LINE_DEPTH)) return `${line.type}: nested deeper than ${MAX_LINE_DEPTH} levels`;
  const tS = checkTS(line.tS);
  if (tS) return `${line.type}: tS${tS}`;
  const shape = line.type === 'benchmark' ? BENCHMARK_SHAPES[String(line.kind)] : LINE_SHAPES[line.type];
  if (!shape) return null;
  const p = shape(line);
  return p ? `${line.type}${line.type === 'benchmark' ? ` ${String(line.kind)}` : ''}: ${p.replace(/^[.:]\s*/, '')}` : null;
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
        problems.push({ line: n, reason: `run-start: ${bad.map(([k, p]) => under(`nodes[${k}]`, p!)).join('; ')} (left out of the line)` });
        l = { ...l, nodes: nodes.filter((_, k) => !bad.some(([b]) => b === k)) };
      }
    }
    lines.push(l);
    lineNos.push(n);
  });
  problems.sort((a, b) => a.line - b.line);
  return { ...contents, lines, lineNos, problems, badLines: problems.map((p) => p.line), screened: true };
}
