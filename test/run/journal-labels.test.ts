// Labels the record derives instead of trusting (#32 item 1b). Each edit below is one of the attacks, made as
// a forger with a script would: the line edited, the hash chain recomputed, no lab key. Before the labels were derived
// the relabelled MARGINAL run graded PASS, the identity swap put the clone's serial on a PASS, and the "real" run
// stopped saying simulated; each now grades as the run did (or ERROR).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/domain/record.js';
import { CHAIN_START, chainLine, lineHash } from '../../src/run/journal-chain.js';
import { runCli } from '../helpers/cli.js';
import { labRun } from '../faults/lab-run.js';

type Line = Record<string, unknown>;
const journals: Record<string, Line[]> = {};

beforeAll(async () => {
  for (const s of ['steady-lane-qsfp56', 'failing-clone', 'good-qsfp56']) {
    const r = await labRun({ scenario: s });
    journals[s] = readFileSync(join(r.runDir, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Line);
  }
}, 180_000);

// The lines written back with every prev recomputed (a valid chain).
function write(lines: Line[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'cq-labels-'));
  let prev = CHAIN_START;
  const out = lines.map((l) => {
    const o = { ...l };
    delete o['prev'];
    const line = chainLine(JSON.stringify(o), prev);
    prev = lineHash(line);
    return line;
  });
  writeFileSync(join(dir, 'journal.jsonl'), `${out.join('\n')}\n`);
  return dir;
}

async function grade(dir: string): Promise<{ code: number; outcome: string; reasons: { rule: string; message: string }[]; record: RunRecord }> {
  const r = await runCli(['grade', dir, '--json']);
  const j = JSON.parse(r.out) as { outcome: string; reasons: { rule: string; message: string }[] };
  return { code: r.code, outcome: j.outcome, reasons: j.reasons, record: JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as RunRecord };
}

const clone = (s: string) => journals[s]!.map((l) => structuredClone(l));

describe('a sample`s phase comes from the phase timeline', { timeout: 60_000 }, () => {
  it('the untouched MARGINAL run re-chained grades MARGINAL with no relabelling note', async () => {
    const g = await grade(write(clone('steady-lane-qsfp56')));
    expect(g.outcome).toBe('MARGINAL');
    expect(g.record.rules?.notes.join('\n')).not.toMatch(/phase timeline/);
  });

  it.each([['nccl'], ['warm-up']])('soak samples relabelled %s: still MARGINAL, graded under the soaks, the relabelling noted', async (label) => {
    const lines = clone('steady-lane-qsfp56');
    let relabelled = 0;
    for (const l of lines)
      if (l['type'] === 'sample' && String(l['phase']).startsWith('soak')) {
        l['phase'] = label;
        relabelled++;
      }
    expect(relabelled).toBeGreaterThan(100);
    const g = await grade(write(lines));
    expect(g.outcome).toBe('MARGINAL');
    expect(g.reasons.some((r) => /soak/.test(r.message))).toBe(true);
    // Each node's first soak sample may carry the phase before (its tick was in flight at the boundary): relabelled
    // nccl, those two stand; no soak sample may carry a name the timeline never opened.
    const overridden = label === 'nccl' ? relabelled - 2 : relabelled;
    const note = g.record.rules!.notes.find((n) => /phase timeline/.test(n))!;
    expect(note).toMatch(new RegExp(`^${overridden} sample line\\(s\\) state a phase .*says "${label}", the timeline "soak-idle"`));
  });
});

describe('the cable`s identity comes from the raw EEPROM dumps', { timeout: 60_000 }, () => {
  it('the identity line of a PASS replaced by the clone`s: ERROR journal-identity naming both serials, not a PASS for the clone', async () => {
    const lines = clone('good-qsfp56');
    const cloneIdentity = clone('failing-clone').find((l) => l['type'] === 'identity')!;
    const i = lines.findIndex((l) => l['type'] === 'identity');
    const good = (lines[i]!['ends'] as { identity: { vendorSn: string } }[])[0]!.identity.vendorSn;
    const bad = (cloneIdentity['ends'] as { identity: { vendorSn: string } }[])[0]!.identity.vendorSn;
    expect(good).not.toBe(bad);
    lines[i] = { ...lines[i]!, ends: cloneIdentity['ends'] };
    const g = await grade(write(lines));
    expect(g.outcome).toBe('ERROR');
    expect(g.code).toBe(3);
    expect(g.reasons[0]!.rule).toBe('journal-identity');
    expect(g.reasons[0]!.message).toContain(`(identity): spark-a's end states`);
    expect(g.reasons[0]!.message).toMatch(/the identity in the journal is not the cable the run read/);
    expect(g.reasons[0]!.message).toContain(JSON.stringify(good));
  });

  it('the raw EEPROM dumps deleted as well: ERROR journal-identity (no dump to read the serial from)', async () => {
    const lines = clone('good-qsfp56').filter((l) => !(l['type'] === 'raw' && /^eeprom-/.test(String(l['what']))));
    const g = await grade(write(lines));
    expect(g.outcome).toBe('ERROR');
    expect(g.reasons[0]!.rule).toBe('journal-identity');
    expect(g.reasons[0]!.message).toMatch(/holds no raw EEPROM dump/);
  });
});

describe('"simulated" comes from the simulator`s own marks', { timeout: 60_000 }, () => {
  it('simulated: false everywhere, node facts and scenario rewritten: still simulated (the raw DMI strings are the lab`s)', async () => {
    const lines = clone('good-qsfp56');
    for (const l of lines) {
      if (l['type'] === 'run-start') {
        l['simulated'] = false;
        l['scenario'] = null;
        delete l['clockStartedAt'];
      }
      if (l['type'] === 'node-info') {
        const rec = l['record'] as Record<string, unknown>;
        delete rec['simulated'];
        rec['dmi'] = { sysVendor: 'NVIDIA', productName: 'DGX Spark' };
      }
    }
    const g = await grade(write(lines));
    expect(g.outcome).toBe('PASS');
    expect(g.record.simulated).toBe(true);
  });
});
