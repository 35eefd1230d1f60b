// `cablequal dashboard` as a command: a mistyped --out is a usage error that creates nothing (its SIGTERM, which needs
// the built CLI, is test/dashboard/command-signal.system.test.ts).
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
});
