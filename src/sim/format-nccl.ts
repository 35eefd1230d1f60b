// nccl-tests all_reduce_perf and all_gather_perf output with NCCL_DEBUG=INFO lines, in the layout of
// samples/nccl/spark-fb97-* (all_gather: samples/nccl/promaxgb10-all-gather-16G-playbook-cmd.txt).

// One rank as its own environment made it: its bootstrap interface and address, the RDMA devices it uses (none: it
// fell back to TCP sockets).
export interface NcclRankRun {
  name: string;
  pid: number;
  ip: string;
  netdev: string;
  devices: string[];
  ncclVersion?: string; // the NCCL the node's rank loaded (default 2.28.9+cuda13.0)
}

export interface NcclRun {
  hosts: NcclRankRun[];
  minBytes: number;
  maxBytes: number;
  factor: number;
  busbwGBs: number; // target average bus bandwidth
  jitter: (i: number) => number; // deterministic noise in [-1, 1]
  collective?: 'all_reduce_perf' | 'all_gather_perf'; // all_reduce_perf when not given
}

// nccl-tests getFloatStr: the most decimals (2, 1, 0) that fit the column, else exponent form.
function floatStr(v: number, width: number): string {
  for (const d of [2, 1, 0]) {
    const s = v.toFixed(d);
    if (s.length <= width) return s;
  }
  return v.toExponential(1);
}

// printf %g with 6 significant digits.
function fmtG(v: number): string {
  if (v === 0) return '0';
  const s = v.toPrecision(6);
  return s.includes('e') ? s : s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

const pciOf = (dev: string) =>
  dev.startsWith('roceP2')
    ? `/sys/devices/pci0002:00/0002:00:00.0/0002:01:00.${dev.endsWith('1') ? 1 : 0}`
    : `/sys/devices/pci0000:00/0000:00:00.0/0000:01:00.${dev.endsWith('1') ? 1 : 0}`;

// One rank's NCCL_DEBUG=INFO lines up to its choice of network: its own interface, devices and address.
export function rankInitLines(h: NcclRankRun): string[] {
  const p = `${h.name}:${h.pid}:${h.pid} [0] NCCL INFO`;
  const out = [`${p} ENV/Plugin: Could not find: libnccl-env.so`, `${p} NCCL_SOCKET_IFNAME set to ${h.netdev}`, `${p} cudaDriverVersion 13000`];
  out.push(`${p} NCCL version ${h.ncclVersion ?? '2.28.9+cuda13.0'}`, `${p} NET/Plugin: Could not find: libnccl-net.so`);
  h.devices.forEach((d, i) => {
    const uv = (d.startsWith('roceP2') ? 2 : 0) + (d.endsWith('1') ? 1 : 0);
    out.push(
      `${p} NET/IB: [${uv}] ${d}:uverbs${uv}:1/RoCE provider=Mlx5 speed=200000 context=0x${(0xc53b90db27f0 + i * 0x4c700).toString(16)} pciPath=${pciOf(d)} ar=0`,
    );
    out.push(`${p} NET/IB : Made virtual device [${i}] name=${d} speed=200000 ndevs=1`);
  });
  if (h.devices.length === 0) {
    out.push(`${p} NET/IB : No device found.`, `${p} NET/Socket : Using [0]${h.netdev}:${h.ip}<0>`);
    out.push(`${p} Initialized NET plugin Socket`, `${p} Assigned NET plugin Socket to comm`, `${p} Using network Socket`);
    return out;
  }
  out.push(`${p} NET/IB : Using ${h.devices.map((d, i) => `[${i}]${d}:1/RoCE`).join(' ')} [RO]; OOB ${h.netdev}:${h.ip}<0>`);
  out.push(`${p} Initialized NET plugin IB`, `${p} Assigned NET plugin IB to comm`, `${p} Using network IB`);
  return out;
}

// The full stdout of `mpirun ... all_reduce_perf ...` (every rank's INFO lines, the table and the footer), or of
// all_gather_perf. nccl-tests' bus bandwidth is the algorithm bandwidth times 2(n-1)/n for all_reduce (the same for 2
// ranks) and (n-1)/n for all_gather; all_gather's count is the elements of one rank's part (size / 4 / n).
export function formatAllReduce(r: NcclRun): { text: string; avgBusbw: number; seconds: number } {
  const collective = r.collective ?? 'all_reduce_perf';
  const n = Math.max(2, r.hosts.length);
  const busPerAlg = collective === 'all_gather_perf' ? (n - 1) / n : (2 * (n - 1)) / n;
  const out: string[] = [];
  out.push('# nccl-tests version 2.18.3 nccl-headers=22809 nccl-library=22809');
  out.push(`# Collective test starting: ${collective}`);
  out.push(
    `# nThread 1 nGpus 1 minBytes ${r.minBytes} maxBytes ${r.maxBytes} step: ${r.factor}(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0`,
  );
  out.push('#', '# Using devices');
  // nccl-tests src/common.cu: "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s".
  r.hosts.forEach((h, i) =>
    out.push(`#  Rank ${String(i).padStart(2)} Group  0 Pid ${String(h.pid).padStart(6)} on ${h.name.padStart(10)} device  0 [000f:01:00] NVIDIA GB10`),
  );
  for (const h of r.hosts) out.push(...rankInitLines(h));
  for (const h of r.hosts)
    h.devices.forEach((d, i) => out.push(`${h.name}:${h.pid}:${h.pid} [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA ${i} '${d}'`));
  out.push('#');
  out.push('#                                                              out-of-place                       in-place          ');
  out.push('#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ');
  out.push('#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ');
  const sizes: number[] = [];
  for (let s = r.minBytes; s <= r.maxBytes; s *= Math.max(2, r.factor)) sizes.push(s);
  const busbws: number[] = [];
  let seconds = 3;
  sizes.forEach((size, i) => {
    const shape = 0.96 + (0.06 * i) / Math.max(1, sizes.length - 1); // bigger messages get closer to the wire
    const half = (k: number) => {
      const bw = r.busbwGBs * shape * (1 + 0.01 * r.jitter(i * 2 + k));
      const alg = bw / busPerAlg;
      const timeUs = size / (alg * 1e3);
      busbws.push(Number(bw.toFixed(2)));
      seconds += (timeUs * 21) / 1e6;
      return `  ${floatStr(timeUs, 7).padStart(7)}  ${alg.toFixed(2).padStart(6)}  ${bw.toFixed(2).padStart(6)}  ${'0'.padStart(6)}`;
    };
    // nccl-tests rounds an all_gather's size down to a whole count of elements per rank.
    const count = collective === 'all_gather_perf' ? Math.floor(size / 4 / n) : size / 4;
    const shown = collective === 'all_gather_perf' ? count * 4 * n : size;
    const redop = collective === 'all_gather_perf' ? 'none' : 'sum';
    out.push(
      `${String(shown).padStart(12)}  ${String(count).padStart(12)}  ${'float'.padStart(8)}  ${redop.padStart(6)}  ${'-1'.padStart(6)}${half(0)}${half(1)}`,
    );
  });
  const avg = busbws.reduce((a, b) => a + b, 0) / busbws.length;
  out.push('# Out of bounds values : 0 OK', `# Avg bus bandwidth    : ${fmtG(avg)} `, '#', `# Collective test concluded: ${collective}`, '#');
  return { text: `${out.join('\n')}\n`, avgBusbw: avg, seconds };
}
