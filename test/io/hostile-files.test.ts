// #32 item 3: a record, journal, certificate or state file that is not what it claims to be (a FIFO nobody writes
// to, /dev/zero, a journal over its bound or with a line that never ends, a certificate holding 1e999) is refused
// with one line naming it, at once: never a hang, a stack trace or a string too long for V8. Over a real signed
// run of rules version 2 (test/fixtures/journals-v2/good-qsfp56-quick).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { INPUT_LIMITS } from '../../src/io/read-input.js';
import { canonicalJson } from '../../src/report/canonical-json.js';
import { MAX_JOURNAL_LINE, readJournal } from '../../src/run/journal.js';
import { planAuth } from '../../src/transport/ssh-auth.js';
import { runCli } from '../helpers/cli.js';
import { unpackFixtureRun } from '../helpers/journals-v1.js';

const V2 = join(process.cwd(), 'test', 'fixtures', 'journals-v2');
const KEY = join(V2, 'lab-key.pub.pem');
const root = mkdtempSync(join(tmpdir(), 'cq-hostile-files-'));
const env = { CABLEQUAL_LAB_KEY: join(root, 'none', 'lab-key.pem'), CABLEQUAL_DB: 'off' };

let copies = 0;
const runCopy = (): string => unpackFixtureRun('journals-v2', 'good-qsfp56-quick', join(root, `run-${copies++}`));
function fifoAt(path: string): string {
  rmSync(path, { force: true });
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
  return path;
}
// stderr without yargs' usage hint, and never a stack trace or an internal error.
function oneLine(err: string): string {
  expect(err).not.toMatch(/internal error|\n\s+at .+:\d+:\d+/);
  const lines = err.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe('a record.json that is a FIFO is refused at once (#32 item 3)', () => {
  it('db import ends with exit 2 naming the pipe (it waited 12 minutes for a writer before)', async () => {
    const dir = runCopy();
    fifoAt(join(dir, 'record.json'));
    const r = await runCli(['db', 'import', dir, '--db', join(root, 'store.db')], { env, cwd: root });
    expect(r.code).toBe(2);
    expect(oneLine(r.err)).toBe(`warning: skipped ${basename(dir)}: ${join(dir, 'record.json')}: a pipe, not a regular file`);
    expect(r.out).toMatch(/1 run directory: 0 added, 0 updated, 0 unchanged, 1 skipped/);
  });

  // The store re-grades the journal (#32 item 2): a journal that is a pipe cannot be re-checked, so the run is skipped
  // naming it, record.json whole or not, and neither pipe is read.
  it('db import of a run whose journal is a FIFO and record.json is whole reads neither pipe and skips it', async () => {
    const dir = runCopy();
    fifoAt(join(dir, 'journal.jsonl'));
    const r = await runCli(['db', 'import', dir, '--db', join(root, 'store2.db')], { env, cwd: root });
    expect(r.code).toBe(2);
    expect(oneLine(r.err)).toBe(`warning: skipped ${basename(dir)}: ${join(dir, 'journal.jsonl')}: a pipe, not a regular file`);
    expect(r.out).toMatch(/1 run directory: 0 added, 0 updated, 0 unchanged, 1 skipped/);
  });

  it('regress and compare name the pipe as an unreadable run, and go on', async () => {
    const base = runCopy();
    const dir = runCopy();
    fifoAt(join(dir, 'record.json'));
    const r = await runCli(['regress', '--baseline', base, dir], { env });
    expect(r.code).toBe(3);
    expect(r.out + r.err).toContain(`${join(dir, 'record.json')}: a pipe, not a regular file`);
    const c = await runCli(['compare', base, dir, '--out', join(root, 'c.csv')], { env });
    expect(c.code, c.err).toBe(0);
    expect(c.err).toContain(`skipped ${dir}: ${join(dir, 'record.json')}: a pipe, not a regular file`);
  });

  it('/dev/zero as record.json (it died with std::bad_alloc) is a device', async () => {
    const dir = runCopy();
    rmSync(join(dir, 'record.json'));
    symlinkSync('/dev/zero', join(dir, 'record.json'));
    const r = await runCli(['db', 'import', dir, '--db', join(root, 'store3.db')], { env });
    expect(r.code).toBe(2);
    expect(oneLine(r.err)).toMatch(/record\.json: a device, not a regular file$/);
  });
});

describe('journals are streamed, bounded, and only regular files (#32 item 3)', () => {
  it('grade and report of a journal that is a FIFO or /dev/zero: exit 2, one line', async () => {
    const dir = runCopy();
    fifoAt(join(dir, 'journal.jsonl'));
    expect((await runCli(['keygen', join(root, 'keys')], { env })).code).toBe(0);
    for (const cmd of ['grade', 'report']) {
      const r = await runCli([cmd, dir], { env: { ...env, CABLEQUAL_LAB_KEY: join(root, 'keys', 'lab-key.pem') } });
      expect(r.code).toBe(2);
      expect(oneLine(r.err)).toMatch(/journal\.jsonl: not a file|journal\.jsonl: a pipe, not a regular file/);
    }
    rmSync(join(dir, 'journal.jsonl'));
    symlinkSync('/dev/zero', join(dir, 'journal.jsonl'));
    expect(() => readJournal(join(dir, 'journal.jsonl'))).toThrow(new UsageError(`${join(dir, 'journal.jsonl')}: a device, not a regular file`));
  });

  it('a journal over the bound is refused before a byte is parsed, naming it and the bound', () => {
    const dir = runCopy();
    const path = join(dir, 'journal.jsonl');
    const bytes = readFileSync(path).length;
    // The bound given small (the real one, 768 MiB, is held the same way by fstat: a sparse file below shows it).
    expect(() => readJournal(path, { maxBytes: bytes - 1 })).toThrow(
      new UsageError(`${path}: ${bytes} bytes, more than the ${bytes - 1} bytes a journal file may hold`),
    );
    expect(readJournal(path, { maxBytes: bytes }).lines.length).toBeGreaterThan(100);
    const big = join(root, 'sparse.jsonl');
    writeFileSync(big, '');
    truncateSync(big, INPUT_LIMITS.journal.bytes + 1); // sparse: no disk used, no byte read
    expect(() => readJournal(big)).toThrow(new UsageError(`${big}: ${INPUT_LIMITS.journal.bytes + 1} bytes, more than the 768 MiB a journal file may hold`));
  });

  it('a 1 GiB journal: grade exits 2 with one line (it crashed with "Cannot create a string longer than 0x1fffffe8")', async () => {
    const dir = runCopy();
    truncateSync(join(dir, 'journal.jsonl'), 1 << 30); // the journal, then a gigabyte of zeros (sparse)
    const r = await runCli(['grade', dir], { env });
    expect(r.code).toBe(2);
    expect(oneLine(r.err)).toBe(`cablequal: ${join(dir, 'journal.jsonl')}: ${1 << 30} bytes, more than the 768 MiB a journal file may hold`);
  });

  it('a line longer than MAX_JOURNAL_LINE is one bad line, skipped without being held; the lines after it are read', () => {
    const dir = runCopy();
    const path = join(dir, 'journal.jsonl');
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    const before = readJournal(path).lines.length;
    const long = `{"type":"note","text":"${'x'.repeat(MAX_JOURNAL_LINE + 10)}"}`;
    writeFileSync(path, [lines[0], long, ...lines.slice(1)].join('\n') + '\n');
    const c = readJournal(path);
    expect(c.lines.length).toBe(before);
    expect(c.problems).toEqual([{ line: 2, reason: `longer than ${MAX_JOURNAL_LINE} bytes: not a journal line cablequal wrote` }]);
    expect(c.lineNos![1]).toBe(3); // the line after it keeps its file line number
    expect(c.truncatedTail).toBe(false);
    // And as the last line, never ended: the same one bad line, not a torn tail.
    writeFileSync(path, [...lines, long.slice(0, -2)].join('\n'));
    const d = readJournal(path);
    expect(d.lines.length).toBe(before);
    expect(d.problems).toEqual([{ line: lines.length + 1, reason: `longer than ${MAX_JOURNAL_LINE} bytes: not a journal line cablequal wrote` }]);
  });
});

describe('a certificate number that is not finite is NOT VERIFIED (#32 item 3)', () => {
  it('1e999 in the signed body: exit 1 naming the field, no stack trace (it was exit 70)', async () => {
    const dir = runCopy();
    const cert = join(dir, 'certificate.json');
    const doc = JSON.parse(readFileSync(cert, 'utf8')) as { body: { summary: Record<string, unknown> } };
    doc.body.summary['crcErrors'] = 7357; // a placeholder the canonical form spells once
    writeFileSync(cert, `${canonicalJson(doc)}\n`.replace('"crcErrors":7357', '"crcErrors":1e999'));
    const r = await runCli(['verify', cert, '--public-key', KEY], { env });
    expect(r.code).toBe(1);
    expect(r.err).not.toMatch(/internal error|\n\s+at /);
    expect(r.err.trimEnd().split('\n')).toEqual([
      `problem: ${cert}: body.summary.crcErrors: a number that is not finite: not a certificate cablequal wrote`,
      expect.stringMatching(/^NOT VERIFIED: /),
    ]);
    // -1e999 in an array too.
    writeFileSync(cert, `${canonicalJson(doc)}\n`.replace('"crcErrors":7357', '"crcErrors":[1,-1e999]'));
    const s = await runCli(['verify', cert, '--public-key', KEY], { env });
    expect(s.code).toBe(1);
    expect(s.err).toContain('body.summary.crcErrors[1]: a number that is not finite');
  });
});

describe('ssh files are read the same way (#32 item 3)', () => {
  it('an identity file that is a FIFO is named in the notes, never waited on; a missing one is skipped quietly', () => {
    const f = fifoAt(join(root, 'id_fifo'));
    const plan = planAuth({ username: 'u', identityFiles: [f, join(root, 'id_missing')], agentSock: null });
    expect(plan.keys).toEqual([]);
    expect(plan.notes).toEqual([`${f}: a pipe, not a regular file`]);
  });
});
