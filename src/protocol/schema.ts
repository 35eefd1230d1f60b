// The protocol's JSON Schema, protocols/protocol.schema.json, compiled by ajv: the one statement of what a protocol file
// may hold. Its `limits` part is rebuilt from the rule registry at load, so a rule added to src/rules/registry.ts is
// validated without editing the schema (scripts/rule-docs.ts writes the same part into the file for editors).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { limitsSchema } from '../rules/docs.js';
import { RULES, type RuleDeclaration } from '../rules/registry.js';

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

// The compiled validator for a rule list (compiled once per list). allErrors: a lenient read sorts every error;
// verbose: each error carries its schema, so a message can say the whole allowed range.
export function protocolValidator(rules: readonly RuleDeclaration[] = RULES): ValidateFunction {
  let v = compiled.get(rules);
  if (!v) {
    v = new Ajv2020({ allErrors: true, verbose: true, strict: true }).compile(protocolSchema(rules));
    compiled.set(rules, v);
  }
  return v;
}

export type SchemaError = ErrorObject;
