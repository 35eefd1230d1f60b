import { describe, expect, it } from 'vitest';
import { parseNvidiaSmi } from '../../src/probes/nvidia-smi.js';
import { sample } from '../helpers/samples.js';
import { fuzzParser } from '../helpers/fuzz.js';
import { parseErrorOf } from '../helpers/parse-error.js';

const parseError = parseErrorOf;

const HARNESS_FIELDS = ['index', 'name', 'utilization.gpu', 'temperature.gpu', 'power.draw'];

// The guide pastes the command, Markdown fences, "Expected output:" and a `docker --version` line around
// the one CSV line nvidia-smi printed; keep that line only.
const noheaderPaste = () => sample('nvidia-smi/gb10-query-name-memtotal-driver-noheader.txt');
const noheaderLine = () => noheaderPaste().trim().split('\n').at(-1)!;
const curriculum = () => sample('nvidia-smi/gb10-query-memory-na-curriculum-quote.txt');
const table7d19 = () => sample('nvidia-smi/dgx-spark-7d19-default-table-580.95.05-partial.txt').split('\n').slice(1).join('\n');
const tableIdle = () => sample('nvidia-smi/gb10-default-table-580.173.02-idle-P8.txt');

// Generated, not recorded: the harness query in the documented CSV layout, using the values the default table
// of spark-7d19 shows (45C, 11W, 10%). With and without header/units.
const GEN_NOUNITS = '0, NVIDIA GB10, 10, 45, 11.00\n';
const GEN_HEADER_UNITS = 'index, name, utilization.gpu [%], temperature.gpu, power.draw [W]\n' + '0, NVIDIA GB10, 10 %, 45, 11.00 W\n';

describe('parseNvidiaSmi on real GB10 query output', () => {
  it('reads the noheader line with the fields of its command: memory.total is [N/A] on GB10', () => {
    expect(noheaderLine()).toBe('NVIDIA GB10, [N/A], 580.126.09');
    const r = parseNvidiaSmi(noheaderLine(), ['name', 'memory.total', 'driver_version']);
    expect(r.gpus).toEqual([{ name: 'NVIDIA GB10', 'memory.total': null, driver_version: '580.126.09' }]);
  });

  it('names noheader columns field0..fieldN when no fields are given', () => {
    const r = parseNvidiaSmi(noheaderLine());
    expect(r.fields).toEqual(['field0', 'field1', 'field2']);
    expect(r.gpus[0]).toEqual({ field0: 'NVIDIA GB10', field1: null, field2: '580.126.09' });
  });

  it('rejects the curriculum quote whose header was elided to "..." (5 header cells, 6 values)', () => {
    const e = parseError(() => parseNvidiaSmi(curriculum()));
    expect(e.line).toBe(2);
    expect(e.reason).toMatch(/^6 values for 5 fields/);
  });

  it('reads the curriculum value line alone: three [N/A] memory fields, 39 C, 3.74 W with units dropped', () => {
    const values = curriculum().split('\n')[1]!;
    expect(parseNvidiaSmi(values).gpus).toEqual([{ field0: 'NVIDIA GB10', field1: null, field2: null, field3: null, field4: 39, field5: 3.74 }]);
  });

  it('refuses the default tables with a clear reason', () => {
    for (const text of [table7d19(), tableIdle()]) {
      const e = parseError(() => parseNvidiaSmi(text));
      expect(e.reason).toBe('this is the default nvidia-smi table; use --query-gpu=... --format=csv');
      expect(e.line).toBe(2); // line 1 is the date
    }
  });
});

describe('parseNvidiaSmi on the harness query (generated text)', () => {
  it('reads noheader,nounits with the harness field list', () => {
    const r = parseNvidiaSmi(GEN_NOUNITS, HARNESS_FIELDS);
    expect(r.gpus).toEqual([{ index: 0, name: 'NVIDIA GB10', 'utilization.gpu': 10, 'temperature.gpu': 45, 'power.draw': 11 }]);
  });

  it('reads a header with units and strips them from names and values', () => {
    const r = parseNvidiaSmi(GEN_HEADER_UNITS);
    expect(r.fields).toEqual(HARNESS_FIELDS);
    expect(r.units).toEqual({ index: null, name: null, 'utilization.gpu': '%', 'temperature.gpu': null, 'power.draw': 'W' });
    expect(r.gpus).toEqual([{ index: 0, name: 'NVIDIA GB10', 'utilization.gpu': 10, 'temperature.gpu': 45, 'power.draw': 11 }]);
    // Given fields equal to the header: the header is recognised, not read as a GPU.
    expect(parseNvidiaSmi(GEN_HEADER_UNITS, HARNESS_FIELDS).gpus).toHaveLength(1);
  });

  it('maps [Not Supported] and N/A to null, refuses other bracketed errors and wrong column counts', () => {
    const r = parseNvidiaSmi('0, NVIDIA GB10, [Not Supported], 45, N/A', HARNESS_FIELDS);
    expect(r.gpus[0]!['utilization.gpu']).toBeNull();
    expect(r.gpus[0]!['power.draw']).toBeNull();
    expect(parseError(() => parseNvidiaSmi('0, NVIDIA GB10, 10, [Unknown Error], 11', HARNESS_FIELDS)).reason).toBe(
      'nvidia-smi reported [Unknown Error] for temperature.gpu',
    );
    expect(parseError(() => parseNvidiaSmi('0, NVIDIA GB10, 10, 45', HARNESS_FIELDS)).reason).toMatch(/^4 values for 5 fields/);
    expect(parseError(() => parseNvidiaSmi(GEN_HEADER_UNITS, ['index', 'name'])).reason).toMatch(/does not match the requested fields$/);
    expect(parseError(() => parseNvidiaSmi('No devices were found')).reason).toBe('No devices were found');
    expect(parseError(() => parseNvidiaSmi('')).reason).toBe('no output');
  });
});

describe('parseNvidiaSmi robustness', () => {
  it('only ever throws ParseError on random and mutated input', () => {
    fuzzParser((t) => parseNvidiaSmi(t), [noheaderLine(), curriculum(), GEN_HEADER_UNITS, tableIdle()]);
    fuzzParser((t) => parseNvidiaSmi(t, HARNESS_FIELDS), [GEN_NOUNITS, GEN_HEADER_UNITS]);
  });
});
