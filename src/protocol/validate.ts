// Validating a protocol file: its JSON Schema (protocols/protocol.schema.json, by ajv) says what each field may hold,
// src/protocol/semantics.ts what the fields owe each other; each problem becomes one line naming file, JSON path and
// what is allowed. Then the defaults are filled in.
import { UsageError } from '../domain/errors.js';
import type { Limit } from '../domain/limit.js';
import { LIMIT_KEYS, defaultLimit, type RuleDeclaration } from '../rules/definitions.js';
import { RULES } from '../rules/versions.js';
import { protocolValidator } from './schema.js';
import { describeValue, isRangeError, problemOf, relevantErrors } from './schema-message.js';
import { commandProblems, phaseOrderProblems, samplingProblems } from './semantics.js';
import type { EarlyStopConfig, GpuLoad, Phase, ProtocolCommands, RegressionTolerances, ServiceWatchConfig, WatchLimitOverride } from './types.js';

type Obj = Record<string, unknown>;

// How strictly to read a protocol: a file for a new run is refused for an unknown rule or setting (a typo must not
// pass silently) and for any value out of its range or phases out of order; the protocol a journal embeds is read
// leniently (a rule this version no longer knows is noted and ignored, a value or an order this version would refuse
// is noted and read as written), so every journal a lab holds keeps grading what was run.
export interface ValidateOptions {
  lenient?: boolean;
  rules?: readonly RuleDeclaration[]; // the rules to check limits against (default: the registry; tests add one)
}

// Defaults the schema declares (`default`), filled in here; test/protocol/schema.test.ts holds the two together.
export const DEFAULT_SAMPLING_INTERVAL_S = 1;
export const DEFAULT_MSG_SIZE = 65536;
// The node-loss tolerance a protocol gets when it names none (what runs used before it was protocol data).
export const DEFAULT_MAX_SAMPLE_GAP_S = 60;

// The watch section's defaults (the schema's `default`s; test/protocol/watch-section.test.ts holds the two together).
export const DEFAULT_SERVICE_WATCH: ServiceWatchConfig = { intervalS: 10, clearAfterS: 900, statusEveryS: 3600, countWindowS: 3600, limits: [] };

// The watch section with its defaults; a limit's settings other than fail and marginal become its params.
function serviceWatch(w: Obj): ServiceWatchConfig {
  const limits = ((w['limits'] ?? []) as Obj[]).map((l): WatchLimitOverride => {
    const { rule, fail, marginal, ...params } = l as Obj & { rule: string; fail?: number; marginal?: number };
    return {
      rule,
      ...(fail !== undefined ? { fail } : {}),
      ...(marginal !== undefined ? { marginal } : {}),
      ...(Object.keys(params).length ? { params: params as Record<string, number> } : {}),
    };
  });
  const num = (k: keyof Omit<ServiceWatchConfig, 'limits'>) => (w[k] as number | undefined) ?? DEFAULT_SERVICE_WATCH[k];
  return { intervalS: num('intervalS'), clearAfterS: num('clearAfterS'), statusEveryS: num('statusEveryS'), countWindowS: num('countWindowS'), limits };
}

interface Problem {
  path: string;
  expected: string;
  got?: unknown;
  hasGot?: boolean;
}

class Reader {
  readonly notes: string[] = [];
  // Limit entries dropped by a lenient read: file index of each entry left, so messages name the file's entry.
  limitIndex: number[] | null = null;

  constructor(
    readonly file: string,
    readonly lenient: boolean,
  ) {}

  private path(p: string): string {
    const map = this.limitIndex;
    return map ? p.replace(/^limits\[(\d+)\]/, (_m, i: string) => `limits[${map[Number(i)] ?? i}]`) : p;
  }

  text(p: Problem): string {
    const hasGot = p.hasGot ?? 'got' in p;
    return `${this.path(p.path)}: expected ${p.expected}${hasGot ? `, got ${describeValue(p.got)}` : ''}`;
  }

  fail(p: Problem): never {
    throw new UsageError(`${this.file}: ${this.text(p)}`);
  }

