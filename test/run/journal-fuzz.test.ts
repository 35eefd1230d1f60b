// #17 "Done when": journals of FAIL, ERROR and ABORTED runs, with lines deleted, reordered, duplicated and mutated,
// go through `grade` (gradeRunDir, what the command runs): none grades PASS (or MARGINAL), none crashes (a damaged
// run-start or protocol is the one-line usage error grade prints). Chained journals (as written today) broken inside
// grade ERROR; the same journals unchained (as written before the chain) rest on the checks built from the evidence.
// Deterministic: fast-check with a fixed seed; the journals come from the simulated lab (quick protocol, seed 7).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { gradeRunDir } from '../../src/cli/grade-command.js';
import { canonicalJson } from '../../src/report/canonical-json.js';
import { verifyCertificate } from '../../src/report/certificate-json.js';
import { RULES_VERSION } from '../../src/rules/versions.js';
import { labRun } from '../faults/lab-run.js';
import { asBeforeTheChain } from '../helpers/journal-lines.js';
import { unpackFixtureRun } from '../helpers/journals-v1.js';

interface Journal {
  name: string;
  outcome: string;
  lines: string[];
}
const journals: Journal[] = [];

beforeAll(async () => {
  const runs = [
    { name: 'failing-clone', run: () => labRun({ scenario: 'failing-clone' }) },
    { name: 'throttled-nic', run: () => labRun({ scenario: 'throttled-nic' }) },
    { name: 'single-rail', run: () => labRun({ scenario: 'single-rail' }) },
    { name: 'killed mid soak-idle', run: () => labRun({ scenario: 'good-qsfp56', abortAtS: 90 }) },
  ];
  for (const r of runs) {
    const res = await r.run();
    const { readFileSync } = await import('node:fs');
    journals.push({
      name: r.name,
      outcome: res.record.outcome,
      lines: readFileSync(join(res.runDir, 'journal.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l !== ''),
    });
  }
}, 120_000);

const unchain = asBeforeTheChain;

const ODD: unknown[] = [null, {}, [], '', 'x', -1, 0, 1e308, true, 'PASS', 'done', { rule: 'x', message: 'y' }];

// One edit of a journal's lines; `at` is the smallest original line index it touched.
type Edit = { kind: 'delete' | 'swap' | 'duplicate' | 'mutate' | 'append-end'; i: number; j: number; path: number; odd: number; del: boolean };
const editArb: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom('delete', 'delete', 'swap', 'duplicate', 'mutate', 'mutate', 'append-end'),
  i: fc.nat(),
  j: fc.nat(),
  path: fc.nat(),
  odd: fc.nat(ODD.length - 1),
  del: fc.boolean(),
});

