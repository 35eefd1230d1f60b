// A journal must not be re-graded into a better verdict (#22 items 1-3): its embedded protocol must be the one it
// recorded running (and a built-in's name a text cablequal shipped), a journal that says it was written chained must
// be chained, and its samples must agree with the raw `ethtool -S` dumps the node printed at the phase boundaries.
// Journals come from the simulated lab (quick protocol, seed 7); each edit keeps the hash chain valid (recomputed), as
// a forger with a script would, so each check is shown on its own.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/domain/record.js';
import { CHAIN_START, chainLine, lineHash } from '../../src/run/journal-chain.js';
import { runCli } from '../helpers/cli.js';
import { labRun } from '../faults/lab-run.js';

const journals: Record<string, Record<string, unknown>[]> = {};

beforeAll(async () => {
  for (const s of ['steady-lane-qsfp56', 'failing-clone', 'good-qsfp56']) {
    const r = await labRun({ scenario: s });
    journals[s] = readFileSync(join(r.runDir, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}, 180_000);

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

// The lines written back with a valid chain (every prev recomputed), or with no prev at all.
function write(lines: Record<string, unknown>[], opts: { chain: boolean } = { chain: true }): string {
  const dir = mkdtempSync(join(tmpdir(), 'cq-integrity-'));
  let prev = CHAIN_START;
  const out = lines.map((l) => {
    const o = { ...l };
    delete o['prev'];
    if (!opts.chain) return JSON.stringify(o);
    const line = chainLine(JSON.stringify(o), prev);
    prev = lineHash(line);
    return line;
  });
  writeFileSync(join(dir, 'journal.jsonl'), `${out.join('\n')}\n`);
  return dir;
}

async function grade(
  dir: string,
  ...args: string[]
): Promise<{ code: number; outcome: string; reasons: { rule: string; message: string }[]; record: RunRecord }> {
  const r = await runCli(['grade', dir, '--json', ...args]);
  const j = JSON.parse(r.out) as { outcome: string; reasons: { rule: string; message: string }[] };
  return { code: r.code, outcome: j.outcome, reasons: j.reasons, record: JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as RunRecord };
}

const clone = (s: string) => journals[s]!.map((l) => structuredClone(l));
const startOf = (lines: Record<string, unknown>[]) => lines[0] as { type: string; protocolText: string; protocol: { name: string; sha256: string } };

describe('the journal`s protocol is the one that ran', { timeout: 60_000 }, () => {
  it('untouched, re-chained journals grade as the runs did', async () => {
    expect((await grade(write(clone('steady-lane-qsfp56')))).outcome).toBe('MARGINAL');
    expect((await grade(write(clone('failing-clone')))).outcome).toBe('FAIL');
    expect((await grade(write(clone('good-qsfp56')))).outcome).toBe('PASS');
  });

  it('lane-ratio floors raised inside the embedded protocol of a MARGINAL run: ERROR journal-protocol, not PASS', async () => {
    const lines = clone('steady-lane-qsfp56');
    const start = startOf(lines);
    const p = JSON.parse(start.protocolText) as { limits: Record<string, unknown>[] };
    const lr = p.limits.find((l) => l['rule'] === 'lane-ratio')!;
    lr['marginalFloorBer'] = 0.5;
    lr['failFloorBer'] = 0.5;
    start.protocolText = JSON.stringify(p, null, 2);
    const g = await grade(write(lines));
    expect(g.outcome).toBe('ERROR');
    expect(g.code).toBe(3);
    expect(g.reasons[0]!.rule).toBe('journal-protocol');
    expect(g.reasons[0]!.message).toMatch(
      /^journal line 1 \(run-start\): the protocol text it embeds hashes to [0-9a-f]{64}, not to the [0-9a-f]{64} the run recorded/,
    );
    // The recorded hash made to match: the text is still none of the versions shipped as "quick".
    start.protocol.sha256 = sha(start.protocolText);
    const h = await grade(write(lines));
    expect(h.outcome).toBe('ERROR');
    expect(h.reasons[0]!.message).toContain('the protocol is named "quick", a built-in protocol, but its text');
  });

  it('the loaded soak shortened to 60 s in the protocol and the later samples dropped: ERROR, not PASS', async () => {
    const lines = clone('failing-clone');
    const start = startOf(lines);
    const p = JSON.parse(start.protocolText) as { phases: Record<string, unknown>[] };
    p.phases.find((x) => x['name'] === 'soak-loaded')!['durationS'] = 60;
    start.protocolText = JSON.stringify(p, null, 2);
    const g = await grade(write(lines));
    expect(g.outcome).toBe('ERROR');
    expect(g.reasons.map((r) => r.rule)).toEqual(['journal-protocol']);
  });

  it('other limits only with --protocol: the record names the protocol that ran and the one that graded', async () => {
    const dir = write(clone('steady-lane-qsfp56'));
    const mine = JSON.parse(readFileSync(join('protocols', 'quick.json'), 'utf8')) as { name: string; limits: Record<string, unknown>[] };
    mine.name = 'lab-lenient';
    mine.limits.find((l) => l['rule'] === 'lane-ratio')!['marginalFloorBer'] = 0.5;
    const file = join(dir, 'lab-lenient.json');
    writeFileSync(file, JSON.stringify(mine, null, 2));
    const g = await grade(dir, '--protocol', file);
    expect(g.outcome).toBe('PASS');
    expect(g.record.protocol.name).toBe('lab-lenient');
    expect(g.record.protocolRecorded).toMatchObject({ name: 'quick', sha256: startOf(journals['steady-lane-qsfp56']!).protocol.sha256 });
    const report = await runCli(['report', dir, '--protocol', file]);
    expect(report.code, report.err).toBe(0);
    const cert = readFileSync(join(dir, 'setup-check.html'), 'utf8'); // a quick run is a set-up check
    expect(cert).toContain('lab-lenient <span class="mono">sha256 ');
    expect(cert).toContain('; graded with these limits, not those of the protocol that ran: quick <span class="mono">sha256 ');
    expect(g.record.rules?.notes[0]).toMatch(
      /^graded with the limits of .*lab-lenient\.json \(lab-lenient, [0-9a-f]{64}\), not those of the protocol the run recorded \(quick, [0-9a-f]{64}\)$/,
    );
  });

  it('a protocol file that takes a built-in`s name on another text is refused for a new run (exit 2, naming it)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-builtin-'));
    const p = JSON.parse(readFileSync(join('protocols', 'quick.json'), 'utf8')) as { limits: Record<string, unknown>[] };
    p.limits.find((l) => l['rule'] === 'lane-ratio')!['fail'] = 999_999;
    writeFileSync(join(dir, 'quick.json'), JSON.stringify(p, null, 2));
    const r = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', join(dir, 'quick.json'), '--out', join(dir, 'reports'), '--db', 'off']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      'quick.json: name "quick" is a built-in protocol\'s, but this text is not one cablequal shipped: give your protocol a name of its own',
    );
  });
});

