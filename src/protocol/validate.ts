// Hand-written validation of a protocol file: each problem becomes one line naming file, JSON path and what was expected.
import { UsageError } from '../domain/errors.js';
import type { Limit } from '../domain/limit.js';
import { LIMIT_KEYS, RULES, defaultLimit, type RuleDeclaration } from '../rules/registry.js';
import {
  COMMAND_PLACEHOLDERS,
  GPU_LOAD_PLACEHOLDERS,
  PHASE_KINDS,
  type EarlyStopConfig,
  type GpuLoad,
  type Phase,
  type PhaseKind,
  type ProtocolCommands,
  type RegressionTolerances,
  type TemplateCommand,
} from './types.js';
import { GPU_BURN_KERNEL, gpuBurnKernel } from './gpu-load.js';

type Json = unknown;
type Obj = Record<string, Json>;

// Keys the loader requires at the top level (the published JSON Schema must require exactly these).
export const REQUIRED_TOP_KEYS = ['name', 'description', 'phases', 'commands', 'limits', 'earlyStop', 'regression'] as const;
export const OPTIONAL_TOP_KEYS = ['$schema', 'samplingIntervalS', 'maxSampleGapS'] as const;

// Which side of each rule is good (from the registry): a limit file cannot turn "max CRC errors" into a minimum.
export const RULE_DIRECTION: Readonly<Record<string, 'min' | 'max'>> = Object.fromEntries(RULES.map((r) => [r.id, r.direction]));

// How strictly to read a protocol: a file for a new run is refused for an unknown rule or setting (a typo must not
// pass silently); the protocol a journal embeds is read leniently (a rule this version no longer knows is noted and
// ignored), so every journal a lab holds keeps grading.
export interface ValidateOptions {
  lenient?: boolean;
  rules?: readonly RuleDeclaration[]; // the rules to check limits against (default: the registry; tests add one)
}

// Keys each phase kind accepts (required ones first); the schema mirrors this table.
export const PHASE_KEYS: Record<PhaseKind, { required: readonly string[]; optional: readonly string[] }> = {
  preflight: { required: ['name', 'kind'], optional: ['durationS'] },
  identity: { required: ['name', 'kind'], optional: ['durationS'] },
  loopback: { required: ['name', 'kind', 'durationS'], optional: ['msgSize', 'floorGbps'] },
  ib_write_bw: { required: ['name', 'kind', 'durationS'], optional: ['msgSize', 'bidirectional'] },
  nccl: { required: ['name', 'kind'], optional: ['durationS'] },
  soak: { required: ['name', 'kind', 'durationS', 'gpuLoad'], optional: ['linkLoad', 'msgSize', 'bidirectional', 'gpuUtilMinPct'] },
};

const DEFAULT_MSG_SIZE = 65536;
// The node-loss tolerance a protocol gets when it names none (what runs used before it was protocol data).
export const DEFAULT_MAX_SAMPLE_GAP_S = 60;

function describe(v: Json): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

class Checker {
  constructor(readonly file: string) {}

  fail(path: string, expected: string, got?: Json, hasGot = true): never {
    // A key may hold a newline or other control character: escape it so the message stays one line.
    const shown = /[\u0000-\u001f\u007f]/.test(path) ? JSON.stringify(path).slice(1, -1) : path;
    throw new UsageError(`${this.file}: ${shown}: expected ${expected}${hasGot ? `, got ${describe(got)}` : ''}`);
  }

  object(v: Json, path: string): Obj {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(path, 'an object', v);
    return v as Obj;
  }

  keys(o: Obj, path: string, required: readonly string[], optional: readonly string[]): void {
    for (const k of required) if (!(k in o)) this.fail(join(path, k), 'a value (required key)', undefined, false);
    const known = new Set([...required, ...optional]);
    for (const k of Object.keys(o)) {
      if (!known.has(k)) this.fail(join(path, k), `no such key (known: ${[...known].join(', ')})`, undefined, false);
    }
  }

