// The real CLI (node bin/cablequal.js, dist/ built by the system tier's setup) against hosts that accept TCP but do
// not speak SSH: ERROR [transport] with its run report written, never an unhandled ssh2 'error' event afterwards
// (that used to crash the CLI after the ERROR was printed, before the run report was written).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQuietHosts } from './quiet-hosts.js';

const BIN = join(process.cwd(), 'bin', 'cablequal.js');

describe('hosts that accept TCP but do not speak SSH', { timeout: 60_000 }, () => {
  let hosts: Awaited<ReturnType<typeof startQuietHosts>>;
  const dir = mkdtempSync(join(tmpdir(), 'cq-silent-cli-'));
  beforeAll(async () => {
    hosts = await startQuietHosts();
  });
  afterAll(async () => {
    await hosts?.close();
  });

  it('the real CLI: `run` against both ends ERROR [transport] with its run report written, exit 3, no crash', () => {
    const cfg = join(dir, 'ssh_config');
    writeFileSync(
      cfg,
      `Host sa\n  HostName 127.0.0.1\n  Port ${hosts.silent.port}\n  ConnectTimeout 1\nHost sb\n  HostName 127.0.0.1\n  Port ${hosts.garbage.port}\n  ConnectTimeout 1\n`,
    );
    const out = join(dir, 'reports');
    const r = spawnSync(process.execPath, [BIN, 'run', '--nodes', 'sa,sb', '--ssh-config', cfg, '--protocol', 'quick', '--label', 'silent', '--out', out], {
      encoding: 'utf8',
      timeout: 45_000,
      env: { ...process.env, HOME: dir },
    });
    expect(r.signal).toBeNull();
    expect(r.stderr).not.toMatch(/Unhandled 'error' event|\n\s+at |internal error/);
    expect(r.status).toBe(3);
    expect(r.stdout).toMatch(/^ERROR: .*\n(?: {2}.*\n)* {2}ERROR transport s[ab]: s[ab]: cannot connect to 127\.0\.0\.1:\d+: /m);
    const runDir = join(out, 'silent', readdirSync(join(out, 'silent'))[0]!);
    expect(JSON.parse(readFileSync(join(runDir, 'record.json'), 'utf8')).outcome).toBe('ERROR');
    expect(existsSync(join(runDir, 'run-report.html'))).toBe(true);
  });
});
