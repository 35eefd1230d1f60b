import { describe, expect, it } from 'vitest';
import { parseNccl } from '../../src/probes/nccl.js';
import { sample, samplesIn } from '../helpers/samples.js';
import { fuzzLauncherPrefixes, fuzzParser } from '../helpers/fuzz.js';
import { parseErrorOf } from '../helpers/parse-error.js';

const parseError = parseErrorOf;

// The spark-fb97 pastes start with the author's prompt and the multi-line mpirun command, and end with a prompt.
function withoutCommand(text: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.includes('./build/')) + 1;
  expect(start).toBeGreaterThan(0);
  return lines
    .slice(start)
    .filter((l) => !l.startsWith('mprg@'))
    .join('\n');
}

const fb97Ok = () => withoutCommand(sample('nccl/spark-fb97-all-gather-perf-1G-4G-rdma-ok.txt'));
const fb97Degraded = () => withoutCommand(sample('nccl/spark-fb97-all-gather-perf-degraded-after-recable.txt'));
const fb97Debug = () => withoutCommand(sample('nccl/spark-fb97-nccl-debug-init-net-excerpt.txt'));
const oci = () => sample('nccl/oci-a100-2node-all-reduce-1G-4G.txt');
const promax = () => sample('nccl/promaxgb10-all-gather-16G-playbook-cmd.txt');
const pr103First = () => sample('nccl/dgx-spark-playbooks-pr103-all-reduce-8K-8G-first-run-head-partial.txt');
const pr103Mtu = () => sample('nccl/dgx-spark-playbooks-pr103-all-reduce-8K-8G-mtu9000-head-partial.txt');