  string(v: Json, path: string): string {
    if (typeof v !== 'string' || v.trim() === '') this.fail(path, 'a non-empty string', v);
    return v;
  }

  name(v: Json, path: string): string {
    const s = this.string(v, path);
    if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(s)) this.fail(path, 'a name of lowercase letters, digits and dashes', v);
    return s;
  }

  positive(v: Json, path: string): number {
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) this.fail(path, 'a positive number', v);
    return v;
  }

  positiveInt(v: Json, path: string): number {
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) this.fail(path, 'a positive integer', v);
    return v;
  }

  nonNegative(v: Json, path: string): number {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) this.fail(path, 'a number >= 0', v);
    return v;
  }

  finite(v: Json, path: string): number {
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(path, 'a number', v);
    return v;
  }

  boolean(v: Json, path: string): boolean {
    if (typeof v !== 'boolean') this.fail(path, 'true or false', v);
    return v;
  }
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function phase(c: Checker, v: Json, path: string, limits: Limit[]): Phase {
  const o = c.object(v, path);
  const kind = o['kind'];
  if (typeof kind !== 'string' || !(PHASE_KINDS as readonly string[]).includes(kind)) {
    c.fail(join(path, 'kind'), `one of ${PHASE_KINDS.join(', ')}`, kind);
  }
  const k = kind as PhaseKind;
  c.keys(o, path, PHASE_KEYS[k].required, PHASE_KEYS[k].optional);
  const name = c.name(o['name'], join(path, 'name'));
  const opt = (key: string, f: (v: Json, p: string) => number): number | undefined =>
    o[key] === undefined ? undefined : f(o[key], join(path, key));
  const msgSize = opt('msgSize', (x, p) => c.positiveInt(x, p)) ?? DEFAULT_MSG_SIZE;
  const bidi = o['bidirectional'] === undefined ? true : c.boolean(o['bidirectional'], join(path, 'bidirectional'));
  const limitFail = (rule: string) => limits.find((l) => l.rule === rule)?.fail;
  switch (k) {
    case 'preflight':
    case 'identity':
    case 'nccl': {
      const durationS = opt('durationS', (x, p) => c.positive(x, p));
      return durationS === undefined ? { name, kind: k } : { name, kind: k, durationS };
    }
    case 'loopback':
      return {
        name,
        kind: k,
        durationS: c.positive(o['durationS'], join(path, 'durationS')),
        msgSize,
        floorGbps: opt('floorGbps', (x, p) => c.positive(x, p)) ?? limitFail('loopback-floor') ?? 0,
      };
    case 'ib_write_bw':
      return { name, kind: k, durationS: c.positive(o['durationS'], join(path, 'durationS')), msgSize, bidirectional: bidi };
    case 'soak': {
      const gpuLoad = c.boolean(o['gpuLoad'], join(path, 'gpuLoad'));
      const linkLoad = o['linkLoad'] === undefined ? true : c.boolean(o['linkLoad'], join(path, 'linkLoad'));
      const pct = opt('gpuUtilMinPct', (x, p) => {
        const n = c.positive(x, p);
        return n > 100 ? c.fail(p, 'a percentage in (0, 100]', x) : n;
      });
      const p: Phase = { name, kind: k, durationS: c.positive(o['durationS'], join(path, 'durationS')), gpuLoad, linkLoad, msgSize, bidirectional: bidi };
      const min = pct ?? (gpuLoad ? limitFail('gpu-util-min') : undefined);
      if (min !== undefined) p.gpuUtilMinPct = min;
      return p;
    }
  }
}

