// `batch --sim ... --golden SERIAL`: on the simulated lab the golden cable is a good cable (good-qsfp56) carrying that
// serial, run first and last like a lab's reference cable, so its control chart (the store's golden runs) can be shown
// without hardware. It used to be refused.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseStore, openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/cli.js';

describe('batch --sim with a golden cable', { timeout: 120_000 }, () => {
  it('runs the simulated golden cable first and last, checks their drift, and stores them as golden runs', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-sim-golden-'));
    writeFileSync(join(cwd, 'box.csv'), 'label\nc1\n');
    const r = await runCli(['batch', '--manifest', 'box.csv', '--sim', 'failing-clone', '--golden', 'GOLD-7', '--protocol', 'quick', '--out', 'reports/b'], {
      cwd,
    });
    expect(r.code, r.err).toBe(1); // the failing clone FAILs; the golden runs agree, so its verdict stands
    expect(r.err).toContain('[pair 1] plug the golden cable (serial GOLD-7) into spark-a cage 1 and spark-b cage 1');
    const state = JSON.parse(readFileSync(join(cwd, 'reports', 'b', 'batch-state.json'), 'utf8')) as {
      golden: string;
      goldenDrift: { ok: boolean; detail: string };
      cables: { label: string; serial: string; outcome: string }[];
    };
    expect(state.golden).toBe('GOLD-7');
    expect(state.cables.map((c) => [c.label, c.serial, c.outcome])).toEqual([
      ['golden-first', 'GOLD-7', 'PASS'],
      ['c1', 'ONT2403150117', 'FAIL'],
      ['golden-last', 'GOLD-7', 'PASS'],
    ]);
    expect(state.goldenDrift).toMatchObject({ ok: true, detail: expect.stringMatching(/^golden runs agree \(\d+ metrics within tolerance\)$/) });
    const store = await openStore(chooseStore({ out: join(cwd, 'reports') }));
    try {
      const rows = await store.db.all<{ batch_role: string; outcome: string }>('SELECT batch_role, outcome FROM runs ORDER BY started_at');
      expect(rows.map((x) => [x.batch_role, x.outcome])).toEqual([
        ['golden-first', 'PASS'],
        ['cable', 'FAIL'],
        ['golden-last', 'PASS'],
      ]);
    } finally {
      await store.close();
    }
  });
});
