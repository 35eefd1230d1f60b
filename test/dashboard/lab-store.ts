// A reports directory and its store for the dashboard tests: three real simulated runs (`cablequal run --sim`, quick
// protocol, in process), a GENERATED cable whose EEPROM strings are hostile markup, and GENERATED golden-cable runs
// over three batches (the simulated lab does not simulate a golden cable: these are cloned from the generated PASS
// record, with their figures varied by this file).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { chooseStore, openStore } from '../../src/store/open-store.js';
import type { ResultsStore } from '../../src/store/store.js';
import { failingCloneRecord, passRecord } from '../fixtures/records/build.js';
import { tempRoot } from '../fixtures/records/run-dir.js';
import type { RunRecord } from '../../src/domain/record.js';

export const HOSTILE_VENDOR = '</script><img src=x onerror="window.__pwned=1">';
export const HOSTILE_PN = 'PN"><svg onload=window.__pwned=2>';
export const HOSTILE_SERIAL = 'SN<b>&amp;\u2028x';

export interface LabStore {
  out: string;
  store: ResultsStore;
  simRuns: { runId: string; runDir: string; outcome: string; serial: string; partNumber: string; vendor: string }[];
  hostileRunId: string;
  golden: { serial: string; runIds: string[]; bw: number[] };
  retest: { serial: string; runIds: string[]; outcomes: string[]; batchId: string };
}

