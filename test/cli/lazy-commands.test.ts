// Each command loads its dependencies when it runs (src/cli/commands/*: options in the module, the rest imported
// by the handler): `--help`, `status` and `verify` start without ssh2, pg, better-sqlite3, prom-client, pino, execa
// or the report writers. The CLI runs from source (tsx) in a fresh node that logs every module it loads
// (test/fixtures/module-log.mjs); the start-up time itself is measured by `npm run bench` (BENCHMARKS.md §7).
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execNode } from '../helpers/exec-node.js';
import { unpackV1 } from '../helpers/journals-v1.js';

const root = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'cq-lazy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, 'reports'));
const certificate = join(unpackV1('good-qsfp56-quick', join(dir, 'run')), 'certificate.json');

// Packages only some commands need: a run, the store, the dashboard, the writers.
const HEAVY = ['ssh2', 'pg', 'better-sqlite3', 'prom-client', 'pino', 'execa', 'csv-stringify'];

// The npm packages `cablequal <argv>` loads, and its exit code.
async function packagesOf(argv: string[]): Promise<{ code: number; packages: string[]; modules: string[] }> {
  const log = join(dir, `modules-${argv[0]!.replace(/\W/g, '')}.log`);
  const script = "const { main } = await import('./src/cli/main.ts'); process.exitCode = await main(process.argv.slice(1));";
  const args = ['--import', 'tsx', '--import', './test/fixtures/module-log.mjs', '--input-type=module', '-e', script, '--', ...argv];
  const { code } = await execNode(args, { cwd: root, env: { ...process.env, CQ_MODULE_LOG: log } });
  const modules = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const packages = [...new Set(modules.map((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]).filter((p): p is string => Boolean(p)))];
  return { code, packages: packages.sort(), modules };
}

describe('commands load what they need when they run', { timeout: 60_000 }, () => {
  it('--help loads yargs and the command modules, not one command implementation', async () => {
    const r = await packagesOf(['--help']);
    expect(r.code).toBe(0);
    expect(r.packages.filter((p) => HEAVY.includes(p) || p === 'ajv')).toEqual([]);
    expect(r.packages).toContain('yargs');
    const src = r.modules.filter((u) => u.includes('/src/cli/')).map((u) => u.slice(u.indexOf('/src/cli/') + 9));
    expect(src).toContain('commands/run.ts');
    expect(src.filter((m) => m.endsWith('-command.ts') || m === 'report-commands.ts')).toEqual([]);
  });

  it('status reads the reports directory without the store, SSH, metrics or the protocol schema', async () => {
    const r = await packagesOf(['status', '--out', join(dir, 'reports')]);
    expect(r.code).toBe(0);
    expect(r.packages.filter((p) => HEAVY.includes(p) || p === 'ajv')).toEqual([]);
  });

  it('verify loads the grading (and ajv for the recorded protocol), not the store, SSH, metrics or the writers', async () => {
    const r = await packagesOf(['verify', certificate]);
    expect(r.code).toBe(5); // consistent, signer not pinned
    expect(r.packages.filter((p) => HEAVY.includes(p))).toEqual([]);
    expect(r.packages).toContain('ajv');
  });
});