type Path = (string | number)[];
function pathsOf(v: unknown, at: Path = [], out: Path[] = []): Path[] {
  if (at.length) out.push(at);
  if (Array.isArray(v)) v.forEach((x, k) => pathsOf(x, [...at, k], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) pathsOf(x, [...at, k], out);
  return out;
}

// Apply the edits; line 0 (run-start) is only ever mutated, never moved. Returns whether every edit stayed clear of
// the journal's last line (the one place the chain cannot see an edit: nothing follows it).
function apply(lines: string[], edits: Edit[]): { lines: string[]; insideOnly: boolean } {
  const out = [...lines];
  let insideOnly = true;
  for (const e of edits) {
    const n = out.length;
    if (n < 3) break;
    const i = 1 + (e.i % (n - 1));
    const j = 1 + (e.j % (n - 1));
    if (e.kind !== 'append-end' && (i >= n - 1 || (e.kind === 'swap' && j >= n - 1))) insideOnly = false;
    if (e.kind === 'delete') out.splice(i, 1);
    if (e.kind === 'swap') [out[i], out[j]] = [out[j]!, out[i]!];
    if (e.kind === 'duplicate') out.splice(i, 0, out[j]!);
    if (e.kind === 'append-end') out.push(JSON.stringify({ type: 'run-end', tS: 9999, endedAt: '2026-06-01T03:00:00.000Z' }));
    if (e.kind === 'mutate') {
      const k = e.i % n; // the run-start line too
      if (k === n - 1) insideOnly = false;
      const line = JSON.parse(out[k]!) as Record<string | number, unknown>;
      const paths = pathsOf(line).filter((p) => p[0] !== 'type');
      if (!paths.length) continue;
      const path = paths[e.path % paths.length]!;
      let parent = line;
      for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
      const last = path[path.length - 1]!;
      if (e.del) {
        if (Array.isArray(parent)) parent.splice(last as number, 1);
        else delete parent[last];
      } else parent[last] = structuredClone(ODD[e.odd]);
      out[k] = JSON.stringify(line);
    }
  }
  return { lines: out, insideOnly };
}

const dir = mkdtempSync(join(tmpdir(), 'cq-jfuzz-'));
function gradeLines(lines: string[]): { outcome: string; chain?: string } | 'usage' {
  writeFileSync(join(dir, 'journal.jsonl'), `${lines.join('\n')}\n`);
  try {
    const r = gradeRunDir(dir);
    expect(() => JSON.stringify(r)).not.toThrow();
    return { outcome: r.outcome, ...(r.journal.chain ? { chain: r.journal.chain.status } : {}) };
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError); // no readable run-start, or its protocol text no longer parses: one line
    expect((e as Error).message).not.toContain('\n');
    return 'usage';
  }
}

describe('mutated journals of FAIL, ERROR and ABORTED runs never grade PASS', { timeout: 60_000 }, () => {
  it('the runs are what they should be, and grade so untouched', () => {
    expect(journals.map((j) => `${j.name}:${j.outcome}`)).toEqual([
      'failing-clone:FAIL',
      'throttled-nic:ERROR',
      'single-rail:ERROR',
      'killed mid soak-idle:ABORTED',
    ]);
    for (const j of journals) {
      expect(gradeLines(j.lines)).toEqual({ outcome: j.outcome, chain: 'intact' });
      expect(gradeLines(unchain(j.lines))).toEqual({ outcome: j.outcome, chain: 'unchained' });
    }
  });

  it('chained (as written today): never PASS or MARGINAL; any edit before the last line is ERROR', () => {
    fc.assert(
      fc.property(fc.nat(journals.length - 1), fc.array(editArb, { minLength: 1, maxLength: 3 }), (k, edits) => {
        const j = journals[k]!;
        const { lines, insideOnly } = apply(j.lines, edits);
        const g = gradeLines(lines);
        if (g === 'usage') return;
        expect(['FAIL', 'ERROR', 'ABORTED'], `${j.name} ${JSON.stringify(edits)}`).toContain(g.outcome);
        if (insideOnly && lines.join('\n') !== j.lines.join('\n')) {
          expect(g, `${j.name} ${JSON.stringify(edits)}`).toEqual({ outcome: 'ERROR', chain: 'broken' });
        }
      }),
      { numRuns: 70, seed: 17017 },
    );
  });

  it('unchained (as written before the chain): never PASS or MARGINAL, on the evidence alone', () => {
    const plain = journals.map((j) => ({ ...j, lines: unchain(j.lines) }));
    fc.assert(
      fc.property(fc.nat(plain.length - 1), fc.array(editArb, { minLength: 1, maxLength: 3 }), (k, edits) => {
        const j = plain[k]!;
        const g = gradeLines(apply(j.lines, edits).lines);
        if (g === 'usage') return;
        expect(['FAIL', 'ERROR', 'ABORTED'], `${j.name} ${JSON.stringify(edits)}`).toContain(g.outcome);
      }),
      { numRuns: 70, seed: 17017 },
    );
  });

  it('unchained: the lines that explain each outcome deleted, in every combination, never PASS or MARGINAL', () => {
    // Every combination of the four that state an outcome, and each other type of line on its own.
    const stating = ['setup-error', 'decision', 'aborted', 'phase-end'];
    const others = ['phase-start', 'sampling', 'benchmark', 'run-end', 'identity', 'node-info', 'throughput', 'sample'];
    const drops = [...Array.from({ length: 15 }, (_, m) => stating.filter((_, b) => (m + 1) & (1 << b))), ...others.map((t) => [t])];
    for (const j of journals) {
      const plain = unchain(j.lines);
      for (const drop of drops) {
        const lines = plain.filter((l, i) => i === 0 || !drop.includes((JSON.parse(l) as { type: string }).type));
        const withEnd = lines.some((l) => l.includes('"type":"run-end"'))
          ? lines
          : [...lines, JSON.stringify({ type: 'run-end', tS: 9999, endedAt: '2026-06-01T03:00:00.000Z' })];
        for (const variant of [lines, withEnd]) {
          const g = gradeLines(variant);
          expect(g, `${j.name} without ${drop.join(', ')}`).not.toBe('usage');
          expect(['FAIL', 'ERROR', 'ABORTED'], `${j.name} without ${drop.join(', ')}`).toContain((g as { outcome: string }).outcome);
        }
      }
    }
  });
});

