// A cable's life in one place: `watch` writes its events and a sampled history to the results store as it goes (the
// CLI in process, the simulated clone in service), and the dashboard's cable page shows the cable's service and its
// link drops with both ends' snapshot; the fleet page lists it with its state. Strings from a node are escaped.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type Dashboard } from '../../src/dashboard/server.js';
import { chooseStore, openStore } from '../../src/store/open-store.js';
import { insertServiceEvent, serviceEventRow, serviceOfCable, watchedCables } from '../../src/store/service.js';
import type { ResultsStore } from '../../src/store/store.js';
import { runCli } from '../helpers/cli.js';

let out: string;
let store: ResultsStore;
let dash: Dashboard;
beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'cq-service-'));
  const r = await runCli(['watch', '--sim', 'test/fixtures/scenarios/service-clone-early.json', '--for', '1.2h', '--json', '--out', out]);
  expect(r.err).toBe('');
  store = await openStore(chooseStore({ out }));
  dash = await startDashboard({ store, outDir: out, port: 0, host: '127.0.0.1' });
}, 120_000);
afterAll(async () => {
  await dash?.close();
  await store?.close();
  rmSync(out, { recursive: true, force: true });
});

const get = async (path: string) => {
  const res = await fetch(`http://127.0.0.1:${dash.port}${path}`);
  return { status: res.status, body: await res.text() };
};

describe('cables in service in the store and on the dashboard', () => {
  it('the store holds every event but start and end, and 5-minute buckets adding up to the seconds watched', async () => {
    const s = await serviceOfCable(store.db, 'ONT2403150288');
    const types = s.events.map((e) => e.type);
    expect(types.filter((t) => t === 'link-down')).toHaveLength(1);
    expect(types).toContain('alarm');
    expect(types).toContain('status');
    // two receivers; each bucket 300 s of intervals, the last one the rest (the first reading is the baseline)
    expect(new Set(s.samples.map((x) => `${x.node}:${x.cage}`))).toEqual(new Set(['spark-a:1', 'spark-b:1']));
    for (const node of ['spark-a', 'spark-b']) expect(s.samples.filter((x) => x.node === node).reduce((n, x) => n + x.seconds, 0)).toBe(1.2 * 3600 - 10);
    const lane2 = s.samples.filter((x) => x.node === 'spark-b').map((x) => (JSON.parse(x.lane_errors) as number[])[2]!);
    expect(Math.max(...lane2)).toBeGreaterThan(1e6);
    expect(await watchedCables(store.db)).toMatchObject([{ serial: 'ONT2403150288', cable: 'spark-a:1--spark-b:1' }]);
  });

  it('/cables/<serial>: its service, the per-lane BER chart and each link drop with what both ends showed while down', async () => {
    const r = await get('/cables/ONT2403150288');
    expect(r.status).toBe(200);
    expect(r.body).toContain('<h2>In service</h2>');
    expect(r.body).toMatch(/<b>1 link drop\(s\)<\/b>/);
    expect(r.body).toContain('id="service-ber"');
    const drops = r.body.slice(r.body.indexOf('<table id="link-downs">'), r.body.indexOf('<h3>Alarms'));
    expect(drops.match(/Link detected: no \(Bad signal integrity, Large number of physical errors\)/g)).toHaveLength(2 + 2); // state line and raw output, both ends
    expect(drops).toContain('ethtool -S enp1s0f1np1');
    expect(r.body).toMatch(/<td>lane-ratio<\/td><td>MARGINAL<\/td><td>spark-b cage 1 lane 2<\/td>/);
    const api = JSON.parse((await get('/api/cables/ONT2403150288/service')).body) as { events: unknown[]; samples: unknown[] };
    expect(api.events.length).toBeGreaterThan(5);
  });

  it('/fleet lists every watched cable with its state; untrusted strings are escaped', async () => {
    const hostile = '<img src=x onerror=alert(1)>';
    const row = serviceEventRow({
      type: 'status',
      cable: 'x:0--y:0',
      serial: hostile,
      node: 'x',
      cage: 0,
      atS: 0,
      at: '2030-01-01T00:00:00.000Z',
      link: 'up',
      alarms: 0,
      resets: 0,
      laneBer: [],
      marginDecades: null,
      nicTempC: null,
      moduleTempC: null,
      message: hostile,
    });
    await insertServiceEvent(store.db, row!);
    const r = await get('/fleet');
    expect(r.status).toBe(200);
    expect(r.body).toContain('<a href="/cables/ONT2403150288">ONT2403150288</a>');
    expect(r.body).not.toContain(hostile);
    expect(r.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});
