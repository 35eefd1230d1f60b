import { mkdtempSync, readFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JournalWriter, readJournal } from '../../src/run/journal.js';

describe('journal', () => {
  it('writes one JSON line per append, u64 counters exact', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-journal-'));
    const j = new JournalWriter(join(dir, 'journal.jsonl'));
    j.append({ type: 'sample', tS: 1, big: (1n << 60n) + 1n, small: 5n });
    j.append({ type: 'phase-end', tS: 2 });
    j.close();
    const text = readFileSync(join(dir, 'journal.jsonl'), 'utf8');
    expect(text.split('\n')).toHaveLength(3);
    expect(text).toContain('"big":"1152921504606846977"');
    expect(text).toContain('"small":5');
    expect(j.stats.lines).toBe(2);
    expect(j.stats.bytes).toBe(Buffer.byteLength(text));
  });

  it('drops a torn last line (crash mid-write) and reports it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-journal-'));
    const p = join(dir, 'journal.jsonl');
    const j = new JournalWriter(p);
    j.append({ type: 'sample', tS: 1 });
    j.close();
    appendFileSync(p, '{"type":"sample","tS":2,"cou');
    const r = readJournal(p);
    expect(r.lines.map((l) => l.tS)).toEqual([1]);
    expect(r.truncatedTail).toBe(true);
    expect(r.badLines).toEqual([]);
  });

  it('fsyncs on the wall-clock schedule it is given', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-journal-'));
    let now = 0;
    let syncs = 0;
    const j = new JournalWriter(join(dir, 'j.jsonl'), () => now, 5000);
    const orig = j.sync.bind(j);
    j.sync = () => {
      syncs++;
      orig();
    };
    for (let i = 0; i < 20; i++) {
      now += 1000;
      j.append({ type: 'tick', tS: i });
    }
    expect(syncs).toBe(4); // at 5 s, 10 s, 15 s, 20 s
    j.close();
  });
});
