import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { NodeSample } from '../../src/domain/sample.js';
import { readJournal } from '../../src/run/journal.js';
import { reviveSample } from '../../src/run/revive.js';
import { journalSample } from '../../src/run/sampling-loop.js';

describe('journal streaming and the compact sample line', () => {
  it('reads lines that cross the 4 MiB read chunk, a line longer than the chunk, a bad middle line and a torn tail', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-jstream-'));
    const p = join(dir, 'journal.jsonl');
    const pad = 'é'.repeat(700); // two UTF-8 bytes each: a chunk boundary can fall inside one
    const lines: string[] = [];
    for (let i = 0; i < 4000; i++) lines.push(JSON.stringify({ type: 'tick', tS: i, pad }));
    lines.push(JSON.stringify({ type: 'huge', tS: 4000, pad: 'x'.repeat(9 << 20) }));
    lines.push('{"type":"tick","tS":4001,');
    lines.push(JSON.stringify({ type: 'tick', tS: 4002 }));
    writeFileSync(p, `${lines.join('\n')}\n{"type":"tick","tS":40`);
    const r = readJournal(p);
    expect(r.lines).toHaveLength(4002);
    expect(r.lines[3999]).toEqual({ type: 'tick', tS: 3999, pad });
    expect(r.lines[4000]!.type).toBe('huge');
    expect((r.lines[4000]!['pad'] as string).length).toBe(9 << 20);
    expect(r.lines[4001]!.tS).toBe(4002);
    expect(r.badLines).toEqual([4002]);
    expect(r.truncatedTail).toBe(true);
  });

  it('writes the second rail as countersFrom + differing counters, and revives both rails exactly', () => {
    const big = (1n << 60n) + 7n;
    const s: NodeSample = {
      node: 'a',
      tick: 3,
      tMs: 1000,
      controllerMs: 1001,
      rails: [
        { netdev: 'r0', counters: { rx_err_lane_0_phy: 5n, rx_bytes_phy: big }, linkUp: true, lanes: 4, fec: { active: 'RS', correctedBits: 9n } },
        { netdev: 'r1', counters: { rx_err_lane_0_phy: 5n, rx_bytes_phy: big + 1n } },
      ],
      nicTempC: 50,
      gpus: [],
      errors: [],
    };
    const line = JSON.parse(JSON.stringify(journalSample(s))) as { rails: Record<string, unknown>[] };
    expect(line.rails[0]).toEqual({
      netdev: 'r0',
      counters: { rx_err_lane_0_phy: 5, rx_bytes_phy: '1152921504606846983' },
      linkUp: true,
      lanes: 4,
      fec: { active: 'RS', correctedBits: 9 },
    });
    expect(line.rails[1]).toEqual({ netdev: 'r1', countersFrom: 'r0', counters: { rx_bytes_phy: '1152921504606846984' } });
    const back = reviveSample(line);
    expect(back.rails[0]!.counters).toEqual(s.rails[0]!.counters);
    expect(back.rails[1]!.counters).toEqual(s.rails[1]!.counters);
    expect(back.rails[0]!.fec).toEqual({ active: 'RS', correctedBits: 9n });
    // Only the canonical rail, as the grading pass revives it.
    expect(reviveSample(line, 'r1').rails.map((r) => r.counters)).toEqual([{}, s.rails[1]!.counters]);
  });

  it("keeps the full form when the second rail lacks one of the first rail's counters (old journals look like this too)", () => {
    const s: NodeSample = {
      node: 'a',
      tick: 0,
      tMs: 0,
      controllerMs: 0,
      rails: [
        { netdev: 'r0', counters: { x_phy: 1n, y_phy: 2n } },
        { netdev: 'r1', counters: { x_phy: 1n } },
      ],
      nicTempC: null,
      gpus: [],
      errors: [],
    };
    const line = JSON.parse(JSON.stringify(journalSample(s))) as { rails: Record<string, unknown>[] };
    expect(line.rails[1]).toEqual({ netdev: 'r1', counters: { x_phy: 1 } });
    expect(reviveSample(line).rails[1]!.counters).toEqual({ x_phy: 1n });
  });
});
