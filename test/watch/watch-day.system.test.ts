// The done-when of #36, a whole simulated day each (system tier: tens of seconds of CPU): `watch --sim
// in-service-clone --for 24h --json` raises a lane alarm naming serial, node and lane before the first link-down, and
// each link-down carries a snapshot taken while the link was down; `watch --sim in-service-good --for 24h --json`
// exits 0 with events but no alarm and no link-down; the dashboard's cable page shows the clone's service and drops.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startDashboard } from '../../src/dashboard/server.js';
import { chooseStore, openStore } from '../../src/store/open-store.js';
import type { WatchEvent } from '../../src/watch/events.js';
import { runCli } from '../helpers/cli.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'cq-watch-day-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const events = (out: string) =>
  out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as WatchEvent);

describe('a day of watching in service (simulated)', () => {
  it('in-service-clone: the lane alarm first, then four drops, each with both ends read while down; the cable page shows them', async () => {
    const out = tmp();
    const r = await runCli(['watch', '--sim', 'in-service-clone', '--for', '24h', '--json', '--out', out]);
    expect(r.code).toBe(1);
    const ev = events(r.out);
    const drops = ev.filter((e) => e.type === 'link-down');
    expect(drops).toHaveLength(4);
    const first = ev.indexOf(drops[0]!);
    const lane = ev.slice(0, first).find((e) => e.type === 'alarm' && e.lane !== null);
    expect(lane).toMatchObject({ rule: 'lane-ratio', serial: 'ONT2403150288', node: 'spark-b', lane: 2 });
    for (const d of drops) {
      if (d.type !== 'link-down') continue;
      expect(d.cause).toBe('cable');
      expect(d.snapshot.ends).toHaveLength(2);
      for (const e of d.snapshot.ends) {
        expect(e.link.detected).toBe(false);
        expect(e.link.raw).toContain('Link detected: no');
      }
    }
    expect(ev.filter((e) => e.type === 'link-up').map((e) => (e.type === 'link-up' ? e.resets : 0))).toEqual([1, 2, 3, 4]);
    const store = await openStore(chooseStore({ out }));
    const dash = await startDashboard({ store, outDir: out, port: 0, host: '127.0.0.1' });
    try {
      const page = await (await fetch(`http://127.0.0.1:${dash.port}/cables/ONT2403150288`)).text();
      expect(page).toContain('<h2>In service</h2>');
      expect(page).toMatch(/<b>4 link drop\(s\)<\/b>/);
      expect(page.match(/<tr class="FAIL"><td class="code">/g)?.length).toBeGreaterThanOrEqual(4);
    } finally {
      await dash.close();
      await store.close();
    }
  }, 600_000);

  it('in-service-good: exit 0, status lines every hour, no alarm, no link-down', async () => {
    const r = await runCli(['watch', '--sim', 'in-service-good', '--for', '24h', '--json', '--out', tmp()]);
    expect(r.code).toBe(0);
    const ev = events(r.out);
    expect(ev.filter((e) => e.type === 'status')).toHaveLength(25);
    expect(ev.filter((e) => e.type === 'alarm' || e.type === 'link-down')).toEqual([]);
  }, 600_000);
});