// One limit entry, checked against its rule's declaration: direction and unit as declared (the file may leave them
// out), marginal on the good side of fail, each setting a number in its declared range. Null: skipped (lenient, noted).
function limit(c: Checker, v: Json, path: string, notes: string[], lenient: boolean, rules: readonly RuleDeclaration[]): Limit | null {
  const o = c.object(v, path);
  const rule = o['rule'];
  const decl = typeof rule === 'string' ? rules.find((r) => r.id === rule) : undefined;
  if (!decl) {
    if (lenient && typeof rule === 'string') {
      notes.push(`${path}: rule "${rule}" is not known to this version of the rules: ignored`);
      return null;
    }
    c.fail(join(path, 'rule'), `one of ${rules.map((r) => r.id).join(', ')}`, rule);
  }
  const paramKeys = Object.keys(decl.params);
  for (const k of LIMIT_KEYS.required) if (!(k in o)) c.fail(join(path, k), 'a value (required key)', undefined, false);
  const known = new Set<string>([...LIMIT_KEYS.required, ...LIMIT_KEYS.optional, ...paramKeys]);
  for (const k of Object.keys(o)) {
    if (known.has(k)) continue;
    if (lenient) notes.push(`${join(path, k)}: not a setting of ${decl.id} in this version of the rules: ignored`);
    else c.fail(join(path, k), `no such key (known for ${decl.id}: ${[...known].join(', ')})`, undefined, false);
  }
  const declared = (key: 'direction' | 'unit', want: string) => {
    if (o[key] === undefined || o[key] === want) return;
    if (lenient) notes.push(`${join(path, key)}: ${JSON.stringify(o[key])} read as "${want}", as ${decl.id} declares`);
    else c.fail(join(path, key), `"${want}" for ${decl.id}`, o[key]);
  };
  declared('direction', decl.direction);
  declared('unit', decl.unit);
  const dir = decl.direction;
  const fail = c.finite(o['fail'], join(path, 'fail'));
  const out: Limit = { rule: decl.id, direction: dir, fail, unit: decl.unit };
  if (o['marginal'] !== undefined) {
    const m = c.finite(o['marginal'], join(path, 'marginal'));
    // The marginal band sits on the good side of the fail threshold.
    if (dir === 'max' && !(m < fail)) c.fail(join(path, 'marginal'), `a number below fail (${fail}) for a max limit`, m);
    if (dir === 'min' && !(m > fail)) c.fail(join(path, 'marginal'), `a number above fail (${fail}) for a min limit`, m);
    out.marginal = m;
  }
  if (o['description'] !== undefined) out.description = c.string(o['description'], join(path, 'description'));
  const params: Record<string, number> = {};
  for (const [k, p] of Object.entries(decl.params)) {
    const x = o[k];
    if (x === undefined) {
      params[k] = p.default;
      continue;
    }
    const ok = typeof x === 'number' && Number.isFinite(x) && (p.minExclusive ? x > p.min : x >= p.min);
    if (!ok) c.fail(join(path, k), `a number ${p.minExclusive ? '>' : '>='} ${p.min} (${p.unit}: ${p.doc})`, x);
    params[k] = x as number;
  }
  if (paramKeys.length) out.params = params;
  return out;
}

// The limits: each known rule at most once; a rule the file leaves out gets its declared default (an older protocol
// without a newer rule), noted so the record says which limits the file did not set.
function limits(c: Checker, v: Json, notes: string[], lenient: boolean, rules: readonly RuleDeclaration[]): Limit[] {
  if (!Array.isArray(v)) c.fail('limits', 'an array', v);
  const out: Limit[] = [];
  (v as Json[]).forEach((x, i) => {
    const l = limit(c, x, `limits[${i}]`, notes, lenient, rules);
    if (!l) return;
    if (out.some((y) => y.rule === l.rule)) {
      if (lenient) notes.push(`limits[${i}]: a second limit for ${l.rule}: ignored, the first one applies`);
      else c.fail('limits', `exactly one limit with rule "${l.rule}"`, `${(v as Json[]).filter((y) => (y as Obj)?.['rule'] === l.rule).length}`);
      return;
    }
    out.push(l);
  });
  for (const r of rules) {
    if (out.some((l) => l.rule === r.id)) continue;
    const d = defaultLimit(r);
    out.push(Object.keys(d.params).length ? d : { rule: d.rule, direction: d.direction, fail: d.fail, ...(d.marginal !== undefined ? { marginal: d.marginal } : {}), unit: d.unit });
    notes.push(`limits: no limit for ${r.id} (added in rules version ${r.since}): its default applies`);
  }
  return out;
}

