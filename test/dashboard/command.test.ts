// `cablequal dashboard` as a command: a mistyped --out is a usage error that creates nothing, and Ctrl-C / SIGTERM say
// they stop the dashboard (no loads run under it).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'cq-dash-cmd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('cablequal dashboard', () => {
  it('--out naming a folder that does not exist: exit 2, one line naming it, no folder or database created', async () => {
    const r = await runCli(['dashboard', '--out', 'reprots', '--port', '0'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `cablequal: dashboard: --out reprots: no such folder (${join(dir, 'reprots')}); give the reports directory that holds cablequal.db, or --db\n`,
    );
    expect(existsSync(join(dir, 'reprots'))).toBe(false);
  });

  it('SIGTERM: says it stops the dashboard (not loads on nodes) and exits 0 (a server stopped as asked)', { timeout: 30_000 }, async () => {
    const child = spawn(process.execPath, [join(process.cwd(), 'bin', 'cablequal.js'), 'dashboard', '--out', dir, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => void (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => void (err += d.toString()));
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    for (let i = 0; i < 400 && !out.includes('dashboard of'); i++) await new Promise((r) => setTimeout(r, 25));
    expect(out).toMatch(/^dashboard of .*cablequal\.db at http:\/\/127\.0\.0\.1:\d+\/ /);
    child.kill('SIGTERM');
    const code = await exit;
    expect(err).toBe('\ncablequal: SIGTERM: stopping the dashboard (again to quit at once)\n');
    expect(code).toBe(0);
  });
});
