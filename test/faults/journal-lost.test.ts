// Faults in the middle of a run (#32 item 5): the journal deleted 25 minutes in, the run directory no longer writable.
// Before, the run spent the whole procedure writing into a deleted file (or a directory it could not finish in), then
// exited 2 with no record; now the writer notices at the next line (fstat: no link left) or checkpoint (the directory),
// the loads are stopped, the run ends ERROR journal-write within one sampling interval, and the journal (rescued from
// the open fd) and record.json are written to the run directory, else to the fallback directory the result names.
import { fstatSync, fsyncSync, mkdtempSync, readFileSync, readlinkSync, renameSync, unlinkSync, writeFileSync, writeSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JournalIo } from '../../src/run/journal.js';
import { readJournal } from '../../src/run/journal.js';
import { buildRecord } from '../../src/run/record-builder.js';
import { journalBroke } from '../../src/cli/run-command.js';
import type { CliIo } from '../../src/cli/io.js';
import { labRun } from './lab-run.js';

// The journal's real file calls, with `at` called once when the first line at or past `afterS` is written.
// (`afterS` a predicate: at the first line written after one it accepts.)
function faultAt(
  afterS: number | ((line: { tS?: number; what?: string }) => boolean),
  at: (fd: number, tS: number) => void,
  extra: Partial<JournalIo> = {},
): JournalIo & { firedAtS: number | null } {
  let armed = false;
  const io = {
    firedAtS: null as number | null,
    writeSync(fd: number, buf: Buffer, off: number, len: number): number {
      const line = JSON.parse(buf.subarray(off, off + len).toString('utf8')) as { tS?: number; what?: string };
      const tS = line.tS;
      if (typeof afterS === 'function') {
        if (armed && io.firedAtS === null && tS !== undefined) {
          io.firedAtS = tS;
          at(fd, tS);
        }
        armed ||= afterS(line);
      } else if (io.firedAtS === null && tS !== undefined && tS >= afterS) {
        io.firedAtS = tS;
        at(fd, tS);
      }
      return writeSync(fd, buf, off, len);
    },
    fsyncSync: (fd: number) => fsyncSync(fd),
    fstatSync: (fd: number) => fstatSync(fd),
    ...extra,
  };
  return io;
}
// A CLI io capturing stderr.
function testIo(): { io: CliIo; err: () => string } {
  let err = '';
  const io: CliIo = { stdout: () => undefined, stderr: (s) => void (err += s), readStdin: async () => '', isTTY: false, cwd: process.cwd(), env: {} };
  return { io, err: () => err };
}
const pathOf = (fd: number) => readlinkSync(`/proc/self/fd/${fd}`).replace(/ \(deleted\)$/, '');

let rescue: string;
const saved = process.env['CABLEQUAL_RESCUE_DIR'];
beforeAll(() => {
  rescue = mkdtempSync(join(tmpdir(), 'cq-rescue-'));
  process.env['CABLEQUAL_RESCUE_DIR'] = rescue;
});
afterAll(() => {
  if (saved === undefined) delete process.env['CABLEQUAL_RESCUE_DIR'];
  else process.env['CABLEQUAL_RESCUE_DIR'] = saved;
});