// earlyStop: keepSamplingS; a version 1 `laneRatioConsecutiveTicks` becomes the lane-ratio rule's holdS in seconds
// (ticks x samplingIntervalS) unless the lane-ratio limit sets holdS itself.
function earlyStop(c: Checker, v: Json, limitsOut: Limit[], limitsJson: Json, intervalS: number, notes: string[]): EarlyStopConfig {
  const es = c.object(v, 'earlyStop');
  c.keys(es, 'earlyStop', ['keepSamplingS'], ['laneRatioConsecutiveTicks']);
  const out: EarlyStopConfig = { keepSamplingS: c.nonNegative(es['keepSamplingS'], 'earlyStop.keepSamplingS') };
  if (es['laneRatioConsecutiveTicks'] !== undefined) {
    const ticks = c.positiveInt(es['laneRatioConsecutiveTicks'], 'earlyStop.laneRatioConsecutiveTicks');
    const lr = limitsOut.find((l) => l.rule === 'lane-ratio');
    const setInFile = Array.isArray(limitsJson) && limitsJson.some((l) => (l as Obj)?.['rule'] === 'lane-ratio' && (l as Obj)['holdS'] !== undefined);
    if (lr?.params && !setInFile) {
      const holdS = ticks * intervalS;
      lr.params = { ...lr.params, holdS };
      notes.push(`earlyStop.laneRatioConsecutiveTicks: ${ticks} ticks of ${intervalS} s read as the lane-ratio holdS ${holdS} s (persistence is in seconds since rules version 2)`);
    } else {
      notes.push('earlyStop.laneRatioConsecutiveTicks: ignored, the lane-ratio limit sets holdS');
    }
  }
  return out;
}

// A tolerance under two intervals would call a node lost for one late tick. Left out, it is the default stretched to
// two intervals rather than refused: journals from before the field existed keep their protocol text and must re-grade.
function sampleGap(c: Checker, v: Json, intervalS: number): number {
  const min = 2 * intervalS;
  if (v === undefined) return Math.max(DEFAULT_MAX_SAMPLE_GAP_S, min);
  const n = c.positive(v, 'maxSampleGapS');
  if (n < min) c.fail('maxSampleGapS', `a number of seconds >= 2 x samplingIntervalS (${min})`, n);
  return n;
}

// A program name on the PATH or an absolute path: no spaces, quotes or shell syntax.
const PROGRAM = /^(?:\/[A-Za-z0-9_.+@-]+(?:\/[A-Za-z0-9_.+@-]+)*|[A-Za-z0-9_.+@-]+)$/;
// An absolute path as the harness checks and uses it on a node (cwd, requires).
const ABS_PATH = /^\/[A-Za-z0-9_.+@,=-]*(?:\/[A-Za-z0-9_.+@,=-]+)*\/?$/;
// An argument is one line of printable text; it is quoted on its own when the command is built.
const ARG_MAX = 4096;

