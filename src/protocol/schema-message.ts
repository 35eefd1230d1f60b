// One ajv error as one line a user can act on: the JSON path of the field (phases[3].durationS) and what is allowed there.
import type { ErrorObject } from 'ajv/dist/2020.js';
import { NO_CONTROL } from '../rules/docs.js';

type Obj = Record<string, unknown>;

// A value as shown in a message: JSON, cut at 40 characters (control characters come out escaped).
export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

// A key in a path: escaped when it holds a control character, so the message stays one line.
function shownKey(k: string): string {
  return /[\u0000-\u001f\u007f]/.test(k) ? JSON.stringify(k).slice(1, -1) : k;
}

// The JSON pointer ajv reports ("/phases/3/durationS") as the path a user reads ("phases[3].durationS").
export function pathOf(root: unknown, pointer: string, key?: string): string {
  const parts =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let out = '';
  let at: unknown = root;
  for (const p of parts) {
    out = Array.isArray(at) ? `${out}[${p}]` : out === '' ? shownKey(p) : `${out}.${shownKey(p)}`;
    at = at !== null && typeof at === 'object' ? (at as Obj)[p] : undefined;
  }
  if (key !== undefined) out = out === '' ? shownKey(key) : `${out}.${shownKey(key)}`;
  return out === '' ? '(top level)' : out;
}

const fmt = (x: number) => String(x);

// "a number in (0, 3600]" from a number's schema, with its description's first words as the unit.
function numberAllowed(s: Obj): string {
  const lo =
    s['exclusiveMinimum'] !== undefined ? `(${fmt(s['exclusiveMinimum'] as number)}` : s['minimum'] !== undefined ? `[${fmt(s['minimum'] as number)}` : null;
  const hi =
    s['exclusiveMaximum'] !== undefined ? `${fmt(s['exclusiveMaximum'] as number)})` : s['maximum'] !== undefined ? `${fmt(s['maximum'] as number)}]` : null;
  const kind = s['type'] === 'integer' ? 'a whole number' : 'a number';
  const range =
    lo && hi
      ? ` in ${lo}, ${hi}`
      : lo
        ? ` ${lo.startsWith('(') ? '>' : '>='} ${lo.slice(1)}`
        : hi
          ? ` ${hi.endsWith(')') ? '<' : '<='} ${hi.slice(0, -1)}`
          : '';
  return `${kind}${range}${typeof s['title'] === 'string' ? ` (${s['title']})` : ''}`;
}

// What a command template may hold, said for the way this one breaks it (an unknown placeholder is shown alone).
function templateAllowed(value: unknown, placeholders: readonly string[]): { expected: string; got: unknown } {
  const t = typeof value === 'string' ? value : '';
  if (/[\u0000-\u001f\u007f]/.test(t)) return { expected: 'one line without control characters (a newline would start a second command)', got: value };
  const among = `placeholders among {${placeholders.join('}, {')}}`;
  const bad = [...t.matchAll(/\{([^{}]*)\}/g)].find((m) => !placeholders.includes(m[1] ?? ''));
  if (bad) return { expected: among, got: bad[0] };
  if (/[{}]/.test(t.replace(/\{[^{}]*\}/g, ''))) return { expected: among, got: value };
  return { expected: 'a plain command line without shell operators', got: value };
}

// Which placeholders a template's schema pattern allows ("\{(?:a|b)\}").
function placeholdersOf(pattern: string): string[] {
  const m = /\\\{\(\?:([^)]*)\)\\\}/.exec(pattern);
  return m ? m[1]!.split('|') : [];
}

// The rule a limit entry names, when the error is inside one ("for crc-errors").
function ruleFor(root: unknown, pointer: string): string {
  const m = /^\/limits\/(\d+)/.exec(pointer);
  const entry = m && Array.isArray((root as Obj)?.['limits']) ? ((root as Obj)['limits'] as unknown[])[Number(m[1])] : undefined;
  const rule = entry !== null && typeof entry === 'object' ? (entry as Obj)['rule'] : undefined;
  return typeof rule === 'string' ? ` for ${rule}` : '';
}

