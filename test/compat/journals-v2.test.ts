// Journals and certificates written with rules version 2 keep grading and verifying: a lab holds them for years.
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'journals-v2');
const RUNS = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

// A run directory as the old version left it: the journal unpacked, its record and certificate beside it.
function unpack(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `cq-v2-${name}-`));
  cpSync(join(FIXTURES, name), dir, { recursive: true });
  writeFileSync(join(dir, 'journal.jsonl'), gunzipSync(readFileSync(join(FIXTURES, name, 'journal.jsonl.gz'))));
  return dir;
}

const recorded = (name: string): string => (JSON.parse(readFileSync(join(FIXTURES, name, 'record.json'), 'utf8')) as { outcome: string }).outcome;

describe('journals written by rules version 2', () => {
  it('covers every outcome', () => {
    expect(new Set(RUNS.map(recorded))).toEqual(new Set(['PASS', 'MARGINAL', 'FAIL', 'ERROR', 'ABORTED']));
  });

  it.each(RUNS)('%s grades to the outcome it was recorded with', async (name) => {
    const dir = unpack(name);
    const r = await runCli(['grade', dir, '--json']);
    expect(r.err).toBe('');
    expect(JSON.parse(r.out).outcome).toBe(recorded(name));
  });

  const certified = RUNS.filter((n) => existsSync(join(FIXTURES, n, 'certificate.json')));
  it.each(certified)('%s: its certificate verifies against the pinned key that signed it', async (name) => {
    const dir = unpack(name);
    const r = await runCli(['verify', join(dir, 'certificate.json'), '--public-key', join(FIXTURES, 'lab-key.pub.pem')]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^OK: /m);
  });
});
