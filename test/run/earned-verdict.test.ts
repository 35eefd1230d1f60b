// A verdict is earned from the samples (#17 item 1) and the journal is hash-chained (#17): deleting the lines that
// explain a failed or unjudged run never turns it into a PASS. Journals come from the simulated lab (quick protocol,
// seed 7); "unchained" copies have every `prev` removed, as journals written before the chain look, so that the
// checks built from the evidence are shown on their own.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/domain/record.js';
import { CHAIN_START } from '../../src/run/journal-chain.js';
import { JournalWriter, readJournal } from '../../src/run/journal.js';
import { runCli } from '../helpers/cli.js';
import { labRun } from '../faults/lab-run.js';
import { asBeforeTheChain } from '../helpers/journal-lines.js';

const SCENARIOS = ['good-qsfp56', 'throttled-nic', 'single-rail', 'gpu-not-loaded', 'failing-clone'] as const;
const journals: Record<string, string[]> = {};

beforeAll(async () => {
  for (const s of SCENARIOS) {
    const r = await labRun({ scenario: s });
    journals[s] = readFileSync(join(r.runDir, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '');
  }
}, 120_000);

const typeOf = (line: string) => (JSON.parse(line) as { type: string }).type;
const unchain = asBeforeTheChain;

// Grade a journal given as lines; the record written beside it is returned with the CLI's answer.
async function grade(lines: string[]): Promise<{ code: number; outcome: string; rules: string[]; record: RunRecord; out: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'cq-earned-'));
  writeFileSync(join(dir, 'journal.jsonl'), `${lines.join('\n')}\n`);
  const r = await runCli(['grade', dir, '--json']);
  const j = JSON.parse(r.out) as { outcome: string; reasons: { rule: string }[] };
  const record = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as RunRecord;
  return { code: r.code, outcome: j.outcome, rules: j.reasons.map((x) => x.rule), record, out: r.out };
}

describe('a verdict earned from the samples (unchained journals: the evidence alone)', { timeout: 60_000 }, () => {
  it('the untouched journals grade as the runs did; unchained ones carry a note', async () => {
    const expected: Record<string, string> = {
      'good-qsfp56': 'PASS',
      'throttled-nic': 'ERROR',
      'single-rail': 'ERROR',
      'gpu-not-loaded': 'ERROR',
      'failing-clone': 'FAIL',
    };
    for (const s of SCENARIOS) {
      const chained = await grade(journals[s]!);
      expect(chained.outcome).toBe(expected[s]);
      expect(chained.record.journal.chain?.status).toBe('intact');
      const plain = await grade(unchain(journals[s]!));
      expect(plain.outcome).toBe(expected[s]);
      expect(plain.record.journal.chain?.status).toBe('unchained');
      expect(plain.record.journal.chain?.note).toMatch(/written before hash chaining/);
    }
  });

  it.each([
    ['throttled-nic', 'loopback-floor'],
    ['single-rail', 'nccl-rails'],
    ['gpu-not-loaded', 'gpu-util-min'],
  ])('%s without its setup-error line: still ERROR, %s recomputed from the journal', async (s, rule) => {
    const lines = unchain(journals[s]!).filter((l) => typeOf(l) !== 'setup-error');
    const g = await grade(lines);
    expect(g.outcome).toBe('ERROR');
    expect(g.code).toBe(3);
    expect(g.rules[0]).toBe(rule);
  });

  it('throttled-nic without its setup-error line nor its phase-end: ERROR on the loopback figures', async () => {
    const g = await grade(
      unchain(journals['throttled-nic']!).filter((l) => !['setup-error', 'phase-end'].includes(typeOf(l)) || !l.includes('"status":"error"')),
    );
    expect(g.outcome).toBe('ERROR');
    expect(g.rules).toContain('loopback-floor');
  });

  it('failing-clone without its decision line: FAIL, the early stop recomputed from the samples', async () => {
    const lines = unchain(journals['failing-clone']!).filter((l) => typeOf(l) !== 'decision');
    const g = await grade(lines);
    expect(g.outcome).toBe('FAIL');
    expect(g.rules[0]).toBe('fec-window');
    expect(g.record.decidedAtS).toBeGreaterThan(100);
  });

  it('good-qsfp56 without the loaded soak`s samples: ERROR (GPU load not shown, the soak not covered), never PASS', async () => {
    const lines = unchain(journals['good-qsfp56']!).filter((l) => !(typeOf(l) === 'sample' && l.includes('"phase":"soak-loaded"')));
    const g = await grade(lines);
    expect(g.outcome).toBe('ERROR');
    expect(g.rules).toContain('gpu-util-min');
    // Without a GPU-loaded soak in the protocol, the gap alone says it.
    const idle = unchain(journals['good-qsfp56']!).filter((l) => !(typeOf(l) === 'sample' && l.includes('"phase":"soak-idle"')));
    const gi = await grade(idle);
    expect(gi.outcome).toBe('ERROR');
    expect(gi.rules).toEqual(['sampling-gap', 'sampling-gap', 'samples-missing']);
    expect(gi.out).toMatch(/spark-a soak-idle: not one sample in the journal during the phase \([\d.]+ s to [\d.]+ s into the run\)/);
  });

  it('a run cut mid-soak (SIGKILL) with a run-end line appended: ERROR, the phase never ended', async () => {
    const lines = unchain(journals['good-qsfp56']!);
    const cut = lines.findIndex((l) => typeOf(l) === 'sample' && l.includes('"phase":"soak-idle"')) + 40;
    const g = await grade([...lines.slice(0, cut), JSON.stringify({ type: 'run-end', tS: 300, endedAt: '2026-06-01T00:05:00.000Z' })]);
    expect(g.outcome).toBe('ERROR');
    expect(g.rules).toContain('phase-unended');
    expect(g.rules).toContain('phase-missing');
    // Without the appended line it is what it is: ABORTED.
    expect((await grade(lines.slice(0, cut))).outcome).toBe('ABORTED');
  });

  it('a phase line deleted from a good run: ERROR naming the phase', async () => {
    const lines = unchain(journals['good-qsfp56']!).filter((l) => !(typeOf(l) === 'phase-end' && l.includes('"phase":"nccl"')));
    const g = await grade(lines);
    expect(g.outcome).toBe('ERROR');
    expect(g.out).toContain('phase nccl has no phase-end line in the journal');
  });

  it('sample lines deleted: the ticks are listed in the record, and with no gap or skip journaled for them, ERROR', async () => {
    const lines = unchain(journals['good-qsfp56']!).filter((l) => {
      if (typeOf(l) !== 'sample') return true;
      const s = JSON.parse(l) as { tick: number; node: string };
      return !(s.node === 'spark-b' && s.tick >= 120 && s.tick <= 123);
    });
    const g = await grade(lines);
    expect(g.outcome).toBe('ERROR');
    expect(g.rules).toEqual(['samples-missing']);
    expect(g.out).toContain('spark-b ticks 120-123: no sample line in the journal and no gap or skipped tick recorded for it');
    expect(g.record.journal.tickGaps).toEqual({ count: 1, ranges: [{ node: 'spark-b', fromTick: 120, toTick: 123, explained: false }] });
  });

  it('a gap the run journaled (an SSH drop of 20 s): listed as explained, the verdict stands', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['ssh-drop@150s+20s:spark-b'] });
    expect(r.record.outcome).toBe('PASS');
    const ranges = r.record.journal.tickGaps?.ranges ?? [];
    expect(ranges.length).toBeGreaterThan(0);
    expect(ranges.every((x) => x.node === 'spark-b' && x.explained)).toBe(true);
  });
});

