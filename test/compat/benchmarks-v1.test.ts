// Benchmark lines of journals written before one ib_write_bw stream per direction and one NCCL rank per node: they
// keep reading as they did (bidirectional -b rows halved, one NCCL device list), and their protocol text, with the
// older one-line gpuLoad and single-context nccl template, still loads.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProtocol } from '../../src/protocol/load.js';
import { buildRecord } from '../../src/run/record-builder.js';
import { buildTimeseries } from '../../src/run/journal-series.js';
import { readJournal, type JournalContents } from '../../src/run/journal.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'journals-v1');
const RUNS = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

// The journal as the old version left it, read the way `cablequal grade` reads it (a torn last line dropped).
function journal(name: string): JournalContents {
  const file = join(mkdtempSync(join(tmpdir(), 'cq-v1-bench-')), 'journal.jsonl');
  writeFileSync(file, gunzipSync(readFileSync(join(FIXTURES, name, 'journal.jsonl.gz'))));
  return readJournal(file);
}

const recorded = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name, 'record.json'), 'utf8')) as { benchmarks: Record<string, any> };

describe('benchmark lines written by rules version 1', () => {
  it.each(RUNS)('%s: ib_write_bw and NCCL figures read back as recorded, without per-direction or per-rank fields', (name) => {
    const contents = journal(name);
    const record = buildRecord(contents, { journalFile: 'journal.jsonl', journalBytes: 0 });
    const before = recorded(name).benchmarks;
    expect(record.benchmarks.ibWriteBw).toEqual(before['ibWriteBw']);
    if (record.benchmarks.ibWriteBw) expect(record.benchmarks.ibWriteBw.perDirection).toBeUndefined();
    expect(record.benchmarks.nccl).toEqual(before['nccl']);
    if (record.benchmarks.nccl) expect(record.benchmarks.nccl.ranks).toBeUndefined();
  });

  it('their -b throughput rows are still halved into per-direction points, one series per rail', () => {
    const contents = journal('good-qsfp56-quick');
    const bench = contents.lines.find((l) => l.type === 'benchmark' && l.kind === 'ib_write_bw')!;
    expect(bench.bidirectional).toBe(true);
    const rows = bench.rows as { rail: number; gbps: number[] }[];
    const points = buildTimeseries(contents).throughput.filter((p) => p.tS <= Number(bench.tS));
    expect(points.filter((p) => p.rail === 0).map((p) => p.gbps)).toEqual(rows[0]!.gbps.map((g) => g / 2));
    expect(points.every((p) => p.direction === undefined)).toBe(true);
  });

  it('their protocol text (one-line gpuLoad, single-context nccl) still loads, so they re-grade under their own limits', () => {
    for (const name of RUNS) {
      const start = journal(name).lines.find((l) => l.type === 'run-start')!;
      const p = parseProtocol(String(start.protocolText), 'journal');
      expect(p.commands.gpuLoad).toEqual({ form: 'line', line: 'gpu_burn {durationS}' });
      expect(p.commands.ncclRank).toBeUndefined();
      expect(p.commands.nccl).toMatch(/\{hcaList\}/);
    }
  });
});
