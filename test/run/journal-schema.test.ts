// #22 item 5: each journal line type the record is built from has a JSON Schema (src/run/journal-shape.ts, over the
// domain types of src/report/record-schema.ts). Lines as a run on real nodes writes them pass (no scenario, a node
// without DMI strings, an end whose EEPROM could not be read); a field of the wrong type is named with its path.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { gradeRunDir } from '../../src/cli/grade-command.js';
import { journalLineProblem } from '../../src/run/journal-shape.js';

const runStart = {
  type: 'run-start',
  tS: 0,
  runId: '20260101T000000Z-abcdef',
  startedAt: '2026-01-01T00:00:00.000Z',
  label: null,
  simulated: false,
  scenario: null,
  protocol: { name: 'spark-burnin', sha256: 'a'.repeat(64), file: 'protocols/spark-burnin.json' },
  protocolText: '{}',
  rulesVersion: 2,
  nodes: [{ name: 'spark-a', host: 'spark-a', cage: null }],
};
const nodeInfo = {
  type: 'node-info',
  tS: 1,
  node: 'spark-a',
  record: {
    name: 'spark-a',
    host: 'spark-a',
    cage: {
      index: 1,
      rails: [
        { netdev: 'enp1s0f1np1', rdmaDevice: 'rocep1s0f1', state: 'Up' },
        { netdev: 'enP2p1s0f1np1', rdmaDevice: 'roceP2p1s0f1' },
      ],
    },
    lanes: null,
    fecActive: null,
    dmi: { sysVendor: 'NVIDIA', productName: null, productVersion: null, boardName: null, biosVendor: null, biosVersion: null, biosDate: null },
  },
};
const identity = {
  type: 'identity',
  tS: 2,
  ends: [
    { node: 'spark-a', netdev: 'enp1s0f1np1', identity: null, error: 'sudo: a password is required' },
    {
      node: 'spark-b',
      netdev: 'enp1s0f1np1',
      identity: {
        standard: 'CMIS',
        identifier: 30,
        vendorName: 'Amphenol',
        vendorOui: '78:a7:14',
        vendorPn: 'NJAAKK0006',
        vendorRev: 'A',
        vendorSn: 'APF24150032K7N',
        dateCode: '240412',
        lengthM: null,
        attenuationDb: { '5GHz': 2 },
        anomalies: [],
      },
    },
  ],
};

describe('journal line schemas', () => {
  it('accept the lines of a run on real nodes', () => {
    for (const l of [runStart, nodeInfo, identity]) expect(journalLineProblem(l), l.type).toBeNull();
  });

  it.each([
    [{ ...runStart, scenario: 7 }, 'run-start: scenario: expected a string or null, got number 7'],
    [{ ...runStart, startedAt: 'yesterday' }, 'run-start: startedAt: expected an ISO time, got "yesterday"'],
    [{ ...nodeInfo, record: { ...nodeInfo.record, kernel: 6 } }, 'node-info: record.kernel: expected a string, got number 6'],
    [{ ...nodeInfo, record: { ...nodeInfo.record, cage: { index: 1, rails: [] } } }, 'node-info: record.cage.rails: expected at least 2 items, got 0'],
    [
      { ...identity, ends: [{ ...identity.ends[1], identity: { ...identity.ends[1]!.identity, vendorSn: 5 } }] },
      'identity: ends[0].identity.vendorSn: expected a string, got number 5',
    ],
    [
      { ...identity, ends: [{ ...identity.ends[1], identity: { ...identity.ends[1]!.identity, attenuationDb: { x: '3' } } }] },
      'identity: ends[0].identity.attenuationDb.x: expected a number, got a string',
    ],
    [{ type: 'aborted', tS: 3, why: { a: 1 } }, 'aborted: why: expected a string, got an object'],
    [{ type: 'benchmark', kind: 'nccl', tS: 4, busbwGBs: '21', devices: [] }, 'benchmark nccl: busbwGBs: expected a number or null, got a string'],
  ])('%j: %s', (line, problem) => {
    expect(journalLineProblem(line as { type: string } & Record<string, unknown>)).toBe(problem);
  });
});

// #22 item 12: the protocol a journal carries is the journal's: a text that cannot be read is named by its line.
describe('a journal whose recorded protocol cannot be read', () => {
  it.each([
    ['not JSON', 'not json', /^journal\.jsonl line 1 \(the protocol the run recorded, read from protocols\/quick\.json when it started\): not valid JSON: /],
    ['not a protocol', '{"name":5}', /^journal\.jsonl line 1 \(the protocol the run recorded, read from protocols\/quick\.json when it started\): /],
  ])('%s: the journal line is named, not the file on disk', (_what, text, message) => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-jproto-'));
    const src = join(process.cwd(), 'test', 'fixtures', 'journals-v2', 'good-qsfp56-quick');
    cpSync(src, dir, { recursive: true });
    const lines = gunzipSync(readFileSync(join(src, 'journal.jsonl.gz')))
      .toString('utf8')
      .split('\n');
    lines[0] = JSON.stringify({ ...(JSON.parse(lines[0]!) as object), protocolText: text });
    writeFileSync(join(dir, 'journal.jsonl'), lines.join('\n'));
    expect(() => gradeRunDir(dir)).toThrow(message);
  });
});
