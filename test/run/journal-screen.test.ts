// A journal is untrusted when re-read: any value of any line may be replaced, deleted or nested deep, and a record
// is still built (the unusable lines listed), never a crash. Real journals (rules version 1 fixtures) mutated by
// fast-check; the run-start line keeps what a record cannot be built without (run id, protocol).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import type { JournalContents, JournalLine } from '../../src/run/journal.js';
import { screenJournal } from '../../src/run/journal-shape.js';
import { buildRecord } from '../../src/run/record-builder.js';
import { buildTimeseries } from '../../src/run/journal-series.js';

const V1 = join(process.cwd(), 'test', 'fixtures', 'journals-v1');
const load = (name: string): JournalLine[] =>
  gunzipSync(readFileSync(join(V1, name, 'journal.jsonl.gz')))
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as JournalLine];
      } catch {
        return []; // the killed run's torn last line
      }
    });
const JOURNALS = ['good-qsfp56-quick', 'failing-clone-quick', 'killed-quick', 'throttled-nic-quick'].map(load);
const ORIGINAL = JOURNALS.map((lines) => buildRecord({ lines, truncatedTail: false, badLines: [] }, { journalFile: 'journal.jsonl', journalBytes: 1 }).outcome);

type Path = (string | number)[];
function pathsOf(v: unknown, at: Path = [], out: Path[] = []): Path[] {
  if (at.length) out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => pathsOf(x, [...at, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) pathsOf(x, [...at, k], out);
  return out;
}

const deep = (n: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = [v];
  return v;
};
const ODD = [null, {}, [], '', 'x', -1, 0, 1e308, true, [null], { node: null }, deep(200)];

describe('screened journals never crash the record builder', { timeout: 120_000 }, () => {
  it('the fixtures screen clean, and grade as they were recorded', () => {
    expect(ORIGINAL).toEqual(['PASS', 'FAIL', 'ABORTED', 'ERROR']);
    for (const lines of JOURNALS) expect(screenJournal({ lines, truncatedTail: false, badLines: [] }).badLines).toEqual([]);
  });

  it('any value of any line replaced or deleted (run-start kept whole): a record, the bad lines listed', () => {
    fc.assert(
      fc.property(
        fc.nat(JOURNALS.length - 1),
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat(ODD.length), fc.boolean()), { minLength: 1, maxLength: 6 }),
        (j, edits) => {
          const lines = structuredClone(JOURNALS[j]!);
          for (const [li, pi, oi, del] of edits) {
            const at = 1 + (li % (lines.length - 1)); // never the run-start line
            const paths = pathsOf(lines[at]).filter((p) => p[0] !== 'type');
            if (!paths.length) continue;
            const path = paths[pi % paths.length]!;
            let parent = lines[at] as Record<string | number, unknown>;
            for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
            const last = path[path.length - 1]!;
            if (del || oi === ODD.length) {
              if (Array.isArray(parent)) parent.splice(last as number, 1);
              else delete parent[last];
            } else parent[last] = structuredClone(ODD[oi]);
          }
          const contents: JournalContents = { lines, truncatedTail: false, badLines: [] };
          const record = buildRecord(contents, { journalFile: 'journal.jsonl', journalBytes: 1 });
          expect(['PASS', 'MARGINAL', 'FAIL', 'ERROR', 'ABORTED']).toContain(record.outcome);
          // A journal of a run that did not PASS never grades PASS (or MARGINAL) once mutated (#17).
          if (ORIGINAL[j] !== 'PASS') expect(['FAIL', 'ERROR', 'ABORTED'], `${ORIGINAL[j]} ${JSON.stringify(edits)}`).toContain(record.outcome);
          expect(() => JSON.stringify(record)).not.toThrow();
          void buildTimeseries(contents);
          for (const p of record.journal.problems ?? []) expect(p.line).toBeGreaterThan(1);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('the run-start line mutated: a record, or no readable run-start (grade refuses it), or the protocol refused; nothing else', () => {
    fc.assert(
      fc.property(fc.nat(JOURNALS.length - 1), fc.nat(), fc.nat(ODD.length), fc.boolean(), (j, pi, oi, del) => {
        const lines = structuredClone(JOURNALS[j]!);
        const paths = pathsOf(lines[0]).filter((p) => p[0] !== 'type');
        const path = paths[pi % paths.length]!;
        let parent = lines[0] as Record<string | number, unknown>;
        for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
        const last = path[path.length - 1]!;
        if (del || oi === ODD.length) {
          if (Array.isArray(parent)) parent.splice(last as number, 1);
          else delete parent[last];
        } else parent[last] = structuredClone(ODD[oi]);
        const screened = screenJournal({ lines, truncatedTail: false, badLines: [] });
        if (!screened.lines.some((l) => l.type === 'run-start')) return; // grade says: no readable run-start line
        try {
          const record = buildRecord(screened, { journalFile: 'journal.jsonl', journalBytes: 1 });
          expect(() => JSON.stringify(record)).not.toThrow();
        } catch (e) {
          expect(e).toBeInstanceOf(UsageError); // the recorded protocol text no longer parses: named in one line
        }
      }),
      { numRuns: 300 },
    );
  });
});
