// `cablequal dashboard` stopped by SIGTERM says it stops the dashboard (no loads run under it) and exits 0. It spawns
// the built CLI (bin/cablequal.js runs dist/), so it is in the system tier, whose global setup builds dist/ first.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'cq-dash-sig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('cablequal dashboard', () => {
  it('SIGTERM: says it stops the dashboard (not loads on nodes) and exits 0 (a server stopped as asked)', { timeout: 30_000 }, async () => {
    const child = spawn(process.execPath, [join(process.cwd(), 'bin', 'cablequal.js'), 'dashboard', '--out', dir, '--listen', '0'], {
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
