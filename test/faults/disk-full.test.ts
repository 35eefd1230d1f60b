import { existsSync, readFileSync, writeSync, fsyncSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JournalWriteError, JournalWriter, readJournal, type JournalIo } from '../../src/run/journal.js';
import { buildRecord } from '../../src/run/record-builder.js';
import { labRun } from './lab-run.js';

// A disk that fills up after `limit` bytes of journal: the write that crosses it lands partly, then ENOSPC.
function fillingDisk(limit: number): JournalIo & { written: number } {
  const io = {
    written: 0,
    writeSync(fd: number, buf: Buffer, off: number, len: number): number {
      const room = limit - io.written;
      if (room <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });
      const n = writeSync(fd, buf, off, Math.min(len, room));
      io.written += n;
      return n;
    },
    fsyncSync: (fd: number) => fsyncSync(fd),
  };
  return io;
}

describe('disk full while writing the journal', { timeout: 60_000 }, () => {
  it('JournalWriter: the failing write becomes a JournalWriteError with the errno, later appends fail the same way', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const p = join(mkdtempSync(join(tmpdir(), 'cq-full-')), 'journal.jsonl');
    const j = new JournalWriter(p, Date.now, 5000, fillingDisk(40 + 74));
    j.append({ type: 'a', tS: 1 }); // 21 bytes, and 74 of its hash chain (,"prev":"<64 hex>")
    expect(() => j.append({ type: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', tS: 2 })).toThrow(JournalWriteError);
    expect(j.failure?.errno).toBe('ENOSPC');
    expect(() => j.append({ type: 'c', tS: 3 })).toThrow(/ENOSPC/);
    expect(j.stats.lines).toBe(1);
    j.close();
    const r = readJournal(p);
    expect(r.lines.map((l) => l.type)).toEqual(['a']);
    expect(r.truncatedTail).toBe(true); // 19 bytes of the second line landed: torn, dropped by readers
  });

  it('mid-soak: ERROR journal-write with ENOSPC, loads stopped on both nodes, no PASS/FAIL anywhere', async () => {
    // The quick protocol's journal passes 1.2 MB early in the loaded soak (raw ethtool snapshots + a sample per node per second).
    const disk = fillingDisk(1_200_000);
    const r = await labRun({ scenario: 'good-qsfp56', journalIo: disk });
    expect(r.record.outcome).toBe('ERROR');
    expect(r.record.reasons).toHaveLength(1);
    expect(r.record.reasons[0]!.rule).toBe('journal-write');
    expect(r.record.reasons[0]!.value).toBe('ENOSPC');
    expect(r.record.reasons[0]!.message).toMatch(/^cannot write the journal .*journal\.jsonl: ENOSPC/);
    expect(r.record.decidedAtS).toBeNull();
    for (const n of r.lab.nodes) expect(r.lab.processes(n)).toEqual([]);
    // The journal is rescued (#32 item 5): every complete line the full disk took, then the cause and the run's end,
    // so that a re-grade says what the run said (ERROR journal-write with ENOSPC), never "controller stopped". (The
    // full disk here is the writer's alone: the run directory took the rescued copy; a disk full for every write puts it
    // in the fallback directory, test/faults/journal-lost.test.ts.)
    const contents = readJournal(join(r.runDir, 'journal.jsonl'));
    expect(contents.lines.filter((l) => l.type === 'phase-start').at(-1)?.phase).toBe('soak-loaded');
    expect(contents.lines.slice(-2).map((l) => l.type)).toEqual(['setup-error', 'run-end']);
    expect(contents.truncatedTail).toBe(false);
    expect(contents.chain?.status).toBe('intact');
    const regraded = buildRecord(contents, { journalFile: 'journal.jsonl', journalBytes: 0 });
    expect([regraded.outcome, regraded.reasons.map((x) => `${x.rule} ${x.value}`)]).toEqual(['ERROR', ['journal-write ENOSPC']]);
    // record.json was written whole (it is not on the full journal's disk here) and says ERROR.
    const rec = JSON.parse(readFileSync(join(r.runDir, 'record.json'), 'utf8')) as { outcome: string; reasons: { rule: string }[] };
    expect(rec.outcome).toBe('ERROR');
    expect(rec.reasons.map((x) => x.rule)).toEqual(['journal-write']);
    expect(existsSync(join(r.runDir, 'certificate.html'))).toBe(false);
  });
});
