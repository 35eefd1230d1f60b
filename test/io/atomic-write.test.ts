// A SIGKILL while a report is written leaves a hidden temp file; the next atomic write in that directory removes
// it once its writer is gone and it is older than a minute (a write in progress is never touched).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sweepStaleTemps, writeFileAtomic, writeFileAtomicSync } from '../../src/io/atomic-write.js';

function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
}

describe('stale temp files of killed writers', () => {
  it('are swept by the next write: dead writer and old; a live writer or a fresh file is left alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-atomic-'));
    const old = new Date(Date.now() - 5 * 60_000);
    const dead = `.certificate.html.${deadPid()}.0badc0de.tmp`;
    const fresh = `.summary.csv.${deadPid()}.12345678.tmp`;
    const mine = `.lanes.csv.${process.pid}.abcdef01.tmp`;
    const unrelated = '.hidden-notes.tmp';
    for (const n of [dead, fresh, mine, unrelated]) writeFileSync(join(dir, n), 'half');
    for (const n of [dead, mine, unrelated]) utimesSync(join(dir, n), old, old);
    await writeFileAtomic(join(dir, 'record.json'), '{}\n');
    expect(readdirSync(dir).sort()).toEqual([fresh, mine, unrelated, 'record.json'].sort());
    expect(sweepStaleTemps(dir, Date.now() + 10 * 60_000)).toEqual([fresh]);
    writeFileAtomicSync(join(dir, 'x.json'), '1');
    expect(readFileSync(join(dir, 'x.json'), 'utf8')).toBe('1');
    expect(existsSync(join(dir, mine))).toBe(true);
  });
});
