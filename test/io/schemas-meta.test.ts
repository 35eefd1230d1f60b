// The CLI compiles its JSON Schemas without checking them against the draft 2020-12 meta-schema (validateSchema:
// false: compiling the meta-schema cost every start that reads a certificate ~120 ms). This test is that check, for
// every schema the CLI compiles: the boundary schemas of src/io/json-schema.ts and each rules version's protocol schema.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { SCHEMAS_GIVEN, type JsonSchema } from '../../src/io/json-schema.js';
import { protocolSchema } from '../../src/protocol/schema.js';
import { RULES_VERSIONS, rulesOf } from '../../src/rules/versions.js';
// Each module compiles its schemas when loaded.
import '../../src/report/certificate-schema.js';
import '../../src/report/record-schema.js';
import '../../src/sim/scenario-schema.js';
import '../../src/run/journal-shape.js';

function metaProblems(schema: JsonSchema): string | null {
  const ajv = new Ajv2020({ strict: true, strictTuples: false, allowUnionTypes: true });
  return ajv.validateSchema(schema) ? null : ajv.errorsText(ajv.errors);
}

describe('every schema the CLI compiles is a valid draft 2020-12 schema', () => {
  it('the boundary schemas (certificate, record, scenario, journal lines)', () => {
    // certificate 1, record 1, scenario 1, and the journal's line kinds.
    expect(SCHEMAS_GIVEN.length).toBeGreaterThanOrEqual(6);
    for (const [i, s] of SCHEMAS_GIVEN.entries()) expect(metaProblems(s), `schema ${i}: ${JSON.stringify(s).slice(0, 80)}`).toBeNull();
  });

  it("each rules version's protocol schema", () => {
    for (const v of RULES_VERSIONS) expect(metaProblems(protocolSchema(rulesOf(v.version))), `rules version ${v.version}`).toBeNull();
  });

  it('the meta-schema check catches a broken schema (the test can fail)', () => {
    expect(metaProblems({ type: 'strnig' })).toMatch(/type/);
    expect(metaProblems({ type: 'object', properties: { a: { minimum: 'one' } } })).toMatch(/minimum/);
  });
});
