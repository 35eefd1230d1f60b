// knip.jsonc marks what ships with `!`, and `npm run lint` runs `knip --production`, which reads only those files: an
// export only a test calls is then reported (readEthtool*, writeCertificateJson were kept alive by their tests). The
// convention is checked on a scratch project generated here, and the repository's configuration is held to it.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execNode } from '../helpers/exec-node.js';

const root = join(import.meta.dirname, '..', '..');
const KNIP = join(root, 'node_modules', 'knip', 'bin', 'knip.js');
const scratch = mkdtempSync(join(tmpdir(), 'cq-knip-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const files: Record<string, string> = {
  'package.json': '{ "name": "knip-scratch", "private": true, "type": "module" }\n',
  'knip.jsonc': '{ "entry": ["src/main.ts!", "test/*.test.ts"], "project": ["src/**/*.ts!", "test/**/*.ts"], "ignoreExportsUsedInFile": true }\n',
  'src/main.ts': "import { used } from './lib.js';\nused();\n",
  'src/lib.ts': [
    'export function used(): number { return 1; }',
    'export function onlyTested(): number { return 2; }',
    '/** A test seam. @internal */',
    'export function seam(): number { return 3; }',
    '',
  ].join('\n'),
  'test/lib.test.ts': "import { onlyTested, seam } from '../src/lib.js';\nonlyTested();\nseam();\n",
};
for (const [rel, text] of Object.entries(files)) {
  mkdirSync(dirname(join(scratch, rel)), { recursive: true });
  writeFileSync(join(scratch, rel), text);
}

// knip over the scratch project: exit code and report.
async function knip(...args: string[]): Promise<{ code: number; out: string }> {
  const r = await execNode([KNIP, '--directory', scratch, '--no-progress', ...args], { cwd: scratch, env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.code, out: r.stdout };
}

describe('knip --production: tests do not keep production exports alive', { timeout: 60_000 }, () => {
  it('reports the export only a test calls, not the seam tagged @internal; the default mode (tests counted) reports nothing', async () => {
    const production = await knip('--production');
    expect(production.code).toBe(1);
    expect(production.out).toMatch(/Unused exports \(1\)\s+onlyTested\s+function\s+src\/lib\.ts:2:17/);
    expect(production.out).not.toContain('seam');
    expect(await knip()).toEqual({ code: 0, out: '' });
  });

  it('the repository marks the CLI, benchmarks and scripts as production, never a test, and the lint runs both modes', () => {
    const config = JSON.parse(
      readFileSync(join(root, 'knip.jsonc'), 'utf8')
        .split('\n')
        .filter((l) => !l.trim().startsWith('//'))
        .join('\n'),
    ) as { entry: string[]; project: string[] };
    expect(config.entry.filter((e) => e.endsWith('!'))).toEqual(['src/cli/main.ts!', 'bench/*.ts!', 'scripts/*.ts!']);
    expect(config.project.filter((p) => p.endsWith('!'))).toEqual(['src/**/*.ts!', 'bench/**/*.ts!', 'scripts/**/*.ts!', 'bin/*.js!']);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['lint']).toMatch(/&& knip && knip --production$/);
  });
});
