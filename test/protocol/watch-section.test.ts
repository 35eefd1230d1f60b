import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseProtocol } from '../../src/protocol/load.js';
import { DEFAULT_SERVICE_WATCH } from '../../src/protocol/validate.js';
import { serviceSettingsOf } from '../../src/watch/settings.js';

const base = JSON.parse(readFileSync('protocols/spark-burnin.json', 'utf8')) as Record<string, unknown>;
const withWatch = (watch: unknown) => parseProtocol(JSON.stringify({ ...base, watch }), 'protocols/x.json');
const schema = JSON.parse(readFileSync('protocols/protocol.schema.json', 'utf8')) as {
  properties: { watch: { properties: Record<string, { default?: number }> } };
};

describe("the protocol's watch section", () => {
  it('declares in the schema the defaults the loader and the watch use', () => {
    const p = schema.properties.watch.properties;
    for (const k of ['intervalS', 'clearAfterS', 'statusEveryS', 'countWindowS'] as const) expect(p[k]!.default, k).toBe(DEFAULT_SERVICE_WATCH[k]);
  });

  it('a protocol without one has none (its record is as before) and is watched with the defaults', () => {
    const p = parseProtocol(JSON.stringify(base), 'protocols/spark-burnin.json');
    expect(p.watch).toBeUndefined();
    expect(serviceSettingsOf(p).intervalS).toBe(10);
  });

  it("overrides a rule's qualification limit field by field; the rest stays the qualification's", () => {
    const p = withWatch({
      intervalS: 30,
      limits: [
        { rule: 'lane-ratio', marginal: 50, windowS: 600 },
        { rule: 'crc-errors', fail: 10 },
      ],
    });
    expect(p.watch).toEqual({
      ...DEFAULT_SERVICE_WATCH,
      intervalS: 30,
      limits: [
        { rule: 'lane-ratio', marginal: 50, params: { windowS: 600 } },
        { rule: 'crc-errors', fail: 10 },
      ],
    });
    const s = serviceSettingsOf(p);
    expect(s.intervalS).toBe(30);
    expect(s.laneRatio).toMatchObject({ marginal: 50, fail: 1000, windowS: 600, holdS: 10, failFloorBer: 1e-6 });
    expect(s.countFail['crc-errors']).toBe(10);
    expect(s.countFail['post-fec-errors']).toBe(1);
  });

  it('refuses an unknown field, a rule it does not watch and a value out of bounds, naming the field', () => {
    expect(() => withWatch({ intervalSeconds: 10 })).toThrow(/^protocols\/x\.json: watch\.intervalSeconds: expected no such key/);
    expect(() => withWatch({ limits: [{ rule: 'ib-write-bw-sum', fail: 1 }] })).toThrow(/^protocols\/x\.json: watch\.limits\[0\]\.rule: expected/);
    expect(() => withWatch({ intervalS: 0 })).toThrow(/^protocols\/x\.json: watch\.intervalS: expected .*got 0/);
  });
});
