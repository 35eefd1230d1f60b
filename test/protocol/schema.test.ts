import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProtocol } from '../../src/protocol/load.js';
import { boundsTable, protocolSchema, protocolSchemaFile, protocolValidator, SCHEMA_PATH, withBoundsTable } from '../../src/protocol/schema.js';
import { COMMAND_PLACEHOLDERS, GPU_LOAD_PLACEHOLDERS, LIMIT_RULES, PHASE_KINDS } from '../../src/protocol/types.js';
import { DEFAULT_MAX_SAMPLE_GAP_S, DEFAULT_MSG_SIZE, DEFAULT_SAMPLING_INTERVAL_S } from '../../src/protocol/validate.js';
import { limitsSchema } from '../../src/rules/docs.js';
import { RULES } from '../../src/rules/versions.js';

const DIR = join(import.meta.dirname, '..', '..', 'protocols');
const read = (f: string) => JSON.parse(readFileSync(join(DIR, f), 'utf8'));
const schema = read('protocol.schema.json');
const SHIPPED = readdirSync(DIR).filter((f) => f.endsWith('.json') && f !== 'protocol.schema.json');

type Node = Record<string, any>;
// Every subschema with its JSON-pointer-like place, for the checks that must hold everywhere.
function subschemas(s: unknown, at = '#'): [string, Node][] {
  if (s === null || typeof s !== 'object') return [];
  if (Array.isArray(s)) return s.flatMap((x, i) => subschemas(x, `${at}/${i}`));
  const node = s as Node;
  const here: [string, Node][] = typeof node['type'] === 'string' ? [[at, node]] : [];
  return [...here, ...Object.entries(node).flatMap(([k, v]) => (k === 'default' || k === 'enum' || k === 'const' ? [] : subschemas(v, `${at}/${k}`)))];
}

