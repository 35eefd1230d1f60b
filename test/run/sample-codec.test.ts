// The journal's sample codec (src/run/sample-codec.ts): typed counters to the journal's named JSON and back, the
// compact second rail, and every sample line of the compat journals read and written again to the same JSON.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { NodeSample } from '../../src/domain/sample.js';
import { decodeSample, encodeSample } from '../../src/run/sample-codec.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');

// GENERATED samples: every number is made up here.
const sampleOf = (rails: NodeSample['rails']): NodeSample => ({ node: 'a', tick: 3, tMs: 1000, controllerMs: 1001, rails, nicTempC: 50, gpus: [], errors: [] });

describe('the journal sample codec', () => {
  const big = (1n << 60n) + 7n;
  const s = sampleOf([
    { netdev: 'r0', phy: { rxBytes: big, laneErrors: [5n] }, linkUp: true, lanes: 4, fec: { active: 'RS', correctedBits: 9n } },
    { netdev: 'r1', phy: { rxBytes: big + 1n, laneErrors: [5n] } },
  ]);

  it('writes counters by their ethtool names in the driver`s order, the second rail as countersFrom + what differs', () => {
    const line = JSON.parse(JSON.stringify(encodeSample(s))) as { rails: Record<string, unknown>[] };
    expect(JSON.stringify(line.rails[0])).toBe(
      '{"netdev":"r0","counters":{"rx_bytes_phy":"1152921504606846983","rx_err_lane_0_phy":5},"linkUp":true,"lanes":4,"fec":{"active":"RS","correctedBits":9}}',
    );
    expect(line.rails[1]).toEqual({ netdev: 'r1', countersFrom: 'r0', counters: { rx_bytes_phy: '1152921504606846984' } });
    // The full form (a skipped tick's evidence) writes each rail's own counters.
    expect((encodeSample(s, true)['rails'] as Record<string, unknown>[])[1]).toEqual({
      netdev: 'r1',
      counters: { rx_bytes_phy: '1152921504606846984', rx_err_lane_0_phy: 5 },
    });
  });

  it('reads both rails back exactly, or only the one asked for', () => {
    const line = JSON.parse(JSON.stringify(encodeSample(s))) as unknown;
    const back = decodeSample(line);
    expect(back.rails.map((r) => r.phy)).toEqual(s.rails.map((r) => r.phy));
    expect(back.rails[0]!.fec).toEqual({ active: 'RS', correctedBits: 9n });
    expect(decodeSample(line, 'r1').rails.map((r) => r.phy)).toEqual([{ laneErrors: [] }, s.rails[1]!.phy]);
  });

  it("keeps the full form when the second rail lacks one of the first rail's counters (old journals look like this too)", () => {
    const t = sampleOf([
      { netdev: 'r0', phy: { crcErrors: 1n, symbolErrors: 2n, laneErrors: [] } },
      { netdev: 'r1', phy: { crcErrors: 1n, laneErrors: [] } },
    ]);
    const line = JSON.parse(JSON.stringify(encodeSample(t))) as { rails: Record<string, unknown>[] };
    expect(line.rails[1]).toEqual({ netdev: 'r1', counters: { rx_crc_errors_phy: 1 } });
    expect(decodeSample(line).rails[1]!.phy).toEqual({ crcErrors: 1n, laneErrors: [] });
  });

  it('reads lanes up to the first one missing, and leaves out what is not a whole number (as every version read journals)', () => {
    const counters = JSON.parse('{"rx_err_lane_0_phy":1,"rx_err_lane_2_phy":3,"rx_crc_errors_phy":-1,"rx_bytes_phy":"x","__proto__":5}') as unknown;
    const back = decodeSample({ ...sampleOf([]), rails: [{ netdev: 'r0', counters }] });
    expect(back.rails[0]!.phy).toEqual({ laneErrors: [1n], crcErrors: -1n });
  });

  it('every sample line of every compat journal decodes and encodes again to the JSON it was', () => {
    let n = 0;
    for (const set of readdirSync(FIXTURES).filter((d) => /^journals-v/.test(d))) {
      for (const run of readdirSync(join(FIXTURES, set), { withFileTypes: true }).filter((d) => d.isDirectory())) {
        const text = gunzipSync(readFileSync(join(FIXTURES, set, run.name, 'journal.jsonl.gz'))).toString('utf8');
        for (const l of text.split('\n')) {
          if (!l.includes('"type":"sample"')) continue;
          let sample: unknown;
          try {
            sample = (JSON.parse(l) as { sample: unknown }).sample;
          } catch {
            continue; // the torn last line of a killed run
          }
          expect(JSON.stringify(encodeSample(decodeSample(sample)))).toBe(JSON.stringify(sample));
          n++;
        }
      }
    }
    expect(n).toBeGreaterThan(10_000);
  });
});
