import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJournal } from '../../src/run/journal.js';

describe('journal streaming', () => {
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
});