describe('protocol.schema.json, the one statement of what a protocol may hold', () => {
  it('is draft 2020-12, read from protocols/ by the loader, and every shipped protocol points at it', () => {
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(SCHEMA_PATH).toBe(join(DIR, 'protocol.schema.json'));
    expect(protocolSchemaFile()).toEqual(schema);
    expect(SHIPPED.length).toBeGreaterThanOrEqual(2);
    for (const f of SHIPPED) expect(read(f).$schema, f).toBe('./protocol.schema.json');
  });

  it('every shipped protocol validates against it and loads with nothing to note', () => {
    const validate = protocolValidator();
    for (const f of SHIPPED) {
      expect(validate(read(f)), `${f}: ${JSON.stringify(validate.errors)}`).toBe(true);
      expect(loadProtocol(join(DIR, f)).notes, f).toEqual([]);
    }
  });

  it('the loader validates against the file with the limits built from the registry it is given', () => {
    expect(protocolSchema()).toEqual(schema);
    const extra = [...RULES, { ...RULES[0]!, id: 'symbol-errors' }];
    const s = protocolSchema(extra) as { properties: Node };
    expect(s.properties['limits']).toEqual(limitsSchema(extra));
    expect(s.properties['phases']).toEqual(schema.properties.phases);
  });

  it('bounds every number below and above, and says why', () => {
    const numbers = subschemas(schema).filter(([, n]) => n['type'] === 'number' || n['type'] === 'integer');
    expect(numbers.length).toBeGreaterThan(40);
    for (const [at, n] of numbers) {
      expect(n['minimum'] ?? n['exclusiveMinimum'], `${at} lower bound`).toBeTypeOf('number');
      expect(n['maximum'] ?? n['exclusiveMaximum'], `${at} upper bound`).toBeTypeOf('number');
      expect(n['description'], `${at} says why`).toMatch(/Bounds: \S/);
      expect(n['title'], `${at} names what it counts`).toBeTypeOf('string');
    }
  });

  it('bounds every string by length or pattern, and command templates forbid control characters', () => {
    for (const [at, n] of subschemas(schema).filter(([, x]) => x['type'] === 'string')) {
      expect(n['maxLength'] ?? (String(n['pattern'] ?? '').includes('{0,63}') ? 64 : undefined), `${at} bounded`).toBeTypeOf('number');
    }
    const cmds = schema.properties.commands.properties as Record<string, { pattern?: string; oneOf?: { pattern: string }[] }>;
    for (const [name, c] of Object.entries(cmds)) {
      const re = new RegExp(c.pattern ?? c.oneOf![0]!.pattern, 'u');
      for (const bad of ['a\nb', 'a\rb', 'a\tb', 'a\u001bb', 'a\u0000b', 'a\u007fb']) expect(re.test(bad), `${name} ${JSON.stringify(bad)}`).toBe(false);
    }
  });

  it("docs/protocol.md's table of bounds is current (npx tsx scripts/rule-docs.ts writes it), a row per number", () => {
    const doc = readFileSync(join(DIR, '..', 'docs', 'protocol.md'), 'utf8');
    expect(withBoundsTable(doc, boundsTable())).toBe(doc);
    const t = boundsTable();
    expect(t).toContain('| `samplingIntervalS` | seconds between samples | [0.1, 60] | 0.1 s (10 Hz) to 60 s:');
    expect(t).toContain('| `limits[].fail`, `marginal` (crc-errors) | errors | [1, 1000000] whole | a count: FAIL at 0 would fail every cable');
    expect(t).toContain('| `limits[].failFloorBer` (lane-ratio) | BER | (0, 1) |');
    expect(t).toContain('| `phases[].durationS` (soak) | seconds of load | [1, 259200] whole |');
  });

  it('declares the defaults the loader fills in', () => {
    expect(schema.properties.samplingIntervalS.default).toBe(DEFAULT_SAMPLING_INTERVAL_S);
    expect(schema.properties.maxSampleGapS.default).toBe(DEFAULT_MAX_SAMPLE_GAP_S);
    for (const b of schema.properties.phases.items.allOf as { then: { properties: Node } }[]) {
      const p = b.then.properties;
      if (p['msgSize']) expect(p['msgSize'].default).toBe(DEFAULT_MSG_SIZE);
      for (const k of ['bidirectional', 'linkLoad']) if (p[k]) expect(p[k].default).toBe(true);
    }
  });

  it('one branch per phase kind, each closed to unknown keys', () => {
    const branches: { if: Node; then: Node }[] = schema.properties.phases.items.allOf;
    expect(branches.map((b) => b.if.properties.kind.const)).toEqual([...PHASE_KINDS]);
    expect(schema.properties.phases.items.properties.kind.enum).toEqual([...PHASE_KINDS]);
    for (const b of branches) {
      expect(b.then.additionalProperties).toBe(false);
      expect(b.then.required.slice(0, 2)).toEqual(['name', 'kind']);
    }
  });

  it('its limits are the registry`s, with the same rules, directions and command placeholders', () => {
    expect(schema.properties.limits).toEqual(limitsSchema());
    const lim = schema.properties.limits.items;
    expect(lim.properties.rule.enum).toEqual([...LIMIT_RULES]);
    const dirs = Object.fromEntries(lim.allOf.map((x: any) => [x.if.properties.rule.const, x.then.properties.direction.const]));
    expect(dirs).toEqual(Object.fromEntries(RULES.map((r) => [r.id, r.direction])));
    const cmds = schema.properties.commands;
    expect([...cmds.required].sort()).toEqual([...Object.keys(COMMAND_PLACEHOLDERS).filter((n) => n !== 'ncclRank'), 'gpuLoad'].sort());
    expect(Object.keys(cmds.properties).sort()).toEqual([...Object.keys(COMMAND_PLACEHOLDERS), 'gpuLoad'].sort());
    for (const [name, ph] of Object.entries(COMMAND_PLACEHOLDERS)) {
      const re = new RegExp(cmds.properties[name].pattern, 'u');
      expect(re.test(ph.map((p) => `{${p}}`).join(' '))).toBe(true);
      expect(re.test('x {bogus}')).toBe(false);
      expect(re.test('x; reboot')).toBe(false);
    }
    const [line, program] = cmds.properties.gpuLoad.oneOf;
    expect(new RegExp(line.pattern, 'u').test(GPU_LOAD_PLACEHOLDERS.map((p) => `{${p}}`).join(' '))).toBe(true);
    expect([...program.required].sort()).toEqual(['args', 'program']);
    expect(Object.keys(program.properties).sort()).toEqual(['args', 'check', 'cwd', 'program', 'requires']);
    expect(new RegExp(program.properties.args.items.pattern, 'u').test('x {bogus}')).toBe(false);
  });

  it('its patterns accept the shipped templates and GPU load', () => {
    const cmds = schema.properties.commands.properties;
    for (const f of SHIPPED) {
      const { gpuLoad, ...templates } = read(f).commands as Record<string, any>;
      for (const [name, t] of Object.entries(templates)) expect(new RegExp(cmds[name].pattern, 'u').test(t), `${f} ${name}`).toBe(true);
      const p = cmds.gpuLoad.oneOf[1].properties;
      expect(new RegExp(p.program.pattern, 'u').test(gpuLoad.program)).toBe(true);
      for (const a of gpuLoad.args) expect(new RegExp(p.args.items.pattern, 'u').test(a)).toBe(true);
      for (const r of gpuLoad.requires) expect(new RegExp(p.requires.items.pattern, 'u').test(r)).toBe(true);
    }
  });
});
