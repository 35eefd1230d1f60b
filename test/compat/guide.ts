// Following a guide of the repository in a scratch copy: its marked code blocks, a copy of the tracked files, commands
// run there (test/compat/contributing-guide.system.test.ts, test/compat/adding-a-probe-guide.system.test.ts).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

// The code block that follows a `<!-- guide:<name> -->` marker of a guide (a path from the repository's root).
export function guideBlock(guide: string, name: string): string {
  const text = readFileSync(join(ROOT, guide), 'utf8');
  const at = text.indexOf(`<!-- guide:${name} -->`);
  if (at < 0) throw new Error(`${guide} has no guide:${name} block`);
  const m = /```(?:ts|json|sh)\n([\s\S]*?)```/.exec(text.slice(at));
  if (!m) throw new Error(`${guide}: no code block after guide:${name}`);
  return m[1]!;
}

// A copy of the tracked files, node_modules linked.
export function scratchCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cq-guide-'));
  const files = spawnSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).stdout.split('\0').filter(Boolean);
  for (const f of files) {
    if (!existsSync(join(ROOT, f))) continue; // deleted in the working tree, not yet committed
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    cpSync(join(ROOT, f), join(dir, f));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

// A command in the copy: its exit code and both streams.
export function run(dir: string, cmd: string, args: string[]): { code: number | null; out: string } {
  const r = spawnSync(cmd, args, { cwd: dir, encoding: 'utf8', timeout: 600_000, env: { ...process.env, CI: '', NO_COLOR: '1', FORCE_COLOR: '0' } });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}