describe('the journal`s hash chain', { timeout: 60_000 }, () => {
  it('every line carries the hash of the line before it; the record names the last line`s hash', async () => {
    const lines = journals['good-qsfp56']!;
    expect((JSON.parse(lines[0]!) as { prev: string }).prev).toBe(CHAIN_START);
    for (let i = 1; i < lines.length; i++) {
      expect((JSON.parse(lines[i]!) as { prev: string }).prev).toBe(
        createHash('sha256')
          .update(lines[i - 1]!)
          .digest('hex'),
      );
    }
    const g = await grade(lines);
    expect(g.record.journal.chain).toEqual({ status: 'intact', lastHash: createHash('sha256').update(lines.at(-1)!).digest('hex') });
  });

  const sampleAt = (lines: string[], k: number) => lines.findIndex((l, i) => i > k && typeOf(l) === 'sample');
  it.each([
    ['a line deleted', (l: string[]) => [...l.slice(0, 300), ...l.slice(301)], 301],
    ['two lines swapped', (l: string[]) => [...l.slice(0, 299), l[300]!, l[299]!, ...l.slice(301)], 300],
    ['a line duplicated', (l: string[]) => [...l.slice(0, 301), l[300]!, ...l.slice(301)], 302],
    ['a value edited', (l: string[]) => l.map((x, i) => (i === sampleAt(l, 350) ? x.replace('"errors":[]', '"errors":["edited"]') : x)), -1],
    ['a line without prev inserted', (l: string[]) => [...l.slice(0, 200), '{"type":"note","tS":1}', ...l.slice(200)], 201],
  ])('%s: ERROR journal-chain naming the line', async (_what, mutate, line) => {
    const lines = mutate(journals['good-qsfp56']!);
    const g = await grade(lines);
    expect(g.outcome).toBe('ERROR');
    expect(g.rules[0]).toBe('journal-chain');
    expect(g.record.journal.chain?.status).toBe('broken');
    const at = line === -1 ? sampleAt(journals['good-qsfp56']!, 350) + 2 : line;
    expect(g.record.journal.chain?.breaks?.[0]?.line).toBe(at);
    expect(g.out).toContain(`journal line ${at}: `);
  });

  it('a failed run`s decision line deleted from a chained journal: ERROR, the break named', async () => {
    const lines = journals['failing-clone']!;
    const at = lines.findIndex((l) => typeOf(l) === 'decision');
    const g = await grade([...lines.slice(0, at), ...lines.slice(at + 1)]);
    expect(g.outcome).toBe('ERROR');
    expect(g.out).toContain(`journal line ${at + 1}: its prev hash does not match the line before it`);
  });

  it('a writer appending to an existing journal continues its chain', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-chain-'));
    mkdirSync(dir, { recursive: true });
    const p = join(dir, 'journal.jsonl');
    const a = new JournalWriter(p);
    a.append({ type: 'one', tS: 0 });
    a.close();
    const b = new JournalWriter(p);
    b.append({ type: 'two', tS: 1 });
    b.close();
    const r = readJournal(p);
    expect(r.lines.map((l) => l.type)).toEqual(['one', 'two']);
    expect(r.chain).toMatchObject({ status: 'intact', breaks: [] });
    expect(r.chain!.lastHash).toBe(b.lastHash);
  });
});
