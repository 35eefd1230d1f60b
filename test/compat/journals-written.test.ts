// Journals and certificates written by released versions keep grading and verifying: a lab holds them for years.
// Each folder of a fixture set is a run directory as that version left it (journal.jsonl.gz, its record.json and
// its signed document); its README says how it was made. Version 1's are test/compat/journals-v1.test.ts's.
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const SIGNED = ['certificate.json', 'setup-check.json', 'run-report.json'];

function fixtureSet(set: string, rulesVersion: number, outcomes: string[]) {
  const fixtures = join(import.meta.dirname, '..', 'fixtures', set);
  const runs = readdirSync(fixtures, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  // A run directory as the old version left it: the journal unpacked, its record and signed document beside it.
  const unpack = (name: string): string => {
    const dir = mkdtempSync(join(tmpdir(), `cq-${set}-${name}-`));
    cpSync(join(fixtures, name), dir, { recursive: true });
    writeFileSync(join(dir, 'journal.jsonl'), gunzipSync(readFileSync(join(fixtures, name, 'journal.jsonl.gz'))));
    return dir;
  };
  const record = (name: string) =>
    JSON.parse(readFileSync(join(fixtures, name, 'record.json'), 'utf8')) as { outcome: string; reasons: { rule: string }[]; rules?: { version: number } };

  describe(`journals written by rules version ${rulesVersion} (test/fixtures/${set})`, () => {
    it('covers every outcome, each recorded by that version', () => {
      expect(new Set(runs.map((n) => record(n).outcome))).toEqual(new Set(outcomes));
      for (const n of runs) expect(record(n).rules?.version ?? 2, n).toBe(rulesVersion);
    });

    it.each(runs)('%s grades to the outcome and the rules it was recorded with', async (name) => {
      const r = await runCli(['grade', unpack(name), '--json']);
      expect(r.err).toBe('');
      const graded = JSON.parse(r.out) as { outcome: string; reasons: { rule: string }[] };
      expect(graded.outcome).toBe(record(name).outcome);
      if (rulesVersion >= 3) expect(graded.reasons.map((x) => x.rule)).toEqual(record(name).reasons.map((x) => x.rule));
    });

    const signed = runs.flatMap((n) => SIGNED.filter((f) => existsSync(join(fixtures, n, f))).map((f) => [n, f] as const));
    it.each(signed)('%s: its %s verifies against the pinned key that signed it', async (name, file) => {
      const dir = unpack(name);
      const r = await runCli(['verify', join(dir, file), '--public-key', join(fixtures, 'lab-key.pub.pem')]);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/^OK: /m);
    });
  });
}

fixtureSet('journals-v2', 2, ['PASS', 'MARGINAL', 'FAIL', 'ERROR', 'ABORTED']);
fixtureSet('journals-v4', 4, ['PASS', 'MARGINAL', 'FAIL', 'ERROR', 'ABORTED']);
fixtureSet('journals-v5', 5, ['PASS', 'MARGINAL', 'FAIL', 'ERROR', 'ABORTED']);