export interface SchemaProblem {
  path: string;
  expected: string;
  got?: unknown; // absent: the message says no "got" (a missing or unknown key)
  hasGot: boolean;
}

// An ajv error as the field at fault and what is allowed there.
export function problemOf(root: unknown, e: ErrorObject): SchemaProblem {
  const s = (e.parentSchema ?? {}) as Obj;
  const at = (key?: string) => pathOf(root, e.instancePath, key);
  const got = { got: e.data, hasGot: true };
  switch (e.keyword) {
    case 'required':
      return { path: at(String(e.params['missingProperty'])), expected: 'a value (required key)', hasGot: false };
    case 'additionalProperties': {
      const known = Object.keys((s['properties'] as Obj | undefined) ?? {});
      return {
        path: at(String(e.params['additionalProperty'])),
        expected: `no such key (known${ruleFor(root, e.instancePath)}: ${known.join(', ')})`,
        hasGot: false,
      };
    }
    case 'type':
      if (s['type'] === 'number' || s['type'] === 'integer') return { path: at(), expected: numberAllowed(s), ...got };
      return {
        path: at(),
        expected:
          (({ boolean: 'true or false', string: 'a string', object: 'an object', array: 'an array' } as Obj)[String(s['type'])] as string) ?? String(s['type']),
        ...got,
      };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { path: at(), expected: numberAllowed(s), ...got };
    case 'enum':
      return { path: at(), expected: `one of ${(e.schema as unknown[]).map(String).join(', ')}`, ...got };
    case 'const':
      return { path: at(), expected: `${JSON.stringify(e.schema)}${ruleFor(root, e.instancePath)}`, ...got };
    case 'pattern': {
      const pattern = String(e.schema);
      if (typeof s['title'] === 'string') return { path: at(), expected: s['title'], ...got };
      if (e.instancePath.startsWith('/commands/')) return { path: at(), ...templateAllowed(e.data, placeholdersOf(pattern)), hasGot: true };
      if (pattern === NO_CONTROL) return { path: at(), expected: 'text without control characters', ...got };
      const d = typeof s['description'] === 'string' ? s['description'].replace(/\.$/, '') : `text matching ${pattern}`;
      return { path: at(), expected: `a name of ${d.charAt(0).toLowerCase()}${d.slice(1)}`, ...got };
    }
    case 'minLength':
      return { path: at(), expected: 'a non-empty string', ...got };
    case 'maxLength':
      return { path: at(), expected: `a string of at most ${String(e.schema)} characters`, ...got };
    case 'minItems':
      return { path: at(), expected: 'a non-empty array', ...got };
    case 'maxItems':
      return { path: at(), expected: `at most ${String(e.schema)} entries`, got: `${(e.data as unknown[]).length} entries`, hasGot: true };
    case 'oneOf': {
      const kinds = ((e.schema ?? []) as Obj[]).map(
        (b) => ({ string: 'a string', object: 'an object', array: 'an array' })[String(b['type'])] ?? String(b['type']),
      );
      return { path: at(), expected: kinds.join(' or '), ...got };
    }
    default:
      return { path: at(), expected: e.message ?? e.keyword, ...got };
  }
}

// The errors worth a message: a oneOf branch of another type than the value says nothing (its type error and the
// oneOf summary go when a branch of the value's type has its own errors).
export function relevantErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const out = errors.filter((e) => e.keyword !== 'if');
  const branchType = (e: ErrorObject) => e.keyword === 'type' && /\/oneOf\/\d+\/type$/.test(e.schemaPath);
  const inBranch = out.filter((e) => !branchType(e) && e.keyword !== 'oneOf');
  return inBranch.length ? inBranch : out.filter((e) => e.keyword === 'oneOf').concat(out.filter((e) => e.keyword !== 'oneOf'));
}

// Errors that say a value is out of its range (not that the protocol's shape is wrong): a journal's protocol
// with one is still read to grade what was run, the error noted.
export function isRangeError(e: ErrorObject): boolean {
  if (['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'pattern'].includes(e.keyword)) return true;
  return e.keyword === 'type' && e.schema === 'integer' && typeof e.data === 'number' && Number.isFinite(e.data);
}
