// The protocol's JSON Schema, protocols/protocol.schema.json, compiled by ajv: the one statement of what a protocol file
// may hold. Its `limits` part is rebuilt from the rule registry at load, so a rule added to src/rules/definitions.ts is
// validated without editing the schema (scripts/rule-docs.ts writes the same part into the file for editors).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { limitsSchema } from '../rules/docs.js';
import type { RuleDeclaration } from '../rules/definitions.js';
import { RULES } from '../rules/versions.js';
import { AJV_OPTIONS } from '../io/json-schema.js';

// src/protocol and dist/protocol are both two levels below the package root, beside protocols/.
export const SCHEMA_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'protocols', 'protocol.schema.json');

type Json = Record<string, unknown>;

let fileSchema: Json | null = null;

// The schema as checked in (read once).
export function protocolSchemaFile(): Json {
  fileSchema ??= JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')) as Json;
  return fileSchema;
}

// The schema a protocol is validated against: the file's, with `limits` from the given rules.
export function protocolSchema(rules: readonly RuleDeclaration[] = RULES): Json {
  const file = protocolSchemaFile();
  return { ...file, properties: { ...(file['properties'] as Json), limits: limitsSchema(rules) } };
}

const compiled = new WeakMap<readonly RuleDeclaration[], ValidateFunction>();

// The compiled validator for a rule list (compiled once per list, each on its own instance: every list's schema has the
// same $id). allErrors: a lenient read sorts every error.
export function protocolValidator(rules: readonly RuleDeclaration[] = RULES): ValidateFunction {
  let v = compiled.get(rules);
  if (!v) {
    v = new Ajv2020({ ...AJV_OPTIONS, allErrors: true }).compile(protocolSchema(rules));
    compiled.set(rules, v);
  }
  return v;
}

const BOUNDS_BEGIN = '<!-- protocol-bounds:begin (generated from protocols/protocol.schema.json by `npx tsx scripts/rule-docs.ts`; do not edit) -->';
const BOUNDS_END = '<!-- protocol-bounds:end -->';

// docs/protocol.md's table of every number a protocol holds: where, what it counts, the range allowed, and why.
export function boundsTable(schema: Json = protocolSchema()): string {
  const props = (s: unknown) => (((s ?? {}) as Json)['properties'] ?? {}) as Record<string, Json>;
  const constOf = (b: Json, key: string) => String((props(b['if'])[key] ?? {})['const']);
  const rows: string[] = [];
  const add = (field: string, s: Json) => {
    if (s['type'] !== 'number' && s['type'] !== 'integer') return;
    const lo = s['exclusiveMinimum'] !== undefined ? `(${String(s['exclusiveMinimum'])}` : `[${String(s['minimum'])}`;
    const hi = s['exclusiveMaximum'] !== undefined ? `${String(s['exclusiveMaximum'])})` : `${String(s['maximum'])}]`;
    const why = (String(s['description'] ?? '').split('Bounds: ')[1] ?? '').replace(/\.$/, '');
    const unit = String(s['title'] ?? '').split(':')[0];
    rows.push(`| ${field} | ${unit} | ${lo}, ${hi}${s['type'] === 'integer' ? ' whole' : ''} | ${why.replace(/\|/g, '\\|')} |`);
  };
  const top = props(schema);
  for (const [k, s] of Object.entries(top)) add(`\`${k}\``, s);
  for (const b of ((top['phases']?.['items'] as Json)['allOf'] ?? []) as Json[]) {
    for (const [k, s] of Object.entries(props(b['then']))) add(`\`phases[].${k}\` (${constOf(b, 'kind')})`, s);
  }
  for (const b of ((top['limits']?.['items'] as Json)['allOf'] ?? []) as Json[]) {
    // marginal has the range of fail: one row for both.
    for (const [k, s] of Object.entries(props(b['then'])))
      if (k !== 'marginal') add(`\`limits[].${k === 'fail' ? 'fail`, `marginal' : k}\` (${constOf(b, 'rule')})`, s);
  }
  for (const k of ['earlyStop', 'regression', 'watch']) for (const [p, s] of Object.entries(props(top[k]))) add(`\`${k}.${p}\``, s);
  for (const [p, s] of Object.entries(props(props(top['watch'])['limits']?.['items']))) add(`\`watch.limits[].${p}\``, s);
  return [BOUNDS_BEGIN, '| field | unit | allowed | why |', '|---|---|---|---|', ...rows, BOUNDS_END].join('\n');
}

// A document's text with the bounds table between its markers replaced (the markers must be there).
export function withBoundsTable(doc: string, table: string): string {
  const a = doc.indexOf('<!-- protocol-bounds:begin');
  const b = doc.indexOf(BOUNDS_END);
  if (a < 0 || b < 0) throw new Error('no protocol-bounds markers');
  return doc.slice(0, a) + table + doc.slice(b + BOUNDS_END.length);
}
