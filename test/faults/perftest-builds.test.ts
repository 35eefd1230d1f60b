// Issue #33 item 1: a node whose perftest build prints lines after the closing dashes of a completed run (the loopback's
// -D runs): the known ones are read, an unknown one is reported as a warning and kept in the journal's raw dump of
// the client, never a failure. The scenario is good-qsfp56's with a trailer given to both nodes; generated text.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { labRun } from './lab-run.js';

const TRAILER = ['Completed: Mon Jun  1 00:01:10 2026', 'Total run time: 10.002s', 'Freeing resources (simulated build)'];

function scenarioWithTrailer(): string {
  const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8')) as { name: string; nodes: Record<string, unknown>[] };
  s.name = 'good-qsfp56-trailer';
  for (const n of s.nodes) n['perftestTrailer'] = TRAILER;
  const file = join(mkdtempSync(join(tmpdir(), 'cq-trailer-')), 'good-qsfp56-trailer.json');
  writeFileSync(file, JSON.stringify(s));
  return file;
}

describe('a perftest build that prints lines after the table', { timeout: 60_000 }, () => {
  it('loopback reads its figure; the unknown line is a warning per node and rail, the raw dump keeps every line', async () => {
    const warnings: string[] = [];
    const r = await labRun({ scenario: scenarioWithTrailer(), onWarning: (w) => warnings.push(w) });
    expect(r.record.outcome, JSON.stringify(r.record.reasons)).toBe('PASS');
    const unknown = warnings.filter((w) => w.includes('printed a line cablequal does not know'));
    expect(unknown.sort()).toEqual(
      ['spark-a rocep1s0f1', 'spark-a roceP2p1s0f1', 'spark-b rocep1s0f1', 'spark-b roceP2p1s0f1']
        .map((x) => `loopback ib_write_bw on ${x} printed a line cablequal does not know (kept in the journal): "Freeing resources (simulated build)"`)
        .sort(),
    );
    expect(warnings.some((w) => /Completed|Total run time/.test(w))).toBe(false);
    const dumps = r.journal.filter((l) => l.type === 'raw' && String(l['what']).startsWith('loopback-client:'));
    expect(dumps).toHaveLength(4);
    for (const d of dumps) expect(String(d['stdout'])).toContain(`---\n${TRAILER.join('\n')}\n`);
    expect(r.record.benchmarks.loopback).toHaveLength(4);
  });
});