function template(c: Checker, v: Json, path: string, allowed: readonly string[]): string {
  const t = c.string(v, path);
  for (const m of t.matchAll(/\{([^}]*)\}/g)) {
    if (!allowed.includes(m[1] ?? '')) c.fail(path, `placeholders among {${allowed.join('}, {')}}`, `{${m[1]}}`);
  }
  if (/[;&|`$<>\u0000-\u001f\u007f]/.test(t.replace(/\{[^}]*\}/g, ''))) c.fail(path, 'a plain command line without shell operators', t);
  return t;
}

function argument(c: Checker, v: Json, path: string, placeholders: readonly string[]): string {
  if (typeof v !== 'string' || v.length > ARG_MAX) c.fail(path, `a string of at most ${ARG_MAX} characters`, v);
  if (/[\u0000-\u001f\u007f]/.test(v)) c.fail(path, 'one line without control characters (a load is started as one command line)', v);
  const rest = v.replace(/\{([^}]*)\}/g, (m, k: string) => (placeholders.includes(k) ? '' : c.fail(path, placeholders.length ? `placeholders among {${placeholders.join('}, {')}}` : 'no placeholders', m)));
  if (/[{}]/.test(rest)) c.fail(path, '"{" and "}" only around a placeholder', v);
  return v;
}

function stringArray(c: Checker, v: Json, path: string, each: (x: Json, p: string) => string): string[] {
  if (!Array.isArray(v)) c.fail(path, 'an array of strings', v);
  return v.map((x, i) => each(x, `${path}[${i}]`));
}

// gpu_burn reads its run length from the first argument after its options and treats ANY argument containing "-h",
// "-l" or "-d" as help, list or doubles (a substring test, gpu_burn-drv.cpp main()): refuse what would not load the GPUs.
function checkGpuBurnArgs(c: Checker, g: { args: string[]; cwd?: string }, path: string): void {
  const last = g.args[g.args.length - 1];
  if (last !== '{durationS}') c.fail(`${path}.args`, 'gpu_burn\'s run length "{durationS}" as the last argument (gpu_burn reads it after its options)', last);
  g.args.forEach((a, i) => {
    for (const [flag, what] of [['-h', 'prints its help'], ['-l', 'lists the GPUs'], ['-d', 'switches to doubles']] as const) {
      if (a.includes(flag) && a !== flag) c.fail(`${path}.args[${i}]`, `no "${flag}" inside an argument (gpu_burn ${what} when any argument contains it)`, a);
      if (a === flag && flag !== '-d') c.fail(`${path}.args[${i}]`, `not "${flag}" (gpu_burn ${what} and exits without loading the GPUs)`, a);
    }
  });
  const kernel = gpuBurnKernel(g.args);
  if (!kernel.startsWith('/') && g.cwd === undefined) {
    c.fail(`${path}.args`, `-c <absolute path of ${GPU_BURN_KERNEL}> or a "cwd" holding it (gpu_burn looks for its compare kernel "${kernel}" in its working directory, and the run's scratch directory never has it)`, g.args);
  }
}

function gpuLoad(c: Checker, v: Json): GpuLoad {
  const path = 'commands.gpuLoad';
  // The form of protocols written before the program form: still loads, so that their journals re-grade.
  if (typeof v === 'string') return { form: 'line', line: template(c, v, path, GPU_LOAD_PLACEHOLDERS) };
  const o = c.object(v, path);
  c.keys(o, path, ['program', 'args'], ['cwd', 'requires', 'check']);
  const program = c.string(o['program'], `${path}.program`);
  if (!PROGRAM.test(program) || program.includes('..')) c.fail(`${path}.program`, 'a program name or an absolute path (letters, digits, _ . + @ - and /)', program);
  const args = stringArray(c, o['args'], `${path}.args`, (x, p) => argument(c, x, p, GPU_LOAD_PLACEHOLDERS));
  const absPath = (x: Json, p: string) => {
    const s = c.string(x, p);
    if (!ABS_PATH.test(s) || s.includes('..')) c.fail(p, 'an absolute path (letters, digits, _ . + @ , = - and /)', s);
    return s;
  };
  const g: GpuLoad = { form: 'program', program, args, requires: o['requires'] === undefined ? [] : stringArray(c, o['requires'], `${path}.requires`, absPath) };
  if (o['cwd'] !== undefined) g.cwd = absPath(o['cwd'], `${path}.cwd`);
  if (o['check'] !== undefined) {
    const check = stringArray(c, o['check'], `${path}.check`, (x, p) => argument(c, x, p, []));
    if (check.length === 0 || !PROGRAM.test(check[0]!) || check[0]!.includes('..')) c.fail(`${path}.check[0]`, 'a program name or an absolute path', check[0]);
    g.check = check;
  }
  if (program.split('/').pop() === 'gpu_burn') checkGpuBurnArgs(c, g, path);
  return g;
}

function commands(c: Checker, v: Json): ProtocolCommands {
  const o = c.object(v, 'commands');
  const names = Object.keys(COMMAND_PLACEHOLDERS) as TemplateCommand[];
  c.keys(o, 'commands', [...names.filter((n) => n !== 'ncclRank'), 'gpuLoad'], ['ncclRank']);
  const out = { gpuLoad: gpuLoad(c, o['gpuLoad']) } as ProtocolCommands;
  for (const n of names) if (o[n] !== undefined) out[n] = template(c, o[n], `commands.${n}`, COMMAND_PLACEHOLDERS[n]);
  // The per-node form: nccl holds {ranks} exactly once and ncclRank says what one node's app context is.
  const ranks = (out.nccl.match(/\{ranks\}/g) ?? []).length;
  if (out.ncclRank !== undefined && ranks !== 1) c.fail('commands.nccl', 'exactly one {ranks} (where the per-node app contexts of commands.ncclRank go)', out.nccl);
  if (out.ncclRank === undefined && ranks > 0) c.fail('commands.ncclRank', 'a value (required key when commands.nccl uses {ranks})', undefined, false);
  if (out.ncclRank !== undefined && /\{(?:ipA|ipB|netdevA|hcaList)\}/.test(out.nccl)) c.fail('commands.nccl', 'no {ipA}, {ipB}, {netdevA} or {hcaList} beside {ranks} (each node\'s names go in commands.ncclRank)', out.nccl);
  return out;
}

// Validate parsed JSON into a Protocol body (without file/sha256); throws UsageError naming the first problem.
export function validateProtocol(json: Json, file: string, opts: ValidateOptions = {}) {
  const c = new Checker(file);
  const notes: string[] = [];
  const o = c.object(json, '(top level)');
  c.keys(o, '', REQUIRED_TOP_KEYS, OPTIONAL_TOP_KEYS);
  const name = c.name(o['name'], 'name');
  const description = c.string(o['description'], 'description');
  const samplingIntervalS = o['samplingIntervalS'] === undefined ? 1 : c.positive(o['samplingIntervalS'], 'samplingIntervalS');
  const maxSampleGapS = sampleGap(c, o['maxSampleGapS'], samplingIntervalS);

  const lim = limits(c, o['limits'], notes, opts.lenient === true, opts.rules ?? RULES);

  if (!Array.isArray(o['phases']) || o['phases'].length === 0) c.fail('phases', 'a non-empty array', o['phases']);
  const phases = (o['phases'] as Json[]).map((p, i) => phase(c, p, `phases[${i}]`, lim));
  const seen = new Set<string>();
  phases.forEach((p, i) => {
    if (seen.has(p.name)) c.fail(`phases[${i}].name`, 'a name not used by an earlier phase', p.name);
    seen.add(p.name);
  });

  const es = earlyStop(c, o['earlyStop'], lim, o['limits'], samplingIntervalS, notes);

  const rg = c.object(o['regression'], 'regression');
  const rkeys = ['throughputPct', 'busbwPct', 'berDecades', 'tempC'] as const;
  c.keys(rg, 'regression', rkeys, []);
  const regression = Object.fromEntries(rkeys.map((k) => [k, c.nonNegative(rg[k], `regression.${k}`)])) as unknown as RegressionTolerances;

  return { name, description, samplingIntervalS, maxSampleGapS, phases, commands: commands(c, o['commands']), limits: lim, earlyStop: es, regression, notes };
}
