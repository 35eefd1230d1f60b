// npm 11 warns at `npm ci` about every dependency whose install script package.json's `allowScripts` does not cover
// (npm 12 skips them): each package of the lockfile that has one must be decided there, allowed or denied, with the
// reason in CONTRIBUTING.md ("Install scripts"). Checked the way npm reads it: name-only keys (the lockfile records
// no `resolved` URLs, so npm matches no pinned `name@version` key: `npm install-scripts ls` lists them as uncovered).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> };
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };

describe('install scripts', () => {
  const withScripts = Object.entries(lock.packages)
    .filter(([path, p]) => path !== '' && p.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
    .sort();

  it('every package with an install script is allowed or denied by name in allowScripts, and no entry is stale', () => {
    expect(withScripts).toEqual(['better-sqlite3', 'cpu-features', 'esbuild', 'ssh2']);
    expect(Object.keys(pkg.allowScripts).sort()).toEqual(withScripts);
  });

  it('the native SQLite driver and esbuild (its binary, for tsx and vitest) run theirs; ssh2 and cpu-features are optimisations', () => {
    expect(pkg.allowScripts).toEqual({ 'better-sqlite3': true, esbuild: true, 'cpu-features': false, ssh2: false });
    const contributing = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');
    for (const name of withScripts) expect(contributing).toContain(`\`${name}\``);
  });
});
