// #22 item 7: the run's store recorder never makes the run wait, and gives the store up after its first failure with
// one warning naming the `db import` that adds the runs later. Over a scripted store on a virtual clock: a write that
// never answers (a store held by another process), one that fails, a slow one within the deadline, an opening that fails.
import { describe, expect, it } from 'vitest';
import { StoreOpenError } from '../../src/store/open-store.js';
import { StoreRecorder, WRITE_DEADLINE_MS } from '../../src/store/recorder.js';
import type { ResultsStore } from '../../src/store/store.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';

type Answer = 'hang' | 'fail' | { afterMs: number };

// A store whose every write answers as `answer` says; `calls` lists the writes that reached it.
function scriptedStore(clock: VirtualClock, answer: Answer) {
  const calls: string[] = [];
  let closed = 0;
  const reply = (what: string) => {
    calls.push(what);
    if (answer === 'hang') return new Promise<never>(() => undefined);
    if (answer === 'fail') return Promise.reject(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }));
    return clock.sleep(answer.afterMs);
  };
  const store = {
    runStarted: async () => reply('started'),
    runLive: async () => reply('live'),
    runFinished: async () => (await reply('finished'), 'inserted' as const),
    close: async () => void closed++,
  } as unknown as ResultsStore;
  return { store, calls, closed: () => closed };
}

const RUN = {
  runId: 'run1',
  label: null,
  startedAt: '2026-06-01T00:00:00.000Z',
  simulated: true,
  scenario: null,
  protocol: { name: 'quick', sha256: 'a'.repeat(64), file: 'protocols/quick.json' },
  nodes: [],
  runDir: null,
};
const STATUS = { phase: 'soak', elapsedS: 10, phaseRemainingS: 50, runRemainingS: 50 };

function recorderOver(answer: Answer, open?: () => Promise<ResultsStore>) {
  const clock = new VirtualClock(Date.UTC(2026, 5, 1));
  const s = scriptedStore(clock, answer);
  const warnings: string[] = [];
  const target = {
    where: '/lab/reports/cablequal.db',
    open: open ?? (async () => s.store),
    importCommand: 'cablequal db import /lab/reports --out /lab/reports',
  };
  const rec = new StoreRecorder(target, (l) => warnings.push(l), { clock, now: () => clock.now(), minIntervalMs: 0 });
  return { clock, rec, warnings, ...s };
}

const advice = '; runs go on without the store (journals and records are on disk: `cablequal db import /lab/reports --out /lab/reports` adds them afterwards)';

describe('the store recorder never holds up a run', () => {
  it('a store that never answers: the hooks return at once, the first write is given up at the deadline, one warning, nothing more is sent', async () => {
    const r = recorderOver('hang');
    const t0 = r.clock.now();
    r.rec.started(RUN);
    // The run's thread goes on while the write waits: five seconds of its 1 s status ticks on the same clock.
    for (let i = 0; i < 5; i++) {
      r.rec.status('run1', STATUS);
      await r.clock.sleep(1000);
    }
    expect(r.clock.now() - t0).toBe(5000);
    expect(r.warnings).toEqual([]);
    // The run's end waits for the queue: until the deadline of the write that hangs, not longer.
    await r.rec.finished({ runId: 'run1' }, '/lab/reports/x/run1');
    expect(r.clock.now() - t0).toBe(WRITE_DEADLINE_MS);
    expect(r.warnings).toEqual([`cablequal: warning: results store /lab/reports/cablequal.db: no answer within 10 s (busy or unreachable)${advice}`]);
    expect(r.calls).toEqual(['started']);
    r.rec.status('run1', STATUS);
    await r.rec.finished({ runId: 'run1' }, '/lab/reports/x/run1');
    expect(r.calls).toEqual(['started']);
    expect(r.warnings).toHaveLength(1);
    await r.rec.close();
    expect(r.closed()).toBe(1);
  });

  it('a write that fails: one warning with the reason, the store given up at once (no retry, no wait)', async () => {
    const r = recorderOver('fail');
    const t0 = r.clock.now();
    r.rec.started(RUN);
    r.rec.status('run1', STATUS);
    await r.rec.finished({ runId: 'run1' }, '/lab/reports/x/run1');
    expect(r.clock.now()).toBe(t0);
    expect(r.warnings).toEqual([`cablequal: warning: results store /lab/reports/cablequal.db: database is locked (SQLITE_BUSY)${advice}`]);
    expect(r.calls).toEqual(['started']);
    expect(r.rec.writing).toBe(false);
  });

  it('a slow store within the deadline: every write goes through, no warning', async () => {
    const r = recorderOver({ afterMs: WRITE_DEADLINE_MS - 1000 });
    r.rec.started(RUN);
    r.rec.status('run1', STATUS);
    await r.rec.finished({ runId: 'run1' }, '/lab/reports/x/run1');
    expect(r.calls).toEqual(['started', 'live', 'finished']);
    expect(r.warnings).toEqual([]);
    expect(r.rec.writing).toBe(true);
  });

  it('a store that cannot be opened: one warning saying why, no write tried', async () => {
    const r = recorderOver('hang', () => Promise.reject(new StoreOpenError('/lab/reports/cablequal.db', new Error("the store's schema is version 99"))));
    r.rec.started(RUN);
    await r.rec.finished({ runId: 'run1' }, '/lab/reports/x/run1');
    expect(r.warnings).toEqual([`cablequal: warning: results store /lab/reports/cablequal.db: the store's schema is version 99${advice}`]);
    expect(r.calls).toEqual([]);
  });
});