describe('a journal that says it was written chained', { timeout: 60_000 }, () => {
  it('with prev stripped from every line: ERROR journal-chain, not a legacy unchained journal', async () => {
    const g = await grade(write(clone('failing-clone'), { chain: false }));
    expect(g.outcome).toBe('ERROR');
    expect(g.reasons.map((r) => r.rule)).toEqual(['journal-chain']);
    expect(g.reasons[0]!.message).toContain('journal line 1 (run-start) says the journal was written with its hash chain, but no line carries one');
  });

  it('without its mark and without prev, as a journal written before the chain: graded, with the legacy note', async () => {
    const lines = clone('failing-clone');
    delete lines[0]!['chain'];
    const g = await grade(write(lines, { chain: false }));
    expect(g.outcome).toBe('FAIL');
    expect(g.record.journal.chain?.status).toBe('unchained');
  });
});

describe('the samples agree with the raw ethtool -S dumps', { timeout: 60_000 }, () => {
  it('the FAIL`s lane counters held at their first values in every sample (chain recomputed): ERROR naming the raw dump and the samples, never PASS', async () => {
    // The clone is clean while idle and runs away in the loaded soak, after the last phase boundary's dump: only the dump
    // at the run's end shows what the node counted.
    const lines = clone('failing-clone');
    expect((await grade(write(lines))).reasons[0]!.rule).toBe('fec-window');
    const firsts = new Map<string, unknown>();
    let held = 0;
    for (const l of lines) {
      if (l['type'] !== 'sample') continue;
      const sample = l['sample'] as { node: string; rails: { netdev: string; counters?: Record<string, unknown>; fec?: Record<string, unknown> }[] };
      for (const r of sample.rails) {
        for (const [bag, keys] of [
          [r.counters, Object.keys(r.counters ?? {}).filter((k) => /^(rx_err_lane_\d+|rx_corrected_bits|rx_crc_errors|rx_pcs_symbol_err)_phy$/.test(k))],
          [r.fec, ['correctedBits', 'correctedBlocks', 'uncorrectableBlocks']],
        ] as const) {
          for (const k of keys) {
            if (!bag || !(k in bag)) continue;
            const key = `${sample.node}/${r.netdev}/${k}`;
            if (!firsts.has(key)) firsts.set(key, bag[k]);
            (bag as Record<string, unknown>)[k] = firsts.get(key);
            held++;
          }
        }
      }
    }
    expect(held).toBeGreaterThan(1000);
    const g = await grade(write(lines));
    expect(g.outcome).toBe('ERROR');
    expect(g.reasons[0]!.rule).toBe('journal-raw-mismatch');
    expect(g.reasons[0]!.message).toMatch(
      /^journal line \d+ \(the raw ethtool -S of spark-[ab] \S+\) reads (rx_err_lane_\d|rx_corrected_bits)_phy = \d+, but (the sample on journal line \d+ read \d+ after it: a counter only grows|every sample of it, from journal line \d+ to line \d+, read \d+: the samples do not show the faults the node counted)/,
    );
  });

  it('the MARGINAL lane`s counter held at its first value in every sample: ERROR at the first phase boundary after the errors', async () => {
    const lines = clone('steady-lane-qsfp56');
    const firsts = new Map<string, unknown>();
    for (const l of lines) {
      if (l['type'] !== 'sample') continue;
      const sample = l['sample'] as { node: string; rails: { counters?: Record<string, unknown> }[] };
      for (const r of sample.rails) {
        if (!r.counters || !('rx_err_lane_0_phy' in r.counters)) continue;
        for (let lane = 0; lane < 4; lane++) {
          const k = `${sample.node}/rx_err_lane_${lane}_phy`;
          if (!firsts.has(k)) firsts.set(k, r.counters[`rx_err_lane_${lane}_phy`]);
          r.counters[`rx_err_lane_${lane}_phy`] = firsts.get(k);
        }
      }
    }
    const g = await grade(write(lines));
    expect(g.outcome).toBe('ERROR');
    expect(g.reasons[0]!.rule).toBe('journal-raw-mismatch');
    expect(g.reasons[0]!.message).toMatch(/reads rx_err_lane_\d_phy = \d+, but the sample on journal line \d+ read \d+ after it: a counter only grows/);
  });
});