describe('parseNccl on real samples', () => {
  it('reads the healthy Spark all_gather table and footer (21.4033 GB/s), ignoring X11 authorization noise', () => {
    const r = parseNccl(fb97Ok());
    expect(r.collective).toBe('all_gather_perf');
    expect(r.version).toBe('2.18.3');
    expect(r.avgBusBandwidthGBs).toBe(21.4033);
    expect(r.outOfBounds).toEqual({ count: 0, ok: true });
    expect(r.rows).toHaveLength(3);
    expect(r.rows[0]).toEqual({
      size: 1073741824,
      count: 134217728,
      type: 'float',
      redop: 'none',
      root: -1,
      outOfPlace: { timeUs: 27211.0, algbwGBs: 39.46, busbwGBs: 19.73, wrong: 0 },
      inPlace: { timeUs: 25806.7, algbwGBs: 41.61, busbwGBs: 20.8, wrong: 0 },
    });
    expect(r.rows[2]!.inPlace.busbwGBs).toBe(22.46);
    expect(r.network).toBeNull(); // no NCCL_DEBUG in this run
    expect(r.netDevices).toEqual([]);
  });

  it('reads the degraded run after re-cabling (busbw 2.8 GB/s, integer times like 191408)', () => {
    const r = parseNccl(fb97Degraded());
    expect(r.avgBusBandwidthGBs).toBe(2.82151);
    expect(r.rows.map((x) => x.outOfPlace.timeUs)).toEqual([191408, 381038, 760506]);
    expect(r.rows.map((x) => x.outOfPlace.busbwGBs)).toEqual([2.8, 2.82, 2.82]);
  });

  it('reads the NCCL_DEBUG excerpt without a table: IB network, both rails of cage 1, NCCL 2.28.9', () => {
    const r = parseNccl(fb97Debug());
    expect(r.rows).toEqual([]);
    expect(r.avgBusBandwidthGBs).toBeNull();
    expect(r.network).toBe('IB');
    expect(r.netDevices).toEqual(['rocep1s0f1', 'roceP2p1s0f1']);
    expect(r.ncclVersion).toBe('2.28.9+cuda13.0');
    expect(r.collective).toBe('all_gather_perf');
    // Each rank says which NCCL it loaded on its own node.
    expect(r.ranks.map((x) => [x.host, x.ncclVersion])).toEqual([
      ['spark-fb97', '2.28.9+cuda13.0'],
      ['spark-4440', '2.28.9+cuda13.0'],
    ]);
  });

  it('reads the OCI A100 all_reduce run with a bare "NCCL version" line and no banner line', () => {
    const r = parseNccl(oci());
    expect(r.collective).toBe('all_reduce_perf');
    expect(r.ncclVersion).toBe('2.29.3+cuda13.1');
    expect(r.version).toBe('2.17.9');
    expect(r.avgBusBandwidthGBs).toBe(185.594);
    expect(r.rows.map((x) => [x.size, x.redop, x.outOfPlace.busbwGBs, x.inPlace.timeUs])).toEqual([
      [1073741824, 'sum', 184.57, 11220.1],
      [2147483648, 'sum', 187.28, 21629.9],
      [4294967296, 'sum', 188.5, 42920.8],
    ]);
  });

  it('reads the GB10 16 GiB all_gather playbook run (22.9611 GB/s)', () => {
    const r = parseNccl(promax());
    expect(r.rows).toHaveLength(1);
    expect(r.rows[0]!.size).toBe(17179869184);
    expect(r.rows[0]!.outOfPlace).toEqual({ timeUs: 374425, algbwGBs: 45.88, busbwGBs: 22.94, wrong: 0 });
    expect(r.avgBusBandwidthGBs).toBe(22.9611);
  });

  it('reads head-only partial tables (no footer) with avgBusBandwidthGBs null', () => {
    const a = parseNccl(pr103First());
    expect(a.version).toBe('2.20.0');
    expect(a.avgBusBandwidthGBs).toBeNull();
    expect(a.outOfBounds).toBeUndefined();
    expect(a.rows.map((x) => x.size)).toEqual([8192, 16384, 32768, 65536]);
    expect(a.rows[0]!.outOfPlace).toEqual({ timeUs: 35.15, algbwGBs: 0.23, busbwGBs: 0.23, wrong: 0 });
    const b = parseNccl(pr103Mtu());
    expect(b.rows[3]!.inPlace).toEqual({ timeUs: 64.7, algbwGBs: 1.01, busbwGBs: 1.01, wrong: 0 });
  });

  it('reads #wrong N/A (-c 0) and %e numbers', () => {
    // Edited copy of a real row: checking turned off and the time printed in exponent form.
    const text = promax().replace(
      '374425   45.88   22.94       0   373792   45.96   22.98       0',
      '3.74425e+05   45.88   22.94     N/A   373792   45.96   22.98     N/A',
    );
    const r = parseNccl(text);
    expect(r.rows[0]!.outOfPlace).toEqual({ timeUs: 374425, algbwGBs: 45.88, busbwGBs: 22.94, wrong: null });
    expect(r.rows[0]!.inPlace.wrong).toBeNull();
  });

  it('reports Socket and the socket device when NCCL falls back to TCP', () => {
    // Generated (not recorded): two NCCL_DEBUG lines in the documented format, ahead of a real table.
    const text =
      'spark-fb97:1:1 [0] NCCL INFO NET/Socket : Using [0]enp1s0f1np1:192.168.100.15<0>\n' +
      'spark-fb97:1:1 [0] NCCL INFO Using network Socket\n' +
      fb97Degraded();
    const r = parseNccl(text);
    expect(r.network).toBe('Socket');
    expect(r.netDevices).toEqual(['enp1s0f1np1']);
  });

  it('reads NCCL lines behind a timestamp prefix', () => {
    // Generated: a real "Using" line behind a "[date time] " prefix (NCCL_DEBUG_TIMESTAMP_FORMAT style).
    const r = parseNccl('[2026-07-01 10:00:00] spark-fb97:23491:23491 [0] NCCL INFO NET/IB : Using [0]rocep1s0f0:1/RoCE [RO]; OOB enp1s0f0np0:10.0.1.1<0>\n');
    expect(r.network).toBe('IB');
    expect(r.netDevices).toEqual(['rocep1s0f0']);
  });

  it('reports one device name when NCCL uses one rail only', () => {
    const oneRail = fb97Debug()
      .split('\n')
      .map((l) => l.replace(' [1]roceP2p1s0f1:1/RoCE', ''))
      .join('\n');
    expect(parseNccl(oneRail).netDevices).toEqual(['rocep1s0f1']);
  });

  it('rejects text with neither a table nor NCCL lines, and damaged rows', () => {
    expect(parseError(() => parseNccl('Authorization required, but no authorization protocol specified\n')).reason).toMatch(/no nccl-tests result row/);
    expect(parseError(() => parseNccl('')).kind).toBe('nccl');
    const cut = fb97Ok().replace('50573.4   42.46   21.23       0', '50573.4   42.46');
    expect(parseError(() => parseNccl(cut)).reason).toMatch(/table row has 11 columns, the header has 13/);
    // Edited: a real partial table followed by the failure line nccl-tests prints (format from its NCCLCHECK macro).
    const failed = pr103First() + "\nspark-d708: Test NCCL failure common.cu:1279 'remote process exited or there was a network error / '\n";
    const f = parseError(() => parseNccl(failed));
    expect(f.line).toBe(17);
    expect(f.reason).toMatch(/^nccl-tests reported a failure: "spark-d708: Test NCCL failure common\.cu:1279/);
    const bad = fb97Ok().replace('# Avg bus bandwidth    : 21.4033', '# Avg bus bandwidth    : fast');
    expect(parseError(() => parseNccl(bad)).reason).toMatch(/not a number: "fast"/);
  });
});

// Bug reports often paste only the table rows and the `# Avg bus bandwidth` trailer. These variants are cut from the
// recorded files at test time (the files themselves stay as recorded): every line that is not a table row or the
// trailer is dropped, the way such a paste looks.
function rowsAndTrailerOnly(text: string): string {
  return text
    .split('\n')
    .filter((l) => /^\s*\d+\s/.test(l) || /^# Avg bus bandwidth/.test(l.trim()))
    .join('\n');
}

describe('parseNccl on output pasted without its header (trimmed at test time from recorded samples)', () => {
  it('reads the OCI all_reduce rows and trailer alone as the full output reads them', () => {
    const full = parseNccl(oci());
    const trimmed = rowsAndTrailerOnly(oci());
    expect(trimmed.split('\n')).toHaveLength(4);
    expect(trimmed).not.toMatch(/size\s+count/);
    const r = parseNccl(trimmed);
    expect(r.rows).toEqual(full.rows);
    expect(r.rows[0]).toEqual({
      size: 1073741824,
      count: 268435456,
      type: 'float',
      redop: 'sum',
      root: -1,
      outOfPlace: { timeUs: 10908.0, algbwGBs: 98.44, busbwGBs: 184.57, wrong: 0 },
      inPlace: { timeUs: 11220.1, algbwGBs: 95.7, busbwGBs: 179.43, wrong: 0 },
    });
    expect(r.avgBusBandwidthGBs).toBe(185.594);
    expect(r.collective).toBeNull();
  });

  it('reads the Spark all_gather rows (redop none, integer times of the degraded run) without a header', () => {
    for (const text of [fb97Ok(), fb97Degraded()]) {
      const full = parseNccl(text);
      const r = parseNccl(rowsAndTrailerOnly(text));
      expect(r.rows).toEqual(full.rows);
      expect(r.avgBusBandwidthGBs).toBe(full.avgBusBandwidthGBs);
    }
    expect(parseNccl(rowsAndTrailerOnly(fb97Degraded())).avgBusBandwidthGBs).toBe(2.82151);
  });

  it('reads head-only partial tables pasted without a header (rows only, no trailer)', () => {
    const full = parseNccl(pr103First());
    const r = parseNccl(rowsAndTrailerOnly(pr103First()));
    expect(r.rows.length).toBeGreaterThan(0);
    expect(r.rows).toEqual(full.rows);
    expect(r.avgBusBandwidthGBs).toBeNull();
  });

  it('still refuses a row-like line that is not in the nccl-tests shape, and rows on both sides of a header', () => {
    const rows = rowsAndTrailerOnly(oci()).split('\n');
    const cut = [rows[0]!.replace(/\s+0\s*$/, ''), ...rows.slice(1)].join('\n');
    expect(parseError(() => parseNccl(cut)).reason).toMatch(/not in the 13-column shape of a nccl-tests row/);
    const typed = rows[0]!.replace('float', '1.5');
    expect(parseError(() => parseNccl(typed)).reason).toMatch(/13-column shape/);
    const both = `${rows[0]}\n${oci()}`;
    expect(parseError(() => parseNccl(both)).reason).toMatch(/both before and after/);
  });
});

// nccl-tests before 2.13 (2022): each collective printed its own leading columns (no `root` for all_reduce) and a
// float `error` column (largest deviation) where 2.13 prints the `#wrong` count. docs/formats.md §6b.
const azure = () => sample('nccl/azureml-examples-a100-2node-all-reduce-pre-2.13-error-column.txt');
// The five-collective paste holds one run per collective, each after the author's `===begin <test> test===` line.
const osxRuns = () =>
  sample('nccl/nccl-osx-gtx1080-five-collectives-pre-2.13-layouts.txt')
    .split(/^===begin (\S+) test===$/m)
    .slice(1)
    .reduce<Record<string, string>>((acc, part, i, all) => (i % 2 === 0 ? { ...acc, [part]: all[i + 1]! } : acc), {});

describe('parseNccl on tables of nccl-tests before 2.13 (no root column, float error column)', () => {
  it('reads the 2-node A100 all_reduce table by its header: redop, no root, the error column as maxError', () => {
    const r = parseNccl(azure());
    expect(r.tableLayout).toBe('nccl-tests<2.13');
    expect(r.rows).toHaveLength(9);
    expect(r.rows[0]).toEqual({
      size: 33554432,
      count: 8388608,
      type: 'float',
      redop: 'sum',
      root: null,
      outOfPlace: { timeUs: 593.7, algbwGBs: 56.52, busbwGBs: 105.97, wrong: null, maxError: 5e-7 },
      inPlace: { timeUs: 590.2, algbwGBs: 56.86, busbwGBs: 106.6, wrong: null, maxError: 5e-7 },
    });
    expect(r.rows[8]!.outOfPlace).toEqual({ timeUs: 85710, algbwGBs: 100.22, busbwGBs: 187.91, wrong: null, maxError: 5e-7 });
    expect(r.avgBusBandwidthGBs).toBeNull(); // the publisher showed no footer
    expect(r.ranks.map((x) => x.host)).toEqual(['47c46425da29465eb4f752ffa03dd537000001']); // the NCCL line inside the table
  });

  it('reads each collective in its own pre-2.13 layout, footer included', () => {
    const runs = osxRuns();
    expect(Object.keys(runs)).toEqual(['all_reduce_perf', 'all_gather_perf', 'broadcast_perf', 'reduce_perf', 'reduce_scatter_perf']);
    const got = Object.fromEntries(
      Object.entries(runs).map(([name, text]) => {
        const r = parseNccl(text);
        return [name, [r.tableLayout, r.rows.length, r.rows[0]!.redop, r.rows[0]!.root, r.rows[24]!.outOfPlace.busbwGBs, r.avgBusBandwidthGBs]];
      }),
    );
    expect(got).toEqual({
      all_reduce_perf: ['nccl-tests<2.13', 25, 'sum', null, 0.87, 0.414483],
      all_gather_perf: ['nccl-tests<2.13', 25, null, null, 0.76, 0.347488],
      broadcast_perf: ['nccl-tests<2.13', 25, null, 0, 1.47, 0.698235],
      reduce_perf: ['nccl-tests<2.13', 25, 'sum', 0, 1.53, 0.716373],
      reduce_scatter_perf: ['nccl-tests<2.13', 25, 'sum', null, 0.4, 0.328477],
    });
    expect(parseNccl(runs['all_gather_perf']!).rows[0]).toEqual({
      size: 8,
      count: 1,
      type: 'float',
      redop: null,
      root: null,
      outOfPlace: { timeUs: 21.03, algbwGBs: 0, busbwGBs: 0, wrong: null, maxError: 0 },
      inPlace: { timeUs: 20.68, algbwGBs: 0, busbwGBs: 0, wrong: null, maxError: 0 },
    });
    expect(parseNccl(runs['all_reduce_perf']!).outOfBounds).toEqual({ count: 0, ok: true });
  });

  it('says which layout it read: the 2.13 samples are nccl-tests>=2.13', () => {
    for (const text of [fb97Ok(), oci(), promax(), pr103First()]) expect(parseNccl(text).tableLayout).toBe('nccl-tests>=2.13');
    expect(parseNccl(fb97Debug()).tableLayout).toBeUndefined(); // no table at all
  });

  it('reads pre-2.13 all_reduce rows pasted without their header, in that shape only', () => {
    const r = parseNccl(rowsAndTrailerOnly(azure()));
    expect(r.rows).toEqual(parseNccl(azure()).rows);
    expect(r.tableLayout).toBe('nccl-tests<2.13');
    const mixed = `${rowsAndTrailerOnly(azure())}\n${rowsAndTrailerOnly(oci())}`;
    const e = parseError(() => parseNccl(mixed));
    expect(e.line).toBe(10);
    expect(e.reason).toBe('table row not in the 12-column shape of the rows above it');
  });

  it('refuses a header with neither #wrong nor error, or both, and leading columns out of order', () => {
    const header = azure()
      .split('\n')
      .find((l) => l.includes('busbw'))!;
    expect(parseError(() => parseNccl(azure().replace(header, header.replaceAll(' error', ' check')))).reason).toBe(
      'table header must have "#wrong" (nccl-tests >= 2.13) or "error" (before 2.13) twice',
    );
    expect(parseError(() => parseNccl(azure().replace(header, header.replace('error', '#wrong')))).reason).toMatch(/must have "#wrong" twice/);
    expect(parseError(() => parseNccl(azure().replace(header, header.replace('type   redop', 'redop   type')))).reason).toBe(
      'column 3 of the table header must be "type"',
    );
  });
});

// Cluster job logs put the launcher's prefix before every line: `srun --label` (` 0: `) and OpenMPI `--tag-output`
// (`[1,0]<stdout>:`). docs/formats.md §6a.
const awsSrun = () => sample('nccl/awsome-distributed-training-p5-2node-all-reduce-srun-label-table.txt');
const issue290 = () => sample('nccl/nccl-tests-issue290-h100-2node-srun-label.txt');
const ebpfTag = () => sample('nccl/nccl-ebpf-rtx5090-2rank-all-reduce-mpirun-tag-output.txt');
const eksTag = () => sample('nccl/eks-efa-t4-2node-all-reduce-mpirun-tag-output-nccl-debug.txt');

describe('parseNccl on launcher-prefixed job output', () => {
  it('reads the srun --label run of 2 H100 nodes (label " 0: ", bare " 0:" lines, #wrong N/A)', () => {
    const r = parseNccl(issue290());
    expect(r.launcher).toEqual({ kind: 'srun --label', ranks: [0], resultRank: 0 });
    expect(r.tableLayout).toBe('nccl-tests>=2.13');
    expect(r.avgBusBandwidthGBs).toBe(142.735);
    expect(r.outOfBounds).toEqual({ count: 0, ok: true });
    expect(r.rows).toHaveLength(11);
    expect(r.rows[10]).toEqual({
      size: 8589934592,
      count: 2147483648,
      type: 'float',
      redop: 'sum',
      root: -1,
      outOfPlace: { timeUs: 103530, algbwGBs: 82.97, busbwGBs: 155.57, wrong: null },
      inPlace: { timeUs: 103538, algbwGBs: 82.96, busbwGBs: 155.56, wrong: null },
    });
  });

  it('reads the label-width-1 srun table ("0: ") as the same rows without the prefix', () => {
    const r = parseNccl(awsSrun());
    expect(r.launcher).toEqual({ kind: 'srun --label', ranks: [0], resultRank: 0 });
    expect(r.rows).toHaveLength(32); // 8 B to 16 GiB
    expect(r.rows[31]!.inPlace).toEqual({ timeUs: 66109, algbwGBs: 259.87, busbwGBs: 487.26, wrong: 0 });
    const bare = awsSrun().replace(/^0: /gm, '');
    expect(parseNccl(bare).rows).toEqual(r.rows);
    expect(parseNccl(bare).launcher).toBeUndefined();
  });

  it('reads mpirun --tag-output with untagged mpirun lines and tagged stderr of two ranks', () => {
    const r = parseNccl(ebpfTag());
    expect(r.launcher).toEqual({ kind: 'mpirun --tag-output', ranks: [0, 1], resultRank: 0 });
    expect(r.version).toBe('2.18.0');
    expect(r.collective).toBe('all_reduce_perf_mpi');
    expect(r.avgBusBandwidthGBs).toBe(1.57614);
    expect(r.rows.map((x) => x.outOfPlace.timeUs)).toEqual([4366.46, 4370.57, 4374.0, 4390.92, 7728.29, 14977.1, 29341.4, 58479.5]);
  });

  it('keeps the rank the tag names beside each process of the NCCL_DEBUG lines', () => {
    const r = parseNccl(eksTag());
    expect(r.launcher).toEqual({ kind: 'mpirun --tag-output', ranks: [0, 1], resultRank: 0 });
    expect(r.ncclVersion).toBe('2.12.7+cuda11.4');
    expect(r.ranks).toEqual([
      { host: 'test-nccl-efa-worker-0', pid: 21, network: null, devices: [], ip: '10.11.13.106', launcherRank: 0 },
      { host: 'test-nccl-efa-worker-1', pid: 21, network: null, devices: [], ip: '10.11.5.31', launcherRank: 1 },
    ]);
    expect(r.rows).toHaveLength(31);
    expect(r.avgBusBandwidthGBs).toBe(1.15327);
  });

  it('refuses result lines from two ranks, and a process seen under two ranks, naming the line', () => {
    // Edited copies of recorded samples: one table row re-tagged as rank 1, one NCCL line of rank 1's process as rank 0.
    const lines = eksTag().split('\n');
    const row = lines.findIndex((l) => l.includes('   1048576        262144'));
    const twoRanks = lines.map((l, i) => (i === row ? l.replace('[1,0]', '[1,1]') : l)).join('\n');
    const e = parseError(() => parseNccl(twoRanks));
    expect(e.line).toBe(row + 1);
    expect(e.reason).toMatch(/^nccl-tests table line from rank 1, but line \d+ came from rank 0: one nccl-tests table per text$/);
    const nccl = lines.findIndex((l) => l.startsWith('[1,1]<stdout>:test-nccl-efa-worker-1:21:26'));
    const moved = lines.map((l, i) => (i === nccl ? l.replace('[1,1]', '[1,0]') : l)).join('\n');
    expect(parseError(() => parseNccl(moved)).reason).toMatch(/^process test-nccl-efa-worker-1:21 under launcher rank 0, but line \d+ put it under rank 1/);
  });
});

describe('parseNccl robustness', () => {
  it('only ever throws ParseError on random and mutated input', () => {
    fuzzParser(parseNccl, [
      fb97Ok(),
      fb97Degraded(),
      fb97Debug(),
      oci(),
      promax(),
      pr103First(),
      rowsAndTrailerOnly(oci()),
      ...samplesIn('nccl').map((f) => sample(f)),
    ]);
  });

  it('reads every unprefixed sample behind either launcher prefix the same, and refuses a prefix that changes', () => {
    fuzzLauncherPrefixes(parseNccl, [
      fb97Ok(),
      fb97Degraded(),
      fb97Debug(),
      oci(),
      promax(),
      pr103First(),
      azure(),
      rowsAndTrailerOnly(oci()),
      ...Object.values(osxRuns()),
    ]);
  });
});
