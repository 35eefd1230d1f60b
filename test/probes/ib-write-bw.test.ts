import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIbWriteBw } from '../../src/probes/ib-write-bw.js';
import { sample, samplesIn } from '../helpers/samples.js';
import { fuzzLauncherPrefixes, fuzzParser } from '../helpers/fuzz.js';
import { parseErrorOf } from '../helpers/parse-error.js';

// Drop the first n lines of a paste (shell prompt + command line the harness never sees).
const dropLines = (text: string, n: number): string => text.split('\n').slice(n).join('\n');

const parseError = parseErrorOf;

const spark1 = () => dropLines(sample('ib_write_bw/dgx-spark-playbooks-client1-rocep1s0f0-run-infinitely.txt'), 1);
const spark2 = () => dropLines(sample('ib_write_bw/dgx-spark-playbooks-client2-roceP2p1s0f0-run-infinitely.txt'), 1);
const cx6All = () => dropLines(sample('ib_write_bw/node0-cx6-ib-hdr-client-all-sizes-mbsec-cpufreq-warnings.txt'), 1);
// Every line of this paste is quoted with "> ", inside a Markdown fence, after a shell prompt.
const issue132 = () =>
  sample('ib_write_bw/perftest-issue132-client-a-report-gbits-ext-and-normal-rows-quoted-partial.txt')
    .split('\n')
    .map((l) => l.replace(/^> ?/, ''))
    .filter((l) => !l.startsWith('```') && !l.startsWith('[root@'))
    .join('\n');
// First line is the command the author ran, then a blank line.
const promax = () => dropLines(sample('ib_write_bw/promaxgb10-client-single-rail-q4-rdmacm-report-gbits.txt'), 2);
const cx5Bidir = () => sample('ib_write_bw/cx5-roce-100g-client-bidir-D5-report-gbits.txt');
const pr342 = () => sample('ib_write_bw/perftest-pr342-rdma-cm-roce-header-lockfree-ddp-D-rows-partial.txt');
const degraded = () => sample('ib_write_bw/spark-hotplug-degraded-single-rail-1MiB-5000-iters.txt');
// NVIDIA harness log: keep only what ib_write_bw itself printed (drop the script's command and INFO lines).
const ngcHeaderOnly = () =>
  sample('ib_write_bw/ngc-multinode-perf-issue108-bidir-D30-q2-cmdlines-and-header-partial.txt')
    .split('\n')
    .filter((l) => !l.startsWith('INFO:') && !l.startsWith('ngc_rdma_test.sh'))
    .join('\n');

