// A store that never answers (held by another process) never stalls the watch: its writes are queued and given up,
// with one warning, after the recorder's deadline; the watch samples every tick and its journal holds everything.
import { describe, expect, it } from 'vitest';
import { loadProtocol } from '../../src/protocol/index.js';
import { createLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { StoreRecorder } from '../../src/store/recorder.js';
import { serviceStoreSinks } from '../../src/store/service.js';
import type { ResultsStore } from '../../src/store/store.js';
import { findCables } from '../../src/watch/cables.js';
import { serviceSettingsOf } from '../../src/watch/settings.js';
import { watchCables } from '../../src/watch/watcher.js';

describe('the watch over a store that never answers', () => {
  it('samples every tick, warns once, and closes', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const lab = createLab({ scenario: 'in-service-good', clock });
    const nodes = lab.nodes.map((name) => ({ name, runner: lab.runner(name) }));
    const warnings: string[] = [];
    let opened = 0;
    const target = {
      where: '/lab/reports/cablequal.db',
      open: () => (opened++, new Promise<ResultsStore>(() => undefined)),
      importCommand: '',
      without: 'the watch goes on without the store (its journal holds every event and tick)',
    };
    const store = serviceStoreSinks(new StoreRecorder(target, (l) => warnings.push(l), { deadlineMs: 50 }));
    const { links } = await findCables(nodes);
    let ticks = 0;
    const r = await watchCables({
      nodes,
      links,
      clock,
      settings: serviceSettingsOf(loadProtocol('protocols/spark-burnin.json')),
      forS: 1200,
      sinks: { event: (e) => store.event(e), tick: (a, b, f) => (ticks++, store.tick!(a, b, f)) },
    });
    await store.close(new Date(clock.now()).toISOString());
    expect(r.ticks).toBe(120);
    expect(ticks).toBe(120);
    expect(opened).toBe(1);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^cablequal: warning: results store \/lab\/reports\/cablequal\.db: no answer within 0\.05 s .*; the watch goes on without the store \(its journal holds every event and tick\)$/,
    );
  });
});
