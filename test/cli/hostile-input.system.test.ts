// The real binary (node bin/cablequal.js, dist/ built by the system tier's setup) under bad input: exit 2 or 3 and one
// line, never a stack trace, exit 70 or a hang. test/cli/hostile-input.test.ts has the same input in-process.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unpackV1 } from '../helpers/journals-v1.js';

const BIN = join(process.cwd(), 'bin', 'cablequal.js');
const dir = mkdtempSync(join(tmpdir(), 'cq-hostile-bin-'));
const bad = JSON.parse(readFileSync(join(process.cwd(), 'protocols', 'quick.json'), 'utf8')) as { earlyStop: Record<string, unknown> };
bad.earlyStop.keepSamplingS = -5;
writeFileSync(join(dir, 'bad.json'), JSON.stringify(bad, null, 2));

describe('hostile CLI input to the real binary: one line, exit code, no stack trace', { timeout: 60_000 }, () => {
  it('the real binary: bad protocol file, exit 2, one line on stderr', () => {
    const r = spawnSync(process.execPath, [BIN, 'run', '--sim', 'good-qsfp56', '--protocol', 'bad.json'], { cwd: dir, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^cablequal: bad\.json: earlyStop\.keepSamplingS: expected [^\n]*got -5\n$/);
    expect(r.stdout).toBe('');
  });

  it('the real binary: --out /proc/x fails at once (no endless mkdir ignoring SIGTERM), exit 2, one line', () => {
    const r = spawnSync(process.execPath, [BIN, 'run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--out', '/proc/x'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.signal).toBeNull(); // not killed by the timeout
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^cablequal: --out: cannot create \/proc\/x: .*\(ENOENT\)\n$/);
  });

  it('the real binary: a bad option is exit 2 with one line and the help hint, not exit 70', () => {
    const r = spawnSync(process.execPath, [BIN, 'sim', 'serve', '--scenario', 'good-qsfp56', '--listen', '99999'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('cablequal: --listen: expected a whole number from 0 to 65534, got "99999"\nRun "cablequal sim serve --help" for usage.\n');
  });

  it('the real binary: ENOSPC while grade writes record.json is one ERROR line naming the file, exit 3, journal untouched', () => {
    const run = unpackV1('good-qsfp56-quick', join(dir, 'full-disk'));
    const journal = readFileSync(join(run, 'journal.jsonl'));
    const preload = join(process.cwd(), 'test', 'fixtures', 'enospc-preload.mjs');
    const r = spawnSync(process.execPath, ['--import', preload, BIN, 'grade', run], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 20_000,
      env: { ...process.env, CQ_ENOSPC_UNDER: run },
    });
    expect(r.status).toBe(3);
    expect(r.stderr).toBe(
      `cablequal: ERROR: cannot write ${join(run, 'record.json')}: no space left on device (ENOSPC); journal.jsonl is untouched: grade again once this is fixed\n`,
    );
    expect(readFileSync(join(run, 'journal.jsonl')).equals(journal)).toBe(true);
  });
});