describe('parseIbWriteBw on real samples', () => {
  it('reads the Spark rail-1 run_infinitely client rows (92.57 Gb/s, peak not measured)', () => {
    const r = parseIbWriteBw(spark1());
    expect(r.device).toBe('rocep1s0f0');
    expect(r.test).toBe('RDMA_Write');
    expect(r.bidirectional).toBe(false);
    expect(r.role).toBe('client');
    expect(r.unit).toBe('Gb/s');
    expect(r.peakMeasured).toBe(false);
    expect(r.rows).toHaveLength(5);
    expect(r.rows[0]).toEqual({ bytes: 65536, iterations: 882805, bwPeakGbps: null, bwAverageGbps: 92.57, msgRateMpps: 0.176554 });
    expect(r.rows[3]!.bwAverageGbps).toBe(92.56);
    expect(r.rows[4]!.iterations).toBe(882821);
    expect(r.notes).toEqual([]);
  });

  it('reads the Spark rail-2 rows on roceP2p1s0f0; the two rails sum to the guide figure 189.85 Gb/s', () => {
    const r2 = parseIbWriteBw(spark2());
    expect(r2.device).toBe('roceP2p1s0f0');
    expect(r2.rows).toHaveLength(6);
    expect(r2.rows.map((x) => x.bwAverageGbps)).toEqual([97.28, 97.28, 97.28, 97.28, 97.29, 97.28]);
    const r1 = parseIbWriteBw(spark1());
    expect(r1.rows[0]!.bwAverageGbps + r2.rows[0]!.bwAverageGbps).toBeCloseTo(189.85, 6);
  });

  it('reads the degraded 13 Gb/s result row that was published without a header', () => {
    const r = parseIbWriteBw(degraded());
    expect(r.rows).toEqual([{ bytes: 1048576, iterations: 5000, bwPeakGbps: 13.22, bwAverageGbps: 13.22, msgRateMpps: 0.001576 }]);
    expect(r.device).toBeNull();
    expect(r.role).toBeNull();
    expect(r.test).toBeNull();
    expect(r.peakMeasured).toBe(true);
  });

  it('converts the -a MB/sec table of a CX-6 HDR client to Gb/s, skipping interleaved CPU-frequency warnings', () => {
    const r = parseIbWriteBw(cx6All());
    expect(r.unit).toBe('MB/s');
    expect(r.device).toBe('mlx5_0');
    expect(r.role).toBe('client');
    expect(r.peakMeasured).toBe(true);
    expect(r.rows).toHaveLength(23);
    expect(r.rows[0]).toMatchObject({ bytes: 2, iterations: 5000, msgRateMpps: 2.588087 });
    // perftest's MB is 2^20 bytes ("MB=2^20 byte, while Gb=10^9 bits", perftest --help; format_factor 0x100000).
    expect(r.rows[0]!.bwPeakGbps).toBeCloseTo((4.96 * 1048576 * 8) / 1e9, 12);
    const last = r.rows[22]!;
    expect(last.bytes).toBe(8388608);
    expect(last.bwPeakGbps).toBeCloseTo(195.68, 2); // 23326.82 MB/s x 2^20 x 8 / 1e9 = 195.6795
    expect(last.bwAverageGbps).toBeCloseTo(195.6, 2); // 23317.65 MB/s = 195.6025 Gb/s (HDR 4x: 200 Gb/s line rate)
    expect(last.bwAverageGbps).toBeCloseTo((23317.65 * 1048576 * 8) / 1e9, 9);
    expect(r.rows.map((x) => x.bytes).slice(0, 4)).toEqual([2, 4, 8, 16]);
  });

  it('reads MB/sec and MiB/sec as the same unit: 2^20 bytes per second (MB/sec read as 10^6 would under-read by 4.9 %)', () => {
    const mb = parseIbWriteBw(cx6All());
    const mib = parseIbWriteBw(cx6All().replace('BW peak[MB/sec]    BW average[MB/sec]', 'BW peak[MiB/sec]    BW average[MiB/sec]'));
    expect(mib.unit).toBe('MiB/s');
    expect(mb.unit).toBe('MB/s');
    expect(mib.rows.map((x) => x.bwAverageGbps)).toEqual(mb.rows.map((x) => x.bwAverageGbps));
    expect(mib.rows[22]!.bwAverageGbps).toBeCloseTo((23317.65 * 1048576 * 8) / 1e9, 9);
    expect(mb.rows[22]!.bwAverageGbps / ((23317.65 * 8) / 1000)).toBeCloseTo(1.048576, 9);
  });

  it('reads REPORT_FMT_EXT 6-decimal rows next to normal rows (perftest issue 132)', () => {
    const r = parseIbWriteBw(issue132());
    expect(r.rows.map((x) => [x.bytes, x.bwPeakGbps, x.bwAverageGbps, x.msgRateMpps])).toEqual([
      [2, 0.04235, 0.042185, 2.636533],
      [4, 0.084507, 0.084457, 2.639276],
      [8, 0.17, 0.17, 2.641399],
    ]);
    expect(r.device).toBe('mlx5_0');
  });

  it('reads a bidirectional -D run: sum of both directions, peak not measured, stderr warning merged in', () => {
    const r = parseIbWriteBw(cx5Bidir());
    expect(r.bidirectional).toBe(true);
    expect(r.peakMeasured).toBe(false);
    expect(r.role).toBeNull(); // both sides of a -b run print TX depth
    expect(r.device).toBe('mlx5_0');
    expect(r.rows).toEqual([{ bytes: 65536, iterations: 560845, bwPeakGbps: null, bwAverageGbps: 98.02, msgRateMpps: 0.18695 }]);
  });

  it('accepts the newer Lock-free / Using DDP header and treats an all-zero peak as not measured', () => {
    const r = parseIbWriteBw(pr342());
    expect(r.device).toBe('mlx5_0');
    expect(r.peakMeasured).toBe(false);
    expect(r.rows).toEqual([{ bytes: 65536, iterations: 403504, bwPeakGbps: null, bwAverageGbps: 42.31, msgRateMpps: 0.080701 }]);
  });

  it('reads the GB10 single-rail 4-QP rdma_cm run (111.61 Gb/s)', () => {
    const r = parseIbWriteBw(promax());
    expect(r.device).toBe('rocep1s0f0');
    expect(r.rows).toEqual([{ bytes: 65536, iterations: 20000, bwPeakGbps: 111.62, bwAverageGbps: 111.61, msgRateMpps: 0.212877 }]);
  });

  it('recognises the server by its banner and keeps unknown informational lines as notes', () => {
    // Edited copy of a real client paste: the server banner and the CPU-speed line of newer perftest prepended
    // (their text as perftest prints it; not recorded together with these rows).
    const banner =
      'Using sampled CPU speed 3295 MHz over reported speed 5037 MHz\n\n' +
      '************************************\n' +
      '* Waiting for client to connect... *\n' +
      '************************************\n' +
      'Connected: Thu Apr 16 05:49:19 2026\n';
    const r = parseIbWriteBw(banner + promax());
    expect(r.role).toBe('server');
    expect(r.notes).toEqual(['Using sampled CPU speed 3295 MHz over reported speed 5037 MHz']);
    expect(r.rows[0]!.bwAverageGbps).toBe(111.61);
  });

  it('names the first unexpected line when no row follows (e.g. a connection error)', () => {
    // Edited: the real header cut before its table, followed by perftest's connection-failure messages.
    const head =
      promax().split('\n').slice(0, 14).join('\n') + "\n Couldn't connect to 192.168.10.11:18515\n Unable to open file descriptor for socket connection\n";
    const e = parseError(() => parseIbWriteBw(head));
    expect(e.line).toBe(15);
    expect(e.reason).toMatch(/^no result row: .*; first unexpected line: "Couldn't connect to 192\.168\.10\.11:18515"$/);
  });

  it('rejects a header with no result row (the wrong-GID-index failure, exit status 0)', () => {
    const e = parseError(() => parseIbWriteBw(ngcHeaderOnly()));
    expect(e.kind).toBe('ib_write_bw');
    expect(e.reason).toMatch(/^no result row: the test did not run \(check the GID index -x/);
  });

  it('rejects a result header followed by nothing', () => {
    const head = spark1().split('\n').slice(0, 23).join('\n');
    expect(head.split('\n').at(-1)).toContain('#bytes');
    expect(parseError(() => parseIbWriteBw(head)).reason).toMatch(/^no result row/);
  });

  it('rejects a damaged row and names its line', () => {
    const text = spark1().replace(' 65536      882802           0.00               92.57', ' 65536      882802           0.00               9x.57');
    const e = parseError(() => parseIbWriteBw(text));
    expect(e.line).toBe(25); // second row, after 23 header lines and the first row
    expect(e.reason).toContain('9x.57');
  });

  it('keeps a line it does not know after the closing dashes as a warning, and rejects garbage before the table', () => {
    // Issue #33: builds differ in what they print after the table, so an unknown line there is reported, never a failure.
    const r = parseIbWriteBw(promax() + '\nsomething else\n');
    expect(r.warnings).toEqual(['something else']);
    expect(r.rows).toEqual(parseIbWriteBw(promax()).rows);
    expect(parseError(() => parseIbWriteBw('hello world\n')).reason).toMatch(/first unexpected line: "hello world"/);
    const completionError = spark1() + '\n Completion with error at client\n';
    expect(parseError(() => parseIbWriteBw(completionError)).reason).toBe('unexpected line in the result table: "Completion with error at client"');
    expect(parseError(() => parseIbWriteBw('')).reason).toMatch(/^no result row/);
  });
});

// No real perftest output pasted behind a launcher prefix was found (docs/formats.md §6a); these are recorded samples
// with srun --label / --tag-output prefixes added at test time, in the layout the nccl-tests samples show.
describe('parseIbWriteBw behind a launcher prefix (prefixes added at test time to recorded samples)', () => {
  const label = (text: string, rank: number) =>
    text
      .split('\n')
      .map((l) => `${String(rank).padStart(2)}: ${l}`)
      .join('\n');

  it('reads a labelled client run as the unlabelled one and keeps the rank', () => {
    const r = parseIbWriteBw(label(spark1(), 1));
    expect(r.launcher).toEqual({ kind: 'srun --label', ranks: [1], resultRank: 1 });
    const { launcher: _, ...rest } = r;
    expect(rest).toEqual(parseIbWriteBw(spark1()));
    expect(r.rows[0]!.bwAverageGbps).toBe(parseIbWriteBw(spark1()).rows[0]!.bwAverageGbps);
  });

  it('refuses the runs of two ranks in one text (one job ran two perftests), naming the first line of the second rank', () => {
    const both = `${label(degraded(), 0)}\n${label(spark1(), 1)}`;
    const e = parseError(() => parseIbWriteBw(both));
    const first =
      degraded().split('\n').length +
      spark1()
        .split('\n')
        .findIndex((l) => l.includes('RDMA_Write BW Test'));
    expect(e.line).toBe(first + 1);
    expect(e.reason).toMatch(/^ib_write_bw run line from rank 1, but line \d+ came from rank 0: one ib_write_bw run per text$/);
  });
});

// Issue #33 item 1: the shapes other builds print around the table. The samples are constructed from perftest's source
// (the CUDA lines) and from the issue's description (the ionic build's lines), around a recorded table: their headers say so.
const cudaClient = () => sample('ib_write_bw/constructed-cuda-integrated-client-gpu-buffer-lines-around-promaxgb10-table.txt');
const ionicClient = () => sample('ib_write_bw/constructed-ionic-build-connected-completed-total-run-time-tabs-cpufreq.txt');
const promaxRow = { bytes: 65536, iterations: 20000, bwPeakGbps: 111.62, bwAverageGbps: 111.61, msgRateMpps: 0.212877 };

describe('parseIbWriteBw on the shapes other perftest builds print', () => {
  it('reads a CUDA build: its GPU lines before the header are notes, its buffer and context lines after the table are known', () => {
    const r = parseIbWriteBw(cudaClient());
    expect(r.rows).toEqual([promaxRow]);
    expect(r.device).toBe('rocep1s0f0');
    expect(r.role).toBe('client');
    expect(r.warnings).toEqual([]);
    expect(r.notes).toContain('initializing CUDA');
    expect(r.notes).toContain('allocated GPU buffer of a 524288 address at 0xfffe3c000000 for type CUDA_MEM_DEVICE');
  });

  it('reads the ionic build: Connected before, Completed and Total run time after, tabbed header fields, a CPU warning above the rows', () => {
    const r = parseIbWriteBw(ionicClient());
    expect(r.rows).toEqual([promaxRow]);
    expect(r.device).toBe('rocep1s0f0');
    expect(r.connected).toBe('Thu Apr 16 05:49:19 2026');
    expect(r.completed).toBe('Thu Apr 16 05:52:27 2026');
    expect(r.runTimeS).toBe(187.693);
    expect(r.warnings).toEqual([]);
    expect(r.notes).toEqual([]);
  });

  it('says null for what a build did not print', () => {
    const r = parseIbWriteBw(promax());
    expect([r.connected, r.completed, r.runTimeS, r.warnings]).toEqual([null, null, null, []]);
  });

  it('reads a table whose column header is tab-separated and whose row is all tabs', () => {
    const text = promax()
      .replace(/^ #bytes .*$/m, '#bytes\t#iterations\tBW peak[Gb/sec]\tBW average[Gb/sec]\tMsgRate[Mpps]')
      .replace(/^ 65536 .*$/m, '\t65536\t20000\t111.62\t111.61\t\t0.212877\t');
    expect(parseIbWriteBw(text).rows).toEqual([promaxRow]);
  });

  it('reads the --cpu_util column, the --report-per-port columns and the QoS #sl column by their names', () => {
    const cpu = promax().replace('MsgRate[Mpps]\n', 'MsgRate[Mpps]    CPU_Util[%]\n').replace('0.212877\n', '0.212877\t    12.34\n');
    expect(parseIbWriteBw(cpu).rows).toEqual([promaxRow]);
    const perPort = promax()
      .replace('MsgRate[Mpps]\n', 'MsgRate[Mpps]   BW Port1[Gb/sec]   MsgRate Port1[Mpps]   BW Port2[Gb/sec]   MsgRate Port2[Mpps]\n')
      .replace('0.212877\n', '0.212877        55.80            0.106438              55.81            0.106439\n');
    expect(parseIbWriteBw(perPort).rows).toEqual([promaxRow]);
    // RESULT_FMT_G_QOS: " #bytes    #sl      #iterations ..."; REPORT_FMT_QOS puts the service level second.
    const qos = promax().replace(' #bytes     #iterations', ' #bytes    #sl      #iterations').replace(' 65536      20000 ', ' 65536      3      20000 ');
    expect(parseIbWriteBw(qos).rows).toEqual([promaxRow]);
    const short = promax().replace('MsgRate[Mpps]\n', 'MsgRate[Mpps]    CPU_Util[%]\n');
    expect(parseError(() => parseIbWriteBw(short)).reason).toBe('result row must have 6 columns, found 5');
  });

  it('keeps an unknown line after the table and a warning inside it as warnings, in order, and still reads the rows', () => {
    const text = promax().replace('MsgRate[Mpps]\n', 'MsgRate[Mpps]\n WARNING: something the build warns about\n') + 'Freeing resources\t(done)\n';
    const r = parseIbWriteBw(text);
    expect(r.rows).toEqual([promaxRow]);
    expect(r.warnings).toEqual(['WARNING: something the build warns about', 'Freeing resources\t(done)']);
  });

  it('still refuses a malformed row inside the table, naming its line, whatever the build prints after it', () => {
    const text = ionicClient().replace('111.61\t\t', '111.6x\t\t');
    const e = parseError(() => parseIbWriteBw(text));
    expect(e.line).toBe(28);
    expect(e.reason).toBe('not a number: "111.6x"');
  });

  it('reads the summed table of --report-both and passes over its local and remote tables (write_bw.c)', () => {
    const part = (title: string, avg: string) =>
      `\n ${title} results: \n${'-'.repeat(87)}\n #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n 65536      20000            0.00               ${avg}\t\t     0.1\n`;
    const text = promax() + part('Local', '55.80') + '-'.repeat(87) + part('Remote', '55.81') + '-'.repeat(87) + '\n';
    const r = parseIbWriteBw(text);
    expect(r.rows).toEqual([promaxRow]);
    expect(r.warnings).toEqual([]);
  });

  it("refuses a second run after the first one's table: one run per text", () => {
    const e = parseError(() => parseIbWriteBw(`${promax()}\n${promax()}`));
    expect(e.reason).toBe("a second ib_write_bw run after the first one's result table: one run per text");
  });
});

describe('parseIbWriteBw properties of the lines around the table', () => {
  // A line no build prints as a known shape: printable text led by a letter the known shapes do not start with.
  const unknownLine = fc
    .tuple(fc.constantFrom('x', 'q', 'z', 'j'), fc.string({ unit: fc.constantFrom(...' \tabc:=/.-_0123456789KMG[]()'.split('')), maxLength: 60 }))
    .map(([a, b]) => `${a}${b}`);
  const known = fc.constantFrom(
    'Completed: Thu Apr 16 05:52:27 2026',
    'Total run time: 187.693s',
    'deallocating GPU buffer 0xfffe3c000000',
    'destroying current CUDA Ctx',
    '',
  );

  it('any lines after the closing dashes: the same rows; the unknown ones are the warnings, in order and trimmed', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(unknownLine, known), { maxLength: 8 }), fc.constantFrom('\n', '\r\n'), (after, eol) => {
        const r = parseIbWriteBw(`${promax()}${after.join(eol)}${eol}`);
        expect(r.rows).toEqual([promaxRow]);
        expect(r.warnings).toEqual(after.filter((l) => /^[xqzj]/.test(l)).map((l) => l.trim()));
      }),
      { numRuns: 200 },
    );
  });

  it('any whitespace between the columns of the header and the rows: the same rows', () => {
    const ws = fc.string({ unit: fc.constantFrom(' ', '\t'), minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(fc.array(ws, { minLength: 10, maxLength: 10 }), (gaps) => {
        const header = ['#bytes', '#iterations', 'BW peak[Gb/sec]', 'BW average[Gb/sec]', 'MsgRate[Mpps]'].map((c, i) => `${gaps[i]}${c}`).join('');
        const row = ['65536', '20000', '111.62', '111.61', '0.212877'].map((c, i) => `${gaps[i + 5]}${c}`).join('');
        const text = promax()
          .replace(/^ #bytes .*$/m, header)
          .replace(/^ 65536 .*$/m, row);
        expect(parseIbWriteBw(text).rows).toEqual([promaxRow]);
      }),
      { numRuns: 200 },
    );
  });
});

describe('parseIbWriteBw robustness', () => {
  it('only ever throws ParseError on random and mutated input', () => {
    const texts = samplesIn('ib_write_bw').map((f) => sample(f));
    fuzzParser(parseIbWriteBw, [spark1(), spark2(), cx6All(), issue132(), promax(), cx5Bidir(), pr342(), degraded(), cudaClient(), ionicClient(), ...texts]);
  });

  it('reads every sample behind either launcher prefix the same, and refuses a prefix that changes', () => {
    fuzzLauncherPrefixes(parseIbWriteBw, [spark1(), spark2(), cx6All(), issue132(), promax(), cx5Bidir(), pr342(), degraded(), cudaClient(), ionicClient()]);
  });
});
