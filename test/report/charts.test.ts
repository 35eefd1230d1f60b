import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src/io/atomic-write.js';
import { bucketMax, laneRateChart, throughputChart } from '../../src/report/charts.js';
import { tempRoot } from '../fixtures/records/run-dir.js';

const phases = [{ name: 'soak-idle', kind: 'soak', startS: 0, endS: 100, status: 'done' as const }];

function circles(svg: string, cls: string): { cx: number; cy: number }[] {
  return [...svg.matchAll(new RegExp(`<circle class="pt ${cls}" cx="([\\d.]+)" cy="([\\d.]+)"`, 'g'))].map((m) => ({ cx: Number(m[1]), cy: Number(m[2]) }));
}

describe('laneRateChart', () => {
  // Generated points: lane 0 is 0, 1e0, 1e3 errors/s; lane 1 always 0.
  const svg = laneRateChart({
    title: 'rx <a>',
    phases,
    points: [0, 50, 100].map((tS, i) => ({ node: 'n', tS, phase: 'soak-idle', laneRates: [[0, 1, 1000][i]!, 0], nicTempC: 50 + i * 10 })),
  });

  it('puts zero on its own line below the lowest decade and spaces decades evenly', () => {
    const [zero, one, thousand] = circles(svg, 'lane-0');
    const lane1 = circles(svg, 'lane-1');
    expect(lane1.map((p) => p.cy)).toEqual([zero!.cy, zero!.cy, zero!.cy]);
    expect(zero!.cy).toBeGreaterThan(one!.cy); // SVG y grows downwards
    // axis runs 1e0..1e3: the 1e0 point sits 12 px above the zero line, 1e3 at the top of the plot
    expect(zero!.cy - one!.cy).toBeCloseTo(12, 1);
    expect(svg).toContain('>1e0</text>');
    expect(svg).toContain('>1e3</text>');
    expect(svg).toContain('>0</text>');
    expect(thousand!.cy).toBeLessThan(one!.cy);
    expect([zero!.cx, one!.cx, thousand!.cx]).toEqual([52, 354, 656]); // 52 + t/100 x (700 - 52 - 44)
  });

  it('draws the temperature on its own axis, shades the phase and escapes the title', () => {
    expect(svg).toContain('class="series temp"');
    expect(svg).toContain('>70</text>');
    expect(svg).toContain('<rect class="phase"');
    expect(svg).toContain('rx &lt;a&gt;');
  });

  it('says "no data" for an empty series', () => {
    expect(throughputChart({ title: 'T', points: [], phases })).toContain('T: no data');
  });
});

describe('bucketMax', () => {
  it('keeps the peak of each bucket', () => {
    const series = Array.from({ length: 1000 }, (_, i) => ({ tS: i, value: i === 437 ? 1e7 : 1 }));
    const out = bucketMax(series, 1000, 100);
    expect(out).toHaveLength(100);
    expect(out[43]).toEqual({ tS: 430, value: 1e7 });
    expect(out.filter((p) => p.value === 1)).toHaveLength(99);
  });
});

describe('writeFileAtomic', () => {
  it('replaces the target in one step and leaves no temp file', async () => {
    const dir = tempRoot();
    const p = join(dir, 'x.csv');
    writeFileSync(p, 'old');
    await writeFileAtomic(p, 'new', 0o600);
    expect(readFileSync(p, 'utf8')).toBe('new');
    expect(statSync(p).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['x.csv']);
  });

  it('cleans up its temp file when the rename fails', async () => {
    const dir = tempRoot();
    const target = join(dir, 'sub');
    await writeFileAtomic(join(dir, 'keep'), 'k');
    // renaming a file over a non-empty directory fails
    mkdirSync(join(target, 'inner'), { recursive: true });
    await expect(writeFileAtomic(target, 'x')).rejects.toThrow();
    expect(readdirSync(dir).sort()).toEqual(['keep', 'sub']);
  });
});