// Three simulated runs into <out> through the CLI (which writes them to <out>/cablequal.db as they run).
export async function makeLabStore(): Promise<LabStore> {
  const out = tempRoot('cq-dash-');
  const simRuns: LabStore['simRuns'] = [];
  for (const scenario of ['failing-clone', 'good-qsfp56', 'marginal-qsfp112']) {
    const r = await runCli(['run', '--sim', scenario, '--protocol', 'quick', '--out', out, '--json', '--seed', '3'], {
      env: { CABLEQUAL_LAB_KEY: '/nonexistent/key.pem' },
    });
    const j = JSON.parse(r.out) as { outcome: string; runDir: string; cable: { serial: string; pn: string; vendor: string } };
    simRuns.push({
      runId: j.runDir.split('/').at(-1)!,
      runDir: j.runDir,
      outcome: j.outcome,
      serial: j.cable.serial,
      partNumber: j.cable.pn,
      vendor: j.cable.vendor,
    });
  }
  const store = await openStore(chooseStore({ out }));

  // GENERATED: a FAIL whose EEPROM strings try to break out of HTML, attributes and script.
  const base = failingCloneRecord();
  const hostile: RunRecord = {
    ...base,
    runId: 'gen-hostile-0001',
    startedAt: '2026-03-02T08:00:00.000Z',
    cable: {
      ...base.cable,
      vendor: HOSTILE_VENDOR,
      partNumber: HOSTILE_PN,
      serial: HOSTILE_SERIAL,
      ends: base.cable.ends.map((e) => ({
        ...e,
        identity: e.identity ? { ...e.identity, vendorName: HOSTILE_VENDOR, vendorPn: HOSTILE_PN, vendorSn: HOSTILE_SERIAL, dateCode: '<i>lot' } : null,
      })),
    },
  };
  const hostileDir = join(out, 'hostile', hostile.runId);
  mkdirSync(hostileDir, { recursive: true });
  writeFileSync(join(hostileDir, 'record.json'), JSON.stringify(hostile));
  await store.runFinished(hostile, { runDir: hostileDir, controller: 'ctl-test', journalCheck: 'record-only' });

  // GENERATED: the golden cable, first and last in three batches, its ib_write_bw drifting down in the last batch.
  const golden = { serial: 'GEN-GOLD-0001', runIds: [] as string[], bw: [] as number[] };
  const bws = [185.2, 185.0, 184.8, 185.1, 180.0, 174.5];
  for (let b = 0; b < 3; b++) {
    const batchId = `ctl-test:/lab/batch-${b + 1}`;
    await store.upsertBatch({
      id: batchId,
      name: `batch-${b + 1}`,
      dir: `/lab/batch-${b + 1}`,
      controller: 'ctl-test',
      manifest: 'box.csv',
      protocol_name: 'quick',
      golden_serial: golden.serial,
      cables: 4,
      tested: 4,
      drift_ok: b < 2 ? 1 : 0,
      drift_detail: null,
      updated_at: '2026-03-01T00:00:00.000Z',
    });
    for (const [i, role] of (['golden-first', 'golden-last'] as const).entries()) {
      const p = passRecord();
      const k = b * 2 + i;
      // Not the simulated lab's: a lab's golden cable, as a real batch would have it (generated here).
      const rec: RunRecord = {
        ...p,
        simulated: false,
        runId: `gen-golden-${k}`,
        startedAt: `2026-03-0${b + 3}T0${i * 6}:00:00.000Z`,
        cable: { ...p.cable, serial: golden.serial },
        benchmarks: { ...p.benchmarks, ibWriteBw: p.benchmarks.ibWriteBw ? { ...p.benchmarks.ibWriteBw, sumMedianGbps: bws[k]! } : null },
      };
      await store.runFinished(rec, {
        runDir: null,
        controller: 'ctl-test',
        batchId,
        batchRole: role,
        regression: { throughputPct: 5, busbwPct: 5, berDecades: 0.5, tempC: 5 },
      });
      golden.runIds.push(rec.runId);
      golden.bw.push(bws[k]!);
    }
  }
  // GENERATED: a cable of batch-3 tested five times (FAIL, FAIL, ERROR, MARGINAL, PASS): yield counts it once, by its
  // latest complete verdict (PASS), with its five runs beside it. Not the simulated lab's (simulated: false).
  const retest = {
    serial: 'GEN-RETEST-0001',
    runIds: [] as string[],
    outcomes: ['FAIL', 'FAIL', 'ERROR', 'MARGINAL', 'PASS'],
    batchId: 'ctl-test:/lab/batch-3',
  };
  for (const [i, outcome] of retest.outcomes.entries()) {
    const p = passRecord();
    const rec: RunRecord = {
      ...p,
      simulated: false,
      runId: `gen-retest-${i}`,
      label: 'cable-07',
      outcome: outcome as RunRecord['outcome'],
      reasons:
        outcome === 'PASS'
          ? p.reasons
          : [
              {
                rule: outcome === 'ERROR' ? 'transport' : 'fec-margin',
                message: `generated ${outcome}`,
                grade: outcome === 'ERROR' ? undefined : (outcome as 'FAIL'),
                node: 'spark-b',
                lane: 1,
                value: outcome === 'FAIL' ? 0.5 : 1.5,
                unit: 'decades',
              },
            ],
      startedAt: `2026-03-05T1${i}:00:00.000Z`,
      cable: { ...p.cable, serial: retest.serial },
    };
    await store.runFinished(rec, { runDir: null, controller: 'ctl-test', batchId: retest.batchId, batchRole: 'cable' });
    retest.runIds.push(rec.runId);
  }
  return { out, store, simRuns, hostileRunId: hostile.runId, golden, retest };
}

// A run that has started on a GENERATED station and has no record yet: its running row, as `run` writes it at its start.
export async function startRunning(store: ResultsStore, runId: string, label: string, scenario: string): Promise<void> {
  await store.runStarted({
    runId,
    label,
    startedAt: new Date().toISOString(),
    simulated: true,
    scenario,
    protocol: { name: 'quick', sha256: 'c'.repeat(64), file: 'protocols/quick.json' },
    nodes: [
      { name: 'spark-a', host: 'spark-a' },
      { name: 'spark-b', host: 'spark-b' },
    ],
    controller: 'ctl-test',
    runDir: null,
  });
}