  // A problem a new run is refused for; a journal's protocol is read anyway, the problem noted.
  refuseOrNote(p: Problem): void {
    if (!this.lenient) this.fail(p);
    this.notes.push(`${this.text(p)} (a new run would be refused; read as written to grade what was run)`);
  }
}

// A journal's limits as this version reads them: an unknown rule or setting dropped, a direction or unit set as the
// rule declares, a second limit for a rule dropped; each noted. The document is copied, never changed.
function lenientLimits(json: unknown, r: Reader, rules: readonly RuleDeclaration[]): unknown {
  if (json === null || typeof json !== 'object' || Array.isArray(json) || !Array.isArray((json as Obj)['limits'])) return json;
  const kept: unknown[] = [];
  const index: number[] = [];
  const seen = new Set<string>();
  ((json as Obj)['limits'] as unknown[]).forEach((v, i) => {
    const at = `limits[${i}]`;
    if (v === null || typeof v !== 'object' || Array.isArray(v) || typeof (v as Obj)['rule'] !== 'string') {
      kept.push(v);
      index.push(i);
      return;
    }
    const o = { ...(v as Obj) };
    const decl = rules.find((x) => x.id === o['rule']);
    if (!decl) {
      r.notes.push(`${at}: rule "${String(o['rule'])}" is not known to this version of the rules: ignored`);
      return;
    }
    const known = new Set<string>([...LIMIT_KEYS.required, ...LIMIT_KEYS.optional, ...Object.keys(decl.params)]);
    for (const k of Object.keys(o)) {
      if (known.has(k)) continue;
      r.notes.push(`${at}.${k}: not a setting of ${decl.id} in this version of the rules: ignored`);
      delete o[k];
    }
    for (const key of ['direction', 'unit'] as const) {
      if (o[key] === undefined || o[key] === decl[key]) continue;
      r.notes.push(`${at}.${key}: ${JSON.stringify(o[key])} read as "${decl[key]}", as ${decl.id} declares`);
      o[key] = decl[key];
    }
    if (seen.has(decl.id)) {
      r.notes.push(`${at}: a second limit for ${decl.id}: ignored, the first one applies`);
      return;
    }
    seen.add(decl.id);
    kept.push(o);
    index.push(i);
  });
  r.limitIndex = index;
  return { ...(json as Obj), limits: kept };
}

// The limits: each rule at most once, marginal on the good side of fail; a rule the file leaves out gets its declared
// default (an older protocol without a newer rule), noted so the record says which limits the file did not set.
function limits(r: Reader, entries: Obj[], rules: readonly RuleDeclaration[]): Limit[] {
  const out: Limit[] = [];
  entries.forEach((o, i) => {
    const decl = rules.find((x) => x.id === o['rule'])!;
    const count = entries.filter((y) => y['rule'] === decl.id).length;
    if (count > 1) r.fail({ path: 'limits', expected: `exactly one limit with rule "${decl.id}"`, got: `${count}` });
    const fail = o['fail'] as number;
    const l: Limit = { rule: decl.id, direction: decl.direction, fail, unit: decl.unit };
    if (o['marginal'] !== undefined) {
      const m = o['marginal'] as number;
      // The marginal band sits on the good side of the fail threshold.
      if (decl.direction === 'max' && !(m < fail)) r.fail({ path: `limits[${i}].marginal`, expected: `a number below fail (${fail}) for a max limit`, got: m });
      if (decl.direction === 'min' && !(m > fail)) r.fail({ path: `limits[${i}].marginal`, expected: `a number above fail (${fail}) for a min limit`, got: m });
      l.marginal = m;
    }
    if (o['description'] !== undefined) l.description = o['description'] as string;
    const params = Object.fromEntries(Object.entries(decl.params).map(([k, p]) => [k, (o[k] as number | undefined) ?? p.default]));
    if (Object.keys(params).length) l.params = params;
    out.push(l);
  });
  for (const decl of rules) {
    if (out.some((l) => l.rule === decl.id)) continue;
    const d = defaultLimit(decl);
    out.push(
      Object.keys(d.params).length
        ? d
        : { rule: d.rule, direction: d.direction, fail: d.fail, ...(d.marginal !== undefined ? { marginal: d.marginal } : {}), unit: d.unit },
    );
    r.notes.push(`limits: no limit for ${decl.id} (added in rules version ${decl.since}): its default applies`);
  }
  return out;
}

