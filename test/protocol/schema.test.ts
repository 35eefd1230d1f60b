import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_SAMPLE_GAP_S, OPTIONAL_TOP_KEYS, PHASE_KEYS, REQUIRED_TOP_KEYS, RULE_DIRECTION } from '../../src/protocol/validate.js';
import { COMMAND_PLACEHOLDERS, GPU_LOAD_PLACEHOLDERS, LIMIT_RULES, PHASE_KINDS } from '../../src/protocol/types.js';

const DIR = join(import.meta.dirname, '..', '..', 'protocols');
const read = (f: string) => JSON.parse(readFileSync(join(DIR, f), 'utf8'));
const schema = read('protocol.schema.json');
const sorted = (xs: Iterable<string>) => [...xs].sort();

// The schema is for editors, the loader is the authority: these tests keep the two from drifting apart.
describe('protocol.schema.json', () => {
  it('is draft 2020-12 and every protocol file points at it', () => {
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    for (const f of ['spark-burnin.json', 'quick.json']) expect(read(f).$schema).toBe('./protocol.schema.json');
  });

  it('requires exactly the top-level keys the loader requires, and allows only the ones it knows', () => {
    expect(sorted(schema.required)).toEqual(sorted(REQUIRED_TOP_KEYS));
    expect(sorted(Object.keys(schema.properties))).toEqual(sorted([...REQUIRED_TOP_KEYS, ...OPTIONAL_TOP_KEYS]));
    expect(schema.additionalProperties).toBe(false);
  });

  it('documents the loader`s default node-loss tolerance', () => {
    expect(schema.properties.maxSampleGapS.default).toBe(DEFAULT_MAX_SAMPLE_GAP_S);
  });

  it('describes each phase kind with the loader`s required and optional keys', () => {
    const variants: { properties: Record<string, any>; required: string[] }[] = schema.properties.phases.items.oneOf;
    expect(variants.map((v) => v.properties.kind.const)).toEqual([...PHASE_KINDS]);
    for (const v of variants) {
      const k = v.properties.kind.const as keyof typeof PHASE_KEYS;
      expect(sorted(v.required)).toEqual(sorted(PHASE_KEYS[k].required));
      expect(sorted(Object.keys(v.properties))).toEqual(sorted([...PHASE_KEYS[k].required, ...PHASE_KEYS[k].optional]));
    }
  });

  it('lists the same limit rules, directions and command placeholders', () => {
    const lim = schema.properties.limits.items;
    expect(lim.properties.rule.enum).toEqual([...LIMIT_RULES]);
    const dirs = Object.fromEntries(lim.allOf.map((x: any) => [x.if.properties.rule.const, x.then.properties.direction.const]));
    expect(dirs).toEqual(RULE_DIRECTION);
    const cmds = schema.properties.commands;
    expect(sorted(cmds.required)).toEqual(sorted([...Object.keys(COMMAND_PLACEHOLDERS).filter((n) => n !== 'ncclRank'), 'gpuLoad']));
    expect(sorted(Object.keys(cmds.properties))).toEqual(sorted([...Object.keys(COMMAND_PLACEHOLDERS), 'gpuLoad']));
    for (const [name, ph] of Object.entries(COMMAND_PLACEHOLDERS)) {
      const re = new RegExp(cmds.properties[name].pattern);
      expect(re.test(ph.map((p) => `{${p}}`).join(' '))).toBe(true);
      expect(re.test('x {bogus}')).toBe(false);
    }
    const [line, program] = cmds.properties.gpuLoad.oneOf;
    expect(new RegExp(line.pattern).test(GPU_LOAD_PLACEHOLDERS.map((p) => `{${p}}`).join(' '))).toBe(true);
    expect(sorted(program.required)).toEqual(['args', 'program']);
    expect(sorted(Object.keys(program.properties))).toEqual(['args', 'check', 'cwd', 'program', 'requires']);
    expect(new RegExp(program.properties.args.items.pattern).test('x {bogus}')).toBe(false);
  });

  it('its patterns accept the shipped templates and GPU load', () => {
    const cmds = schema.properties.commands.properties;
    for (const f of ['spark-burnin.json', 'quick.json']) {
      const { gpuLoad, ...templates } = read(f).commands as Record<string, any>;
      for (const [name, t] of Object.entries(templates)) expect(new RegExp(cmds[name].pattern).test(t)).toBe(true);
      const p = cmds.gpuLoad.oneOf[1].properties;
      expect(new RegExp(p.program.pattern).test(gpuLoad.program)).toBe(true);
      for (const a of gpuLoad.args) expect(new RegExp(p.args.items.pattern).test(a)).toBe(true);
      for (const r of gpuLoad.requires) expect(new RegExp(p.requires.items.pattern).test(r)).toBe(true);
    }
  });
});
