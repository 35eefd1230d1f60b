// #32 item 3: the run page's series endpoint reads only a regular journal below the journal bound, a chunk per turn
// of the event loop (a line never ended is dropped past MAX_JOURNAL_LINE, never held or scanned whole), makes each
// interval its chart row once, and answers an unchanged journal without downsampling it again. Over the journal of a
// real signed run of rules version 2 (test/fixtures/journals-v2/good-qsfp56-quick).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SeriesCache } from '../../src/dashboard/run-series.js';
import { MAX_ROWS, ReceiverRows } from '../../src/dashboard/series-rows.js';
import { UsageError } from '../../src/domain/errors.js';
import { INPUT_LIMITS } from '../../src/io/read-input.js';
import { MAX_JOURNAL_LINE } from '../../src/run/journal.js';

const dir = mkdtempSync(join(tmpdir(), 'cq-series-hostile-'));
const journal = gunzipSync(readFileSync(join(process.cwd(), 'test', 'fixtures', 'journals-v2', 'good-qsfp56-quick', 'journal.jsonl.gz')));
const good = join(dir, 'good.jsonl');
writeFileSync(good, journal);

describe('the series endpoint and hostile journals (#32 item 3)', () => {
  it('a FIFO, /dev/zero or a journal over the bound is refused at once, naming it (a FIFO blocked the whole dashboard)', async () => {
    const fifo = join(dir, 'fifo.jsonl');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    await expect(new SeriesCache().series('x', fifo)).rejects.toEqual(new UsageError(`${fifo}: a pipe, not a regular file`));
    symlinkSync('/dev/zero', join(dir, 'zero.jsonl'));
    await expect(new SeriesCache().series('x', join(dir, 'zero.jsonl'))).rejects.toThrow(/zero\.jsonl: a device, not a regular file$/);
    const big = join(dir, 'big.jsonl');
    writeFileSync(big, '');
    truncateSync(big, INPUT_LIMITS.journal.bytes + 1); // sparse
    await expect(new SeriesCache().series('x', big)).rejects.toThrow(`${big}: ${INPUT_LIMITS.journal.bytes + 1} bytes, more than the 768 MiB`);
  });

  it('a line that never ends is dropped past MAX_JOURNAL_LINE while other work goes on; the lines after it are read', async () => {
    const want = await new SeriesCache().series('x', good);
    const lines = journal.toString('utf8').trimEnd().split('\n');
    const hostile = join(dir, 'long-line.jsonl');
    writeFileSync(hostile, `${lines[0]}\n${'0'.repeat(MAX_JOURNAL_LINE + (1 << 20))}\n${lines.slice(1).join('\n')}\n`);
    // Another request's work, queued while the series is read: it runs before the read ends (one chunk per turn).
    let turns = 0;
    const tick = setInterval(() => turns++, 0);
    const got = await new SeriesCache().series('x', hostile);
    clearInterval(tick);
    expect(turns).toBeGreaterThan(10);
    expect(got.receivers.map((r) => r.rawPoints)).toEqual(want.receivers.map((r) => r.rawPoints));
    expect(got.receivers).toEqual(want.receivers);
    expect(got.phases).toEqual(want.phases);
  });

  it('an unchanged journal is answered with the series already made; a grown one is read from where it was', async () => {
    const cache = new SeriesCache();
    const lines = journal.toString('utf8').trimEnd().split('\n');
    const growing = join(dir, 'growing.jsonl');
    writeFileSync(growing, `${lines.slice(0, 200).join('\n')}\n`);
    const first = await cache.series('x', growing);
    expect(await cache.series('x', growing)).toBe(first); // the same object: not downsampled again
    writeFileSync(growing, `${lines.join('\n')}\n`);
    const grown = await cache.series('x', growing);
    expect(grown).not.toBe(first);
    expect(grown).toEqual(await new SeriesCache().series('x', good));
  });
});

describe("a long run's rows are merged as they come (#32 item 3)", () => {
  it('past MAX_ROWS a receiver holds at most MAX_ROWS + 1 rows, each bucket its maximum, the last reading as it is', () => {
    const r = new ReceiverRows('spark-a', 'soak-loaded');
    const n = 3 * MAX_ROWS + 7;
    for (let i = 0; i < n; i++) {
      // One lane, one burst at i = 12,345, and a last reading unlike the others.
      const rate = i === 12_345 ? 5e3 : i === n - 1 ? 7 : 1;
      r.add({ node: 'spark-a', tS: i + 1, phase: 'soak-loaded', laneRates: [rate], nicTempC: i === 20_000 ? 90 : i === n - 1 ? 42 : 50, dtS: 1 }, 1);
    }
    const rows = r.rows();
    expect(r.rawRows).toBe(n);
    expect(rows.length).toBeLessThanOrEqual(MAX_ROWS + 1);
    expect(rows.length).toBeGreaterThan(MAX_ROWS / 4);
    expect(rows.at(-1)).toEqual({ tS: n, values: [7 / r.laneRateBps, 42, expect.any(Number)] });
    // The burst and the hot spike are each in exactly one merged row, at their values (a bucket keeps its maximum).
    expect(rows.filter((x) => x.values[0] === 5e3 / r.laneRateBps)).toHaveLength(1);
    expect(
      rows
        .slice(0, -1)
        .map((x) => x.values[1])
        .sort(),
    ).toEqual([...Array(rows.length - 2).fill(50), 90]);
    const times = rows.map((x) => x.tS);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    // The running bound is the last reading's: the certificate's headline, whatever was merged before it.
    // (n - 2 intervals of 1 error, the burst's 5,000 and the last one's 7.)
    expect(r.soakBound()).toEqual([{ lane: 0, errors: n - 2 + 5e3 + 7, seconds: n, ub95: expect.any(Number) }]);
  });
});
