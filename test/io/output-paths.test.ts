// #32 item 4: a file is written only to a new path or over an existing regular file. `compare --out` and
// `regress --junit` aimed at a FIFO, a character device or a symbolic link replaced it with a regular file (as root,
// `--out /dev/null` would have replaced /dev/null); now exit 2 naming it, before any work, and the path is left as it was.
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { checkOutputPath, writeFileAtomic, writeFileAtomicSync } from '../../src/io/atomic-write.js';
import { runCli } from '../helpers/cli.js';
import { unpackFixtureRun } from '../helpers/journals-v1.js';

const root = mkdtempSync(join(tmpdir(), 'cq-outpaths-'));
const run = join(root, 'run');
unpackFixtureRun('journals-v2', 'good-qsfp56-quick', run);
const fifo = join(root, 'out.fifo');
expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
const target = join(root, 'precious.txt');
writeFileSync(target, 'keep me\n');
const link = join(root, 'link.csv');
symlinkSync(target, link);
const env = { CABLEQUAL_DB: 'off' };
// A character device of the test's own (mknod as root; else /dev/null, which a non-root writer cannot replace): were
// the check broken, the run as root would replace this one, never the machine's /dev/null.
const device = spawnSync('mknod', ['-m', '666', join(root, 'null'), 'c', '1', '3']).status === 0 ? join(root, 'null') : '/dev/null';

// The path is what it was: a FIFO still a FIFO, a link still the same link, its target untouched.
function unchanged(): void {
  expect(lstatSync(fifo).isFIFO()).toBe(true);
  expect(lstatSync(link).isSymbolicLink()).toBe(true);
  expect(readlinkSync(link)).toBe(target);
  expect(readFileSync(target, 'utf8')).toBe('keep me\n');
}

describe('output paths (#32 item 4)', () => {
  const cases: [string, string, string][] = [
    ['a FIFO', fifo, 'a pipe'],
    ['a character device', device, 'a device'],
    ['a symbolic link', link, 'a symbolic link'],
  ];
  for (const [what, path, kind] of cases) {
    it(`compare --out ${what}: exit 2 naming it, nothing written`, async () => {
      const r = await runCli(['compare', run, '--out', path], { env, cwd: root });
      expect(r.code).toBe(2);
      expect(r.err.trimEnd().split('\n')).toEqual([
        `cablequal: --out ${path}: ${kind}, not a regular file: cablequal writes only a new file or over a regular one; give another path`,
      ]);
      expect(r.out).toBe('');
      unchanged();
    });

    it(`regress --junit ${what}: exit 2 naming it, nothing written`, async () => {
      const r = await runCli(['regress', '--baseline', run, run, '--junit', path], { env, cwd: root });
      expect(r.code).toBe(2);
      expect(r.err.trimEnd().split('\n')).toEqual([
        `cablequal: --junit ${path}: ${kind}, not a regular file: cablequal writes only a new file or over a regular one; give another path`,
      ]);
      unchanged();
    });
  }

  it('a new path and an existing regular file are written (the by-part file beside it too)', async () => {
    writeFileSync(join(root, 'old.csv'), 'old\n');
    const r = await runCli(['compare', run, '--out', join(root, 'old.csv')], { env });
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(join(root, 'old.csv'), 'utf8')).toMatch(/^run_id,/);
    expect(readFileSync(join(root, 'old-by-part.csv'), 'utf8')).toMatch(/^part_number,/);
  });

  it('every atomic writer refuses the same paths, naming them (the run directory`s record.json, the CSVs)', async () => {
    await expect(writeFileAtomic(fifo, 'x')).rejects.toEqual(
      new UsageError(`${fifo}: a pipe, not a regular file: cablequal writes only a new file or over a regular one; give another path`),
    );
    expect(() => writeFileAtomicSync(link, 'x')).toThrow(/link\.csv: a symbolic link, not a regular file/);
    expect(() => checkOutputPath(root, '--out x')).toThrow(
      new UsageError('--out x: a directory, not a regular file: cablequal writes only a new file or over a regular one; give another path'),
    );
    unchanged();
  });
});
