import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { parseProtocol } from '../../src/protocol/index.js';
import { runCli } from '../helpers/cli.js';

const REAL = ['spark-burnin', 'quick'].map((n) => readFileSync(join(process.cwd(), 'protocols', `${n}.json`), 'utf8'));

// parseProtocol may accept the text or throw a one-line UsageError that starts with the file's name; nothing else.
function onlyUsageErrors(text: string): string | null {
  try {
    const p = parseProtocol(text, 'bad.json');
    expect(typeof p.name).toBe('string');
    expect(p.phases.length).toBeGreaterThan(0);
    return null;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    expect(e.message).not.toContain('\n');
    expect(e.message.startsWith('bad.json: ')).toBe(true);
    return e.message;
  }
}

type Path = (string | number)[];
function pathsOf(v: unknown, at: Path = []): Path[] {
  const here = at.length ? [at] : [];
  if (Array.isArray(v)) return [...here, ...v.flatMap((x, i) => pathsOf(x, [...at, i]))];
  if (v && typeof v === 'object') return [...here, ...Object.entries(v).flatMap(([k, x]) => pathsOf(x, [...at, k]))];
  return here;
}

// Delete, or replace with another value, the node at one path of a parsed real protocol.
function mutate(root: unknown, path: Path, op: 'delete' | 'replace', value: unknown): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let parent: Record<string | number, unknown> = copy;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (op === 'delete') {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else parent[last] = value;
  return copy;
}

const oddValues = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(null, -1, 0, 1e308, -0.5, '', 'soak', 'ib_write_bw', '{rdmaDevice}', [], {}, true, Number.MAX_SAFE_INTEGER + 2),
);

describe('protocol loader under bad input (fast-check)', { timeout: 60_000 }, () => {
  it('random JSON values: only one-line UsageErrors', () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 4 }), (t) => void onlyUsageErrors(t)),
      { numRuns: 1500 },
    );
  });

  it('real protocols with one field deleted or replaced: accepted, or a one-line error naming the field path', () => {
    const docs = REAL.map((t) => JSON.parse(t) as unknown);
    const cases = docs.flatMap((d) => pathsOf(d).map((p) => ({ d, p })));
    expect(cases.length).toBeGreaterThan(100);
    let rejected = 0;
    fc.assert(
      fc.property(fc.constantFrom(...cases), fc.constantFrom('delete' as const, 'replace' as const), oddValues, ({ d, p }, op, v) => {
        const msg = onlyUsageErrors(JSON.stringify(mutate(d, p, op, v)));
        if (msg !== null) {
          rejected++;
          // "bad.json: phases[5].durationS: expected ..." — file, then the JSON path of the field at fault.
          expect(msg).toMatch(/^bad\.json: [A-Za-z$][\w$]*(?:\[\d+\]|\.[\w$]+)*: \S/);
        }
      }),
      { numRuns: 3000 },
    );
    expect(rejected).toBeGreaterThan(1000);
  });

  it('real protocol text truncated or with bytes spliced in: only one-line UsageErrors', () => {
    fc.assert(
      fc.property(fc.constantFrom(...REAL), fc.nat(), fc.string({ maxLength: 8 }), (t, at, ins) => {
        const k = at % (t.length + 1);
        void onlyUsageErrors(t.slice(0, k) + ins + t.slice(k + (at % 4)));
        void onlyUsageErrors(t.slice(0, k));
      }),
      { numRuns: 1500 },
    );
  });

  it('a key holding a newline (found by the splice property) is escaped: still one line', () => {
    const text = REAL[1]!.replace('"marginal": 100', '"ma\\nal": 100');
    expect(text).not.toBe(REAL[1]);
    expect(onlyUsageErrors(text)).toBe(
      'bad.json: limits[5].ma\\nal: expected no such key (known for lane-ratio: rule, fail, direction, marginal, unit, description, marginalFloorBer, failFloorBer, growingDecades, runawayDecades, minSpanC, windowS, holdS)',
    );
  });

  it('a mistake a user makes gives the exact message', () => {
    const doc = JSON.parse(REAL[0]!) as { phases: { durationS?: unknown }[] };
    doc.phases[5]!.durationS = '60m';
    expect(onlyUsageErrors(JSON.stringify(doc))).toBe('bad.json: phases[5].durationS: expected a whole number in [1, 259200] (seconds of load), got "60m"');
  });
});

describe('bad CLI input: exit 2, one stderr line, no stack trace', { timeout: 30_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cq-badcli-'));
  const bad = JSON.parse(REAL[1]!) as { earlyStop: Record<string, unknown> };
  bad.earlyStop.keepSamplingS = -5;
  writeFileSync(join(dir, 'bad.json'), JSON.stringify(bad, null, 2));
  writeFileSync(join(dir, 'broken.json'), REAL[1]!.slice(0, 200));

  it.each([
    [['run', '--sim', 'good-qsfp56', '--protocol', 'bad.json'], /^cablequal: bad\.json: earlyStop\.keepSamplingS: expected .*got -5$/],
    [['run', '--sim', 'good-qsfp56', '--protocol', 'broken.json'], /^cablequal: broken\.json: not valid JSON: /],
    [['run', '--sim', 'good-qsfp56', '--protocol', 'missing.json'], /^cablequal: .*missing\.json: cannot read protocol file \(ENOENT\)$/],
    [['run', '--sim', 'no-such-scenario'], /^cablequal: .*no-such-scenario/],
    [['run', '--nodes', 'spark-a'], /^cablequal: --nodes: a cable joins two nodes, got 1$/],
    [['run', '--nodes', 'a;rm -rf /,b'], /^cablequal: /],
    [['run', '--nodes', 'a,a'], /^cablequal: --nodes: the two nodes must differ$/],
    [['run', '--sim', 'good-qsfp56', '--sim-fault', 'ssh-drop@soon'], /^cablequal: bad fault "ssh-drop@soon": expected ssh-drop@900s/],
    [['run', '--sim', 'good-qsfp56', '--port', '7'], /^cablequal: --port: cage must be 0, 1 or auto, got "7"$/],
    [['preflight', '--sim', 'dual-cage', '--port', 'both'], /^cablequal: --port both: a preflight checks one cage: run it with --port 0, then with --port 1$/],
  ])('%j', async (argv, message) => {
    const r = await runCli(argv, { cwd: dir });
    expect(r.code, r.err).toBe(2);
    const lines = r.err.trimEnd().split('\n');
    expect(lines[0]).toMatch(message);
    // yargs' own usage errors add the hint of the command's --help; ours are exactly one line.
    expect(lines.filter((l) => !/^Run "cablequal( [a-z]+)* --help" for usage\.$/.test(l))).toHaveLength(1);
    expect(r.err).not.toMatch(/\n\s+at /);
    expect(r.out).toBe('');
  });
});