describe('the journal lost mid-run', { timeout: 120_000 }, () => {
  // The journal went 25 minutes into the burn-in; the quick protocol's loaded soak takes the same path in a
  // fraction of the time (the fast tier): deleted 150 s in, in the loaded soak.
  it('deleted mid-soak: ERROR journal-write at the next line, loads stopped, journal and record rescued in the run directory', async () => {
    const io = faultAt(150, (fd) => unlinkSync(pathOf(fd)));
    const r = await labRun({ scenario: 'good-qsfp56', journalIo: io });
    expect(io.firedAtS).not.toBeNull();
    expect(r.record.outcome).toBe('ERROR');
    expect(r.record.reasons.map((x) => [x.rule, x.value])).toEqual([['journal-write', 'ENOENT']]);
    expect(r.record.reasons[0]!.message).toMatch(/journal\.jsonl: ENOENT \(the journal file was deleted while the run was writing it\)$/);
    for (const n of r.lab.nodes) expect(r.lab.processes(n)).toEqual([]);
    expect(r.rescuedFrom).toBeUndefined();
    // Rescued: every line written before the deletion is back in the run directory, then the cause and the end.
    const contents = readJournal(join(r.runDir, 'journal.jsonl'));
    expect(contents.chain?.status).toBe('intact');
    const end = contents.lines.at(-1)!;
    expect(end.type).toBe('run-end');
    // Within one sampling interval (1 s of the run's own, virtual, clock) of the line the deletion was noticed at.
    expect(end.tS! - io.firedAtS!).toBeLessThanOrEqual(1);
    expect(contents.lines.filter((l) => l.type === 'phase-start').at(-1)?.phase).toBe('soak-loaded');
    expect(contents.lines.filter((l) => l.type === 'sample').length).toBeGreaterThan(2 * 120);
    expect(JSON.parse(readFileSync(join(r.runDir, 'record.json'), 'utf8'))).toMatchObject({ outcome: 'ERROR', reasons: [{ rule: 'journal-write' }] });
    // A later grade says the same, never "controller stopped".
    expect(buildRecord(contents, { journalFile: 'journal.jsonl', journalBytes: 0 }).reasons.map((x) => x.rule)).toEqual(['journal-write']);
    // The CLI's end of it: exit 3, one line naming where the record and the run report are.
    const t = testIo();
    expect(await journalBroke(r, t.io)).toBe(3);
    // (Without a lab key the run report is UNSIGNED, said first; the ERROR line is the last.)
    expect(t.err().trimEnd().split('\n').at(-1)).toMatch(
      /^cablequal: ERROR: cannot write the journal .*ENOENT .*; loads stopped; journal, record and run report in /,
    );
    expect(existsSync(join(r.runDir, 'run-report.html'))).toBe(true);
  });

  it('deleted just after the raw ethtool -S dumps at a phase start: ERROR journal-write, even where the last dump counted a fault no sample could show', async () => {
    const io = faultAt(
      (l) => /^soak-idle-start:ethtool-stats:/.test(l.what ?? ''),
      (fd) => unlinkSync(pathOf(fd)),
    );
    const r = await labRun({ scenario: 'good-qsfp56', journalIo: io });
    expect(r.record.reasons.map((x) => [x.rule, x.value])).toEqual([['journal-write', 'ENOENT']]);
    // The sped-up lab of scripts/adversarial.ts ("faults mid-run") counted a lane error between the last sample and
    // that dump; made so here (constructed: one lane counter of the last dump raised by one). With no sample after
    // the dump the raw-dump check would call it the samples disagreeing with the node; the journal's own write
    // failure is the cause, and the verdict says that.
    // (Read as an unchained journal: the edit below would break the chain, which is not what is shown here.)
    const lines = readJournal(join(r.runDir, 'journal.jsonl')).lines.map((l) => {
      const o = { ...l };
      delete o['prev'];
      delete o['chain'];
      return o;
    });
    const dump = lines.findLast((l) => l.type === 'raw' && /ethtool-stats:/.test(String(l['what'])))!;
    dump['stdout'] = String(dump['stdout']).replace(/rx_err_lane_0_phy: (\d+)/, (_m, v: string) => `rx_err_lane_0_phy: ${Number(v) + 1}`);
    const regraded = buildRecord({ lines, truncatedTail: false, badLines: [] }, { journalFile: 'journal.jsonl', journalBytes: 0 });
    expect(regraded.reasons.map((x) => x.rule)).toEqual(['journal-write']);
    // The same journal without its write failure: the check still holds it to the node's count.
    const honest = lines.filter((l) => !(l.type === 'setup-error'));
    expect(buildRecord({ lines: honest, truncatedTail: false, badLines: [] }, { journalFile: 'journal.jsonl', journalBytes: 0 }).reasons[0]!.rule).toBe(
      'journal-raw-mismatch',
    );
  });

  it('the run directory unwritable (and then gone): ERROR at the next line, journal and record in the fallback directory the result names', async () => {
    let broken: string | null = null;
    const io = faultAt(
      120,
      (fd) => {
        // The run directory replaced by a file: nothing more can be written there (as root, a chmod would not stop us).
        const dir = pathOf(fd).replace(/\/journal\.jsonl$/, '');
        renameSync(dir, `${dir}.moved`);
        writeFileSync(dir, 'not a directory\n');
        broken = dir;
      },
      {
        dirWritable: (dir: string) => {
          if (broken !== null && dir === broken) throw Object.assign(new Error(`EACCES: permission denied, access '${dir}'`), { code: 'EACCES' });
        },
      },
    );
    const r = await labRun({ scenario: 'good-qsfp56', journalIo: io });
    expect(r.record.outcome).toBe('ERROR');
    expect(r.record.reasons.map((x) => [x.rule, x.value])).toEqual([['journal-write', 'EACCES']]);
    expect(r.record.reasons[0]!.message).toMatch(/the run directory .* is no longer writable/);
    for (const n of r.lab.nodes) expect(r.lab.processes(n)).toEqual([]);
    expect(r.rescuedFrom).toBe(broken);
    expect(r.runDir).toBe(join(rescue, 'run1'));
    const contents = readJournal(join(r.runDir, 'journal.jsonl'));
    expect(contents.lines.at(-1)!.tS! - io.firedAtS!).toBeLessThanOrEqual(1);
    expect(JSON.parse(readFileSync(join(r.runDir, 'record.json'), 'utf8'))).toMatchObject({
      outcome: 'ERROR',
      reasons: [{ rule: 'journal-write', value: 'EACCES' }],
    });
    const t = testIo();
    expect(await journalBroke(r, t.io)).toBe(3);
    expect(t.err()).toContain(`the run directory ${broken} could not take them: journal, record and run report are in ${r.runDir}`);
  });
});
