// `cablequal dashboard` as a command: a mistyped --out is a usage error that creates nothing (its SIGTERM, which needs
// the built CLI, is test/dashboard/command-signal.system.test.ts).
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'cq-dash-cmd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('cablequal dashboard', () => {
  it('--out naming a folder that does not exist: exit 2, one line naming it, no folder or database created', async () => {
    const r = await runCli(['dashboard', '--out', 'reprots', '--listen', '0'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `cablequal: dashboard: --out reprots: no such folder (${join(dir, 'reprots')}); give the reports directory that holds cablequal.db, or --db\n`,
    );
    expect(existsSync(join(dir, 'reprots'))).toBe(false);
  });
});

// A TCP port is --listen (the cage is --port in run, batch and preflight); the old spelling works for now, said once.
describe('dashboard --listen, and --port as its deprecated spelling', () => {
  it('--port still works, with one warning naming --listen; both at once are refused', async () => {
    const r = await runCli(['dashboard', '--out', 'reprots', '--port', '0'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      'cablequal: warning: --port is deprecated here: use --listen 0 (--port is the QSFP cage of run, batch and preflight)\n' +
        `cablequal: dashboard: --out reprots: no such folder (${join(dir, 'reprots')}); give the reports directory that holds cablequal.db, or --db\n`,
    );
    const both = await runCli(['dashboard', '--port', '0', '--listen', '0'], { cwd: dir });
    expect(both.err).toBe('cablequal: --port is the old name of --listen: give --listen only\n');
    expect((await runCli(['dashboard', '--help'])).out).not.toMatch(/--port/);
  });
});

// `batch --out X` keeps its store in the reports directory holding X; `dashboard --out X` finds that same store.
describe('dashboard --out <batch directory>', () => {
  it("shows the reports directory holding it (the batch's store), and says so", async () => {
    const reports = join(dir, 'lab');
    const batchDir = join(reports, 'box17');
    mkdirSync(batchDir, { recursive: true });
    writeFileSync(join(batchDir, 'batch-state.json'), '{"schema":"cablequal.batch/1"}');
    const stop = new AbortController();
    const running = runCli(['dashboard', '--out', batchDir, '--listen', '0'], { cwd: dir, signal: stop.signal });
    for (let i = 0; i < 200 && !existsSync(join(reports, 'cablequal.db')); i++) await new Promise((r) => setTimeout(r, 50));
    stop.abort();
    const r = await running;
    expect(r.code).toBe(0);
    expect(r.err).toBe(`cablequal: note: --out ${batchDir} is a batch directory: showing its reports directory ${reports} (the store the batch wrote)\n`);
    expect(r.out).toMatch(new RegExp(`^dashboard of ${join(reports, 'cablequal.db').replace(/[.]/g, '\\.')} at http://127\\.0\\.0\\.1:\\d+/`));
    expect(existsSync(join(batchDir, 'cablequal.db'))).toBe(false);
  });
});
