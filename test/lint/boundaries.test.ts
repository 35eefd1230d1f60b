// The layering of src/ is enforced by `npm run lint`: ESLint's Node API lints snippets under virtual paths inside
// each folder with the project's own eslint.config.js, so a broken boundary is proven to fail the lint.
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

// The import-rule findings (and any fatal parse error, rule id null) ESLint reports for `code` as if it were the file
// at `path` (relative to the repo); the snippets' unused imports are not under test.
async function lint(path: string, code: string): Promise<{ ruleId: string | null; message: string }[]> {
  const [result] = await eslint.lintText(code, { filePath: `${root}/${path}` });
  return result!.messages.filter((m) => m.ruleId === null || m.ruleId === 'no-restricted-imports').map((m) => ({ ruleId: m.ruleId, message: m.message }));
}

describe('npm run lint holds the layers of src/', () => {
  it.each([
    ['src/analysis/x.ts', "import type { CommandRunner } from '../transport/types.js';", /src\/analysis may import only src\/\{analysis,domain\}/],
    ['src/analysis/x.ts', "import { buildRecord } from '../run/record-builder.js';", /src\/analysis may import only/],
    ['src/domain/x.ts', "import { readFileSync } from 'node:fs';", /src\/domain imports no node module/],
    ['src/domain/x.ts', "import { join } from 'path';", /src\/domain imports no node module/],
    ['src/domain/x.ts', "import { parseEthtoolFec } from '../probes/ethtool-fec.js';", /src\/domain may import only src\/\{domain\}/],
    ['src/transport/x.ts', "import { qualify } from '../run/qualify.js';", /src\/transport may import only/],
    ['src/run/steps/x.ts', "import { main } from '../../cli/main.js';", /src\/run may import only/],
    ['src/grading/v1/x.ts', "import type { ResultsStore } from '../../store/store.js';", /src\/grading may import only/],
    ['src/probes/x.ts', "import { execFile } from 'node:child_process';", /src\/probes does no I\/O/],
    ['src/grading/x.ts', "export { readFile } from 'node:fs/promises';", /src\/grading does no I\/O/],
    ['src/eeprom/x.ts', "import { connect } from 'node:net';", /src\/eeprom does no I\/O/],
    ['src/sim/x.ts', "import { qualify } from '../run/qualify.js';", /src\/sim may import only/],
  ])('%s: %s is an error', async (path, code, message) => {
    const messages = await lint(path, `${code}\n`);
    expect(messages).toEqual([{ ruleId: 'no-restricted-imports', message: expect.stringMatching(message) }]);
  });

  it.each([
    ['src/analysis/x.ts', "import type { Sample } from '../domain/sample.js';"],
    ['src/grading/x.ts', "import { RunAnalyzer } from '../analysis/analyze.js';"],
    ['src/probes/x.ts', "import type { CommandRunner } from '../transport/types.js';"],
    ['src/run/steps/x.ts', "import { readEthtoolFec } from '../../probes/ethtool-fec.js';"],
    ['src/transport/x.ts', "import { connect } from 'node:net';"],
    ['src/cli/x.ts', "import { startLabServer } from '../sim/serve.js';"],
    ['test/x.test.ts', "import { readFileSync } from 'node:fs';\nimport { qualify } from '../src/run/qualify.js';"],
  ])('%s: %s is allowed', async (path, code) => {
    expect(await lint(path, `${code}\n`)).toEqual([]);
  });

  it('the layer table has no cycle and cli is the top: nothing imports cli', async () => {
    const { LAYERS } = (await import(`${root}/eslint.config.js`)) as { LAYERS: Record<string, string[]> };
    const folders = Object.keys(LAYERS);
    for (const [f, deps] of Object.entries(LAYERS)) for (const d of deps) expect(folders, `${f} -> ${d}`).toContain(d);
    expect(folders.filter((f) => LAYERS[f]!.includes('cli'))).toEqual([]);
    // A topological order exists: repeatedly remove folders whose imports are all removed.
    const left = new Set(folders);
    while (left.size > 0) {
      const ready = [...left].filter((f) => LAYERS[f]!.every((d) => !left.has(d)));
      expect(ready, `cycle among ${[...left].join(', ')}`).not.toEqual([]);
      for (const f of ready) left.delete(f);
    }
  });
});