// #22 items 1-2: the protocol a journal embeds edited (a limit, a setting, a phase's duration, deleted or replaced by an
// odd value; the run-start's recorded hash made to match or not; the chain recomputed or stripped): a FAIL, ERROR or
// ABORTED run never grades PASS or MARGINAL, and with the recorded hash left alone it is ERROR.
describe('mutated embedded protocols never grade better', { timeout: 60_000 }, () => {
  const protocolEdit = fc.record({
    path: fc.nat(),
    odd: fc.nat(ODD.length - 1),
    del: fc.boolean(),
    rehash: fc.boolean(),
    chain: fc.constantFrom('kept', 'recomputed', 'stripped'),
  });
  it('any edit of the protocol text: never PASS or MARGINAL; with the recorded hash left alone (the chain recomputed): ERROR', async () => {
    const { createHash } = await import('node:crypto');
    const { CHAIN_START, chainLine, lineHash } = await import('../../src/run/journal-chain.js');
    fc.assert(
      fc.property(fc.nat(journals.length - 1), protocolEdit, (k, e) => {
        const j = journals[k]!;
        const lines = j.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
        const start = lines[0]!;
        const protocol = JSON.parse(String(start['protocolText'])) as Record<string | number, unknown>;
        const paths = pathsOf(protocol).filter((p) => !['$schema', 'description'].includes(String(p[0])));
        const path = paths[e.path % paths.length]!;
        let parent = protocol;
        for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
        const last = path[path.length - 1]!;
        if (e.del) {
          if (Array.isArray(parent)) parent.splice(last as number, 1);
          else delete parent[last];
        } else parent[last] = structuredClone(ODD[e.odd]);
        start['protocolText'] = JSON.stringify(protocol, null, 2);
        if (e.rehash) (start['protocol'] as Record<string, unknown>)['sha256'] = createHash('sha256').update(String(start['protocolText'])).digest('hex');
        let prev = CHAIN_START;
        const out = lines.map((l) => {
          const o = { ...l };
          if (e.chain === 'kept') return JSON.stringify(o); // the old prev: the chain breaks after the edited first line
          delete o['prev'];
          if (e.chain === 'stripped') return JSON.stringify(o);
          const line = chainLine(JSON.stringify(o), prev);
          prev = lineHash(line);
          return line;
        });
        const g = gradeLines(out);
        if (g === 'usage') return;
        expect(['FAIL', 'ERROR', 'ABORTED'], `${j.name} ${JSON.stringify(e)} ${JSON.stringify(path)}`).toContain(g.outcome);
        if (!e.rehash && e.chain === 'recomputed') expect(g.outcome, `${j.name} ${JSON.stringify(path)}`).toBe('ERROR');
      }),
      { numRuns: 60, seed: 22022 },
    );
  });
});