// One phase with its defaults: message size, both directions, link load on.
function phase(o: Obj): Phase {
  const name = o['name'] as string;
  const msgSize = (o['msgSize'] as number | undefined) ?? DEFAULT_MSG_SIZE;
  const bidirectional = (o['bidirectional'] as boolean | undefined) ?? true;
  const durationS = o['durationS'] as number;
  const kind = o['kind'] as Phase['kind'];
  switch (kind) {
    case 'preflight':
    case 'identity':
    case 'nccl':
      return durationS === undefined ? { name, kind } : { name, kind, durationS };
    case 'loopback':
      return { name, kind, durationS, msgSize };
    case 'ib_write_bw':
      return { name, kind, durationS, msgSize, bidirectional };
    case 'soak':
      return { name, kind, durationS, gpuLoad: o['gpuLoad'] as boolean, linkLoad: (o['linkLoad'] as boolean | undefined) ?? true, msgSize, bidirectional };
  }
}

// Protocols before the setup limits were declared once set them on the phases too (`floorGbps` of a loopback phase,
// `gpuUtilMinPct` of a GPU-loaded soak), and the phase's figure was the one checked: it becomes the rule's limit (the
// strictest, should phases differ), noted where it differs from the limit the file gives.
function phaseLimits(r: Reader, phases: Obj[], lim: Limit[]): void {
  for (const [key, rule] of [
    ['floorGbps', 'loopback-floor'],
    ['gpuUtilMinPct', 'gpu-util-min'],
  ] as const) {
    const set = phases.map((p, i) => ({ v: p[key], i })).filter((x): x is { v: number; i: number } => typeof x.v === 'number');
    const l = lim.find((x) => x.rule === rule);
    if (!set.length || !l) continue;
    const strictest = set.reduce((a, b) => (b.v > a.v ? b : a));
    if (strictest.v === l.fail) continue;
    r.notes.push(`phases[${strictest.i}].${key}: ${strictest.v} read as the ${rule} limit (the limits said ${l.fail}): the phase's figure is the one checked`);
    l.fail = strictest.v;
    if (l.marginal !== undefined && !(l.marginal > l.fail)) delete l.marginal;
  }
}

// earlyStop: keepSamplingS; a version 1 `laneRatioConsecutiveTicks` becomes the lane-ratio rule's holdS in seconds
// (ticks x samplingIntervalS) unless the lane-ratio limit sets holdS itself.
function earlyStop(r: Reader, es: Obj, lim: Limit[], entries: Obj[], intervalS: number): EarlyStopConfig {
  const out: EarlyStopConfig = { keepSamplingS: es['keepSamplingS'] as number };
  const ticks = es['laneRatioConsecutiveTicks'] as number | undefined;
  if (ticks !== undefined) out.laneRatioConsecutiveTicks = ticks;
  const lr = lim.find((l) => l.rule === 'lane-ratio');
  // Rules that count ticks (version 1's watch) read them as written; rules with a hold in seconds convert them.
  if (ticks !== undefined && lr?.params?.['holdS'] !== undefined) {
    const setInFile = entries.some((l) => l['rule'] === 'lane-ratio' && l['holdS'] !== undefined);
    if (!setInFile) {
      const holdS = ticks * intervalS;
      lr.params = { ...lr.params, holdS };
      r.notes.push(
        `earlyStop.laneRatioConsecutiveTicks: ${ticks} ticks of ${intervalS} s read as the lane-ratio holdS ${holdS} s (persistence is in seconds since rules version 2)`,
      );
    } else {
      r.notes.push('earlyStop.laneRatioConsecutiveTicks: ignored, the lane-ratio limit sets holdS');
    }
  }
  return out;
}

