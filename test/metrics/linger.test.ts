// --metrics-linger: after the last run the metrics endpoint stays up (default 60 s) so a scrape every 15 s still sees
// the outcome, then closes; nothing lingers when no run started or the operator pressed Ctrl-C. The wait is on an
// injected clock here, released by the test: nobody sleeps a minute.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunObservers, type ObservedRun } from '../../src/store/run-observers.js';

const RUN: ObservedRun = {
  runId: 'r-linger',
  label: 'c1',
  startedAt: '2026-06-01T00:00:00.000Z',
  simulated: true,
  scenario: 'failing-clone',
  protocol: { name: 'quick', sha256: 'a'.repeat(64), file: 'protocols/quick.json' },
  nodes: [{ name: 'spark-a', host: 'spark-a' }],
};

// A clock whose sleeps wait for the test: each is recorded and resolves when released (or rejects on abort).
function heldClock() {
  const sleeps: { ms: number; release: () => void }[] = [];
  return {
    sleeps,
    sleep: (ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        sleeps.push({ ms, release: resolve });
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      }),
  };
}

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
};

// Observers with a metrics port and the given linger; what they printed.
async function observers(lingerS: number, wait: ConstructorParameters<typeof RunObservers>[2]) {
  let err = '';
  const o = new RunObservers(
    { storeDir: mkdtempSync(join(tmpdir(), 'cq-linger-')), db: 'off', metricsPort: 0, metricsLingerS: lingerS },
    { env: {}, cwd: process.cwd(), stderr: (s) => void (err += s) },
    wait,
  );
  await o.open();
  const url = /metrics at (\S+)/.exec(err)![1]!;
  return { o, url, err: () => err };
}

describe('--metrics-linger', () => {
  it('serves the outcome for the linger time after the run, then closes', async () => {
    const clock = heldClock();
    const { o, url, err } = await observers(60, { clock });
    o.started(RUN);
    await o.finished({ runId: RUN.runId, outcome: 'FAIL' }, '/nowhere');
    const closed = o.close();
    await until(() => clock.sleeps.length === 1);
    expect(clock.sleeps[0]!.ms).toBe(60_000);
    expect(err()).toContain(`cablequal: metrics stay at ${url} for 60 s, so a scrape sees the outcome (--metrics-linger; Ctrl-C to quit now)\n`);
    // A scrape during the linger sees the decided outcome.
    expect(await (await fetch(url)).text()).toContain(`cablequal_run_outcome{run="${RUN.runId}",outcome="FAIL"} 1`);
    clock.sleeps[0]!.release();
    await closed;
    await expect(fetch(url)).rejects.toThrow();
  });

  it('Ctrl-C ends the linger at once; an interrupted run does not linger at all', async () => {
    const clock = heldClock();
    const ac = new AbortController();
    const { o, url } = await observers(60, { clock, signal: ac.signal });
    o.started(RUN);
    const closed = o.close();
    await until(() => clock.sleeps.length === 1);
    ac.abort('SIGINT');
    await closed;
    await expect(fetch(url)).rejects.toThrow();
    const again = await observers(60, { clock, signal: ac.signal });
    again.o.started(RUN);
    await again.o.close();
    expect(clock.sleeps).toHaveLength(1);
  });

  it('0 means none, and a command refused before any run started does not linger', async () => {
    const clock = heldClock();
    const none = await observers(0, { clock });
    none.o.started(RUN);
    await none.o.close();
    const refused = await observers(60, { clock });
    await refused.o.close();
    expect(clock.sleeps).toEqual([]);
    expect(refused.err()).not.toContain('metrics stay');
  });
});
