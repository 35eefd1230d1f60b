// `cablequal --version` says which cablequal, rules version and journal format; every document a run writes records
// the package version that wrote it (the journal's run-start, record.json, the signed certificate, batch-state.json),
// and the signed certificate carrying it verifies (old ones, without it, keep verifying: test/compat/).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { saveState, type BatchState } from '../../src/batch/state.js';
import { CABLEQUAL_VERSION, JOURNAL_FORMAT_VERSION } from '../../src/domain/version.js';
import { RULES_VERSION } from '../../src/rules/versions.js';
import { runCli } from '../helpers/cli.js';

const ROOT = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const dir = mkdtempSync(join(tmpdir(), 'cq-version-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('cablequal --version', () => {
  it("is package.json's version (a release bumps both), with the rules version and the journal format", async () => {
    expect(CABLEQUAL_VERSION).toBe(pkg.version);
    expect(RULES_VERSION).toBe(5);
    expect(JOURNAL_FORMAT_VERSION).toBe(4);
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag]);
      expect(r).toEqual({ code: 0, out: `cablequal ${pkg.version}\nrules version 5\njournal format 4\n`, err: '' });
    }
  });

  it('belongs to the top level: `run -V` is an unknown option', async () => {
    const r = await runCli(['run', '-V', '--sim', 'good-qsfp56']);
    expect(r.code).toBe(2);
    expect(r.err.split('\n')[0]).toBe('cablequal: run: unknown option "-V"');
  });
});

describe('every document records the version that wrote it', () => {
  it('a signed set-up check: run-start, record.json and certificate body; it verifies against the lab key', async () => {
    const env = { CABLEQUAL_LAB_KEY: join(dir, 'keys', 'lab-key.pem') };
    expect((await runCli(['keygen'], { cwd: dir, env })).code).toBe(0);
    const run = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--seed', '1', '--json'], { cwd: dir, env });
    expect(run.code).toBe(0);
    const runDir = (JSON.parse(run.out) as { runDir: string }).runDir;
    const start = JSON.parse(readFileSync(join(runDir, 'journal.jsonl'), 'utf8').split('\n')[0]!) as Record<string, unknown>;
    expect([start['type'], start['journalFormat'], start['cablequalVersion']]).toEqual(['run-start', 4, pkg.version]);
    const record = JSON.parse(readFileSync(join(runDir, 'record.json'), 'utf8')) as Record<string, unknown>;
    expect([record['cablequalVersion'], record['journalWrittenBy']]).toEqual([pkg.version, pkg.version]);
    const doc = JSON.parse(readFileSync(join(runDir, 'setup-check.json'), 'utf8')) as { body: Record<string, unknown>; signature: string | null };
    expect(doc.body['cablequalVersion']).toBe(pkg.version);
    expect(doc.signature).not.toBeNull();
    const v = await runCli(['verify', join(runDir, 'setup-check.json'), '--public-key', join(dir, 'keys', 'lab-key.pub.pem')], { cwd: dir, env });
    expect(v.code).toBe(0);
  });

  it('batch-state.json', () => {
    const state: BatchState = {
      schema: 'cablequal.batch/1',
      manifest: 'box.csv',
      labels: [],
      pairs: [],
      protocol: 'quick',
      golden: null,
      cables: [],
      goldenDrift: null,
    };
    saveState(join(dir, 'batch'), state);
    expect(JSON.parse(readFileSync(join(dir, 'batch', 'batch-state.json'), 'utf8')).cablequalVersion).toBe(pkg.version);
  });
});