// The commands as the run uses them: the GPU load in its program form, or the one-line form of older protocols.
function commands(o: Obj): ProtocolCommands {
  const g = o['gpuLoad'];
  const gpuLoad: GpuLoad =
    typeof g === 'string'
      ? { form: 'line', line: g }
      : (() => {
          const p = g as Obj;
          const load: GpuLoad = {
            form: 'program',
            program: p['program'] as string,
            args: [...(p['args'] as string[])],
            requires: [...((p['requires'] as string[] | undefined) ?? [])],
          };
          if (p['cwd'] !== undefined) load.cwd = p['cwd'] as string;
          if (p['check'] !== undefined) load.check = [...(p['check'] as string[])];
          return load;
        })();
  return { ...(o as unknown as ProtocolCommands), gpuLoad };
}

// Validate parsed JSON into a Protocol body (without file/sha256); throws UsageError naming the first problem.
export function validateProtocol(json: unknown, file: string, opts: ValidateOptions = {}) {
  const rules = opts.rules ?? RULES;
  const r = new Reader(file, opts.lenient === true);
  const doc = r.lenient ? lenientLimits(json, r, rules) : json;

  // The schema: every field's type, range and key, from protocols/protocol.schema.json and the registry.
  const validate = protocolValidator(rules);
  if (!validate(doc)) {
    const errors = relevantErrors(validate.errors ?? []);
    const hard = r.lenient ? errors.filter((e) => !isRangeError(e)) : errors;
    if (hard.length) r.fail(problemOf(doc, hard[0]!));
    for (const e of errors) r.refuseOrNote(problemOf(doc, e));
  }
  const o = doc as Obj;

  const samplingIntervalS = (o['samplingIntervalS'] as number | undefined) ?? DEFAULT_SAMPLING_INTERVAL_S;
  // A tolerance under two intervals would call a node lost for one late tick. Left out, it is the default stretched to
  // two intervals rather than refused: journals from before the field existed keep their protocol text and must re-grade.
  const minGap = 2 * samplingIntervalS;
  const gap = o['maxSampleGapS'] as number | undefined;
  if (gap !== undefined && gap < minGap) r.fail({ path: 'maxSampleGapS', expected: `a number of seconds >= 2 x samplingIntervalS (${minGap})`, got: gap });
  const maxSampleGapS = gap ?? Math.max(DEFAULT_MAX_SAMPLE_GAP_S, minGap);

  const entries = o['limits'] as Obj[];
  const lim = limits(r, entries, rules);

  phaseLimits(r, o['phases'] as Obj[], lim);
  const phases = (o['phases'] as Obj[]).map((p) => phase(p));
  const seen = new Set<string>();
  phases.forEach((p, i) => {
    if (seen.has(p.name)) r.fail({ path: `phases[${i}].name`, expected: 'a name not used by an earlier phase', got: p.name });
    seen.add(p.name);
  });

  const es = earlyStop(r, o['earlyStop'] as Obj, lim, entries, samplingIntervalS);

  // What the schema cannot say: phase order, windows against the interval, the number of samples.
  const limitPath = (rule: string) => {
    const i = entries.findIndex((l) => l['rule'] === rule);
    return i < 0 ? `limits (${rule} default)` : `limits[${i}]`;
  };
  const cmds = commands(o['commands'] as Obj);
  for (const p of [...phaseOrderProblems(phases), ...samplingProblems(phases, lim, samplingIntervalS, limitPath), ...commandProblems(cmds)]) r.refuseOrNote(p);

  return {
    name: o['name'] as string,
    description: o['description'] as string,
    samplingIntervalS,
    maxSampleGapS,
    phases,
    commands: cmds,
    limits: lim,
    earlyStop: es,
    regression: { ...(o['regression'] as RegressionTolerances) },
    ...(o['watch'] ? { watch: serviceWatch(o['watch'] as Obj) } : {}),
    notes: r.notes,
  };
}
