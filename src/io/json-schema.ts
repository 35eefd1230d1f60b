// JSON Schemas (ajv) for what the CLI reads back at its boundary (certificates, journal lines, records, scenarios):
// compiled once, and a value's first problem said in one line, "sample.node: expected a string, got null". A
// schema node's `title` is how messages name what it allows ("an ISO time"); without one it is said from its type.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

// A JSON Schema (draft 2020-12) as a plain object.
export type JsonSchema = { [key: string]: unknown };

// The first problem of a value, or null when it fits; the text starts with the path below the value (".a[0].b: ...",
// ": ..." for the value itself) so a caller can put its own prefix in front.
export type SchemaCheck = (value: unknown) => string | null;

// How every schema of this project is compiled (these checks and the protocol's, src/protocol/schema.ts). verbose: each
// error carries its schema, so a message can say the whole allowed range. validateSchema: false and no code optimiser:
// the schemas are this project's own, held to the draft 2020-12 meta-schema by a test (test/io/schemas-meta.test.ts)
// rather than at every start (the meta-schema and the optimiser cost a verify ~190 ms of its start).
export const AJV_OPTIONS = {
  verbose: true,
  strict: true,
  strictTuples: false,
  allowUnionTypes: true,
  validateSchema: false,
  code: { optimize: false },
} as const;
const ajv = new Ajv2020({ ...AJV_OPTIONS, allErrors: false });
const explainer = new Ajv2020({ ...AJV_OPTIONS, allErrors: true });

// Every schema compileSchema was given in this process, for the test that holds them to the meta-schema. @internal
export const SCHEMAS_GIVEN: JsonSchema[] = [];

// How a value is shown in a message: its kind, and for a number or boolean the value (cut at 40 characters).
export function describeJson(v: unknown): string {
  if (v === undefined) return 'nothing (missing)';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return 'a string';
  return `${typeof v} ${String(v)}`.slice(0, 40);
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

// What a schema node allows, in words.
export function allowedBy(s: unknown): string {
  if (s === null || typeof s !== 'object') return 'nothing';
  const o = s as JsonSchema;
  if (typeof o['title'] === 'string') return o['title'];
  if ('const' in o) return JSON.stringify(o['const']);
  if (Array.isArray(o['enum'])) return `one of ${o['enum'].map((x) => JSON.stringify(x)).join(', ')}`;
  const types = Array.isArray(o['type']) ? (o['type'] as string[]) : typeof o['type'] === 'string' ? [o['type']] : [];
  if (types.length) return types.map((t) => TYPE_WORDS[t] ?? t).join(' or ');
  const alts = (o['anyOf'] ?? o['oneOf']) as unknown[] | undefined;
  if (Array.isArray(alts)) return alts.map(allowedBy).join(' or ');
  return 'something else';
}

// A JSON pointer ("/ends/0/identity") as a path ("ends[0].identity"), with `key` appended.
function pathOf(pointer: string, key?: string): string {
  const parts = pointer === '' ? [] : pointer.slice(1).split('/');
  if (key !== undefined) parts.push(key);
  let out = '';
  for (const raw of parts) {
    const p = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const shown = /[\u0000-\u001f\u007f]/.test(p) ? JSON.stringify(p).slice(1, -1) : p;
    out += /^\d+$/.test(p) ? `[${p}]` : `.${shown}`;
  }
  return out;
}

// One ajv error as "<path>: expected <what the schema allows>, got <what was there>".
function sayError(e: ErrorObject): string {
  const schemaOf = e.parentSchema as JsonSchema | undefined;
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    const prop = ((schemaOf?.['properties'] ?? {}) as JsonSchema)[missing];
    return `${pathOf(e.instancePath, missing)}: expected ${allowedBy(prop)}, got nothing (missing)`;
  }
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    return `${pathOf(e.instancePath, extra)}: not allowed here (allowed: ${Object.keys((schemaOf?.['properties'] ?? {}) as JsonSchema).join(', ')})`;
  }
  const got = describeJson(e.data);
  if ((e.keyword === 'minItems' || e.keyword === 'maxItems') && Array.isArray(e.data)) {
    const { limit } = e.params as { limit: number };
    return `${pathOf(e.instancePath)}: expected ${e.keyword === 'minItems' ? 'at least' : 'at most'} ${limit} items, got ${e.data.length}`;
  }
  if (['maxLength', 'minLength', 'maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum', 'pattern'].includes(e.keyword)) {
    const what = typeof schemaOf?.['title'] === 'string' ? schemaOf['title'] : `${allowedBy(schemaOf)} that ${e.message ?? 'fits'}`;
    return `${pathOf(e.instancePath)}: expected ${what}, got ${typeof e.data === 'string' ? JSON.stringify(e.data.length > 40 ? `${e.data.slice(0, 37)}...` : e.data) : got}`;
  }
  return `${pathOf(e.instancePath)}: expected ${allowedBy(schemaOf)}, got ${got}`;
}

// Where an error sits in the schema, as the positions of the properties on its way in the order the schema declares
// them: errors compare by it so that the first field in the schema's order is the one reported (ajv checks
// `required` before `properties`, which would name a missing field before an earlier one of the wrong type).
function declaredOrder(schema: JsonSchema, e: ErrorObject): number[] {
  const segs = e.schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean);
  if (e.keyword === 'required') segs.splice(-1, 1, 'properties', (e.params as { missingProperty: string }).missingProperty);
  const out: number[] = [];
  let node: unknown = schema;
  for (let i = 0; i < segs.length; i++) {
    const o = (node ?? {}) as JsonSchema;
    if (segs[i] === 'properties' && i + 1 < segs.length) {
      const props = (o['properties'] ?? {}) as JsonSchema;
      out.push(Object.keys(props).indexOf(segs[i + 1]!));
      node = props[segs[++i]!];
    } else node = o[segs[i]!];
  }
  return out;
}

const earlier = (a: number[], b: number[]) => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return a.length < b.length;
};

// Compile a schema once (lazily); the check returns the first problem of a value (path first), or null. Valid values take the
// fast validator; only a failing one is validated again for all its errors, to report the first in declared order.
export function compileSchema(schema: JsonSchema): SchemaCheck {
  // Compiled on first use: a command that reads no certificate does not pay for its schema at start-up.
  let validate: ValidateFunction | null = null;
  let explain: ValidateFunction | null = null;
  SCHEMAS_GIVEN.push(schema);
  return (value) => {
    validate ??= ajv.compile(schema);
    if (validate(value)) return null;
    explain ??= explainer.compile(schema);
    explain(value);
    let first = validate.errors![0]!;
    let at = declaredOrder(schema, first);
    for (const e of explain.errors ?? []) {
      const o = declaredOrder(schema, e);
      if (earlier(o, at)) [first, at] = [e, o];
    }
    return sayError(first);
  };
}

// A check's problem with the value's own name in front: "run-start" + ".runId: ..." -> "run-start: runId: ...".
export function problemOf(name: string, p: string): string {
  return p.startsWith(':') ? `${name}${p}` : `${name}: ${p.replace(/^\./, '')}`;
}