// #22 item 4: the certificate's top level mutated (keys added beside body and signature, removed, renamed, their values
// replaced, the signature respelt) never verifies, whatever form the file is written in, and never throws.
describe('mutated certificate top-level keys never verify', { timeout: 60_000 }, () => {
  const src = join(process.cwd(), 'test', 'fixtures', 'journals-v2', 'good-qsfp56-quick');
  const runDir = mkdtempSync(join(tmpdir(), 'cq-cfuzz-'));
  unpackFixtureRun('journals-v2', 'good-qsfp56-quick', runDir);
  const original = JSON.parse(readFileSync(join(src, 'certificate.json'), 'utf8')) as Record<string, unknown>;
  const publicKeyPem = readFileSync(join(process.cwd(), 'test', 'fixtures', 'journals-v2', 'lab-key.pub.pem'), 'utf8');
  const cert = join(runDir, 'certificate.json');
  const verify = () =>
    verifyCertificate(cert, {
      regrade: async (dir, rulesVersion) => gradeRunDir(dir, undefined, rulesVersion),
      currentRulesVersion: RULES_VERSION,
      publicKeyPem,
    });
  const KEYS = ['body', 'signature', 'unsignedReason', 'outcome', 'approvedBy', 'verdict', '', '__proto__', 'Body', 'signature ', 'schema'];
  const sig = original['signature'] as string;
  const SIGS: unknown[] = [
    sig.replace(/=+$/, ''),
    `${sig}==`,
    `${sig}junk`,
    Buffer.from(sig, 'base64').toString('base64url'),
    sig.toLowerCase(),
    null,
    5,
    [sig],
    { sig },
    '',
  ];
  type TopEdit = { kind: 'add' | 'delete' | 'rename' | 'replace' | 'respell'; key: number; to: number; odd: number; sig: number };
  const topEdit: fc.Arbitrary<TopEdit> = fc.record({
    kind: fc.constantFrom('add', 'add', 'delete', 'rename', 'replace', 'respell'),
    key: fc.nat(KEYS.length - 1),
    to: fc.nat(KEYS.length - 1),
    odd: fc.nat(ODD.length - 1),
    sig: fc.nat(SIGS.length - 1),
  });

  it('the untouched certificate verifies (the property below is not vacuous)', async () => {
    writeFileSync(cert, `${canonicalJson(original)}\n`);
    expect((await verify()).ok).toBe(true);
  });

  it('any one to three edits of the top level: NOT VERIFIED with problems, canonical or re-saved, never a throw', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(topEdit, { minLength: 1, maxLength: 3 }), fc.boolean(), async (edits, pretty) => {
        const doc: Record<string, unknown> = structuredClone(original);
        for (const e of edits) {
          const key = KEYS[e.key]!;
          if (e.kind === 'add' && !['body', 'signature'].includes(key))
            Object.defineProperty(doc, key, { value: structuredClone(ODD[e.odd]), enumerable: true, configurable: true, writable: true });
          if (e.kind === 'delete') delete doc[['body', 'signature'][e.key % 2]!];
          if (e.kind === 'rename' && KEYS[e.to] !== 'body' && KEYS[e.to] !== 'signature') {
            const from = ['body', 'signature'][e.key % 2]!;
            Object.defineProperty(doc, KEYS[e.to]!, { value: doc[from], enumerable: true, configurable: true, writable: true });
            delete doc[from];
          }
          if (e.kind === 'replace') doc[['body', 'signature'][e.key % 2]!] = structuredClone(ODD[e.odd]);
          if (e.kind === 'respell') doc['signature'] = structuredClone(SIGS[e.sig]);
        }
        if (canonicalJson(doc) === canonicalJson(original)) return; // the edits cancelled out
        writeFileSync(cert, pretty ? JSON.stringify(doc, null, 2) : `${canonicalJson(doc)}\n`);
        const r = await verify();
        expect(r.ok, JSON.stringify(edits)).toBe(false);
        expect(r.problems.length).toBeGreaterThan(0);
        for (const p of r.problems) expect(p).not.toContain('\n');
      }),
      { numRuns: 80, seed: 22004 },
    );
  });
});
