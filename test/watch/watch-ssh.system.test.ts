// `watch --nodes` over real SSH: the simulated lab behind `sim serve`'s SSH servers (x10 time), the watch on the wall
// clock. The cable is found over SSH, every node sampled every 2 s; a node that stops answering for a while is two
// events (lost, back), never the end of the watch.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveSimLab, type SimServe } from '../../src/sim/serve.js';
import type { WatchEvent } from '../../src/watch/events.js';
import { runCli } from '../helpers/cli.js';
import { servedNodeArgs } from '../helpers/served-nodes.js';

describe('watch over SSH (sim serve)', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cq-watch-ssh-'));
  let lab: SimServe;
  beforeAll(async () => {
    // spark-b unreachable from 60 to 120 s of lab time (6 to 12 s of the watch's wall time)
    lab = await serveSimLab({ scenario: 'in-service-good', speed: 10, dir: join(dir, 'keys'), faults: ['ssh-drop@60s+60s:spark-b'] });
  });
  afterAll(async () => {
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds the cable by serial over SSH, samples both nodes, and says when a node stops and starts answering', async () => {
    const out = join(dir, 'out');
    const r = await runCli(['watch', ...servedNodeArgs(lab), '--for', '24s', '--interval', '2', '--json', '--out', out, '--db', 'off']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const ev = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as WatchEvent);
    expect(ev[0]).toMatchObject({ type: 'start', cables: [{ cable: 'spark-a:1--spark-b:1', serial: 'MT2412VS01741' }] });
    const kinds = ev.map((e) => `${e.type}${'node' in e && (e.type === 'node-lost' || e.type === 'node-back') ? ` ${e.node}` : ''}`);
    expect(kinds).toContain('node-lost spark-b');
    expect(kinds.indexOf('node-back spark-b')).toBeGreaterThan(kinds.indexOf('node-lost spark-b'));
    expect(kinds.at(-1)).toBe('end');
    expect(ev.filter((e) => e.type === 'alarm' || e.type === 'link-down')).toEqual([]);
    const ticks = readFileSync(join(out, 'watch', 'watch.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .filter((l) => l.includes('"type":"tick"'));
    expect(ticks.length).toBeGreaterThanOrEqual(8);
  });
});
