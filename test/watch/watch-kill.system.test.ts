// A watcher killed with SIGKILL (the built CLI, over sim serve's SSH): the journal holds every event it printed (each
// is journaled before it is printed, each tick as it is taken: at most the tick under way is lost), a line cut short
// by the kill is left out and said, and the watcher started again on the same --out resumes the watch.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveSimLab, type SimServe } from '../../src/sim/serve.js';
import { runCli } from '../helpers/cli.js';
import { servedNodeArgs } from '../helpers/served-nodes.js';

const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);

describe('watch killed with SIGKILL', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cq-watch-kill-'));
  let lab: SimServe;
  beforeAll(async () => {
    lab = await serveSimLab({ scenario: 'in-service-good', speed: 10, dir: join(dir, 'keys') });
  });
  afterAll(async () => {
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loses nothing it printed, and resumes', async () => {
    const out = join(dir, 'out');
    const journal = join(out, 'watch', 'watch.jsonl');
    const child = spawn(process.execPath, ['bin/cablequal.js', 'watch', ...servedNodeArgs(lab), '--interval', '1', '--json', '--out', out, '--db', 'off'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let printed = '';
    child.stdout.on('data', (d: Buffer) => (printed += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_c, s) => resolve(s)));
    // Killed once the watch has taken a few ticks.
    while (lines(journal).filter((l) => l.includes('"type":"tick"')).length < 5) await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const kept = new Set(lines(journal));
    const shown = printed.split('\n').filter((l) => l.endsWith('}'));
    expect(shown.length).toBeGreaterThanOrEqual(2); // start and the first status at least
    for (const l of shown) expect(kept.has(l), l.slice(0, 80)).toBe(true);
    const again = await runCli(['watch', ...servedNodeArgs(lab), '--for', '3s', '--interval', '1', '--json', '--out', out, '--db', 'off']);
    expect(again.err).toMatch(/^(cablequal watch: .* line\(s\) cut short by a kill left out; resuming\n)?$/);
    const first = JSON.parse(again.out.split('\n')[0]!) as { type: string; resumed: boolean };
    expect(first).toMatchObject({ type: 'start', resumed: true });
    expect(lines(journal).filter((l) => l.includes('"type":"start"'))).toHaveLength(2);
  });
});
