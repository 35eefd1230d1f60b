// ib_write_bw (perftest) text as the DGX Spark playbook client prints it: header block, address lines, rows.
// Column positions copy samples-real/ib_write_bw/dgx-spark-playbooks-client1-rocep1s0f0-run-infinitely.txt.

export const RESULT_LINE = '-'.repeat(87);

export interface PerftestHeader {
  device: string;
  bidir: boolean;
  client: boolean;
  localIp: string;
  remoteIp: string;
  qpn: [number, number];
  psn: [number, number];
  rkey: [number, number];
  vaddr: [number, number];
}

const gid = (ip: string) => `00:00:00:00:00:00:00:00:00:00:255:255:${ip.split('.').join(':')}`;
const h = (v: number, pad = 0) => `0x${v.toString(16).padStart(pad, '0')}`;

// Everything up to and including the table header line.
export function formatPerftestHeader(p: PerftestHeader, noPeak: boolean): string {
  const out: string[] = [];
  if (noPeak) out.push("  WARNING: BW peak won't be measured in this run.");
  out.push(
    RESULT_LINE,
    `                    RDMA_Write ${p.bidir ? 'Bidirectional ' : ''}BW Test`,
    ` Dual-port       : OFF            Device         : ${p.device}`,
    ' Number of qps   : 1              Transport type : IB',
    ' Connection type : RC             Using SRQ      : OFF',
    ' PCIe relax order: ON',
    ' ibv_wr* API     : ON',
  );
  if (p.client || p.bidir) out.push(' TX depth        : 128');
  out.push(
    ' CQ Moderation   : 1',
    ' Mtu             : 1024[B]',
    ' Link type       : Ethernet',
    ' GID index       : 3',
    ' Max inline data : 0[B]',
    ' rdma_cm QPs     : OFF',
    ' Data ex. method : Ethernet',
    RESULT_LINE,
    ` local address:  LID 0000 QPN ${h(p.qpn[0], 4)} PSN ${h(p.psn[0]).padEnd(8)} RKey ${h(p.rkey[0], 6)} VAddr ${h(p.vaddr[0], 14)}`,
    ` GID:            ${gid(p.localIp)}`,
    ` remote address: LID 0000 QPN ${h(p.qpn[1], 4)} PSN ${h(p.psn[1]).padEnd(8)} RKey ${h(p.rkey[1], 6)} VAddr ${h(p.vaddr[1], 14)}`,
    ` GID:            ${gid(p.remoteIp)}`,
    RESULT_LINE,
    ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]    MsgRate[Mpps]',
  );
  return `${out.join('\n')}\n`;
}

// One result row (REPORT_FMT with the paste's tab expansion), e.g. ` 65536      882805           0.00               92.57                0.176554`.
export function formatPerftestRow(bytes: number, iterations: number, peakGbps: number, avgGbps: number): string {
  const msgRate = (avgGbps * 1e9) / (bytes * 8) / 1e6;
  return (
    ` ${String(bytes).padEnd(7)}    ${String(iterations).padEnd(10)}       ${peakGbps.toFixed(2).padEnd(7)}` +
    `            ${avgGbps.toFixed(2).padEnd(7)}              ${msgRate.toFixed(6)}\n`
  );
}

// What a server prints while it waits for its client.
export const WAITING_BANNER =
  '\n************************************\n* Waiting for client to connect... *\n************************************\n';

// A client whose server is not listening (perftest's socket setup failure).
export function connectFailure(ip: string, port: number): string {
  return ` Couldn't connect to ${ip}:${port}\nUnable to open file descriptor for socket connection Unable to init the socket connection\n`;
}

// A client or server whose queue pair failed because the link went down (transport retry counter exceeded).
export function completionFailure(side: 'client' | 'server'): string {
  return ` Completion with error at ${side}\n Failed status 12: wr_id 0 syndrom 0x81\nscnt=128, ccnt=0\n Failed to complete run_iter_bw function successfully\n`;
}
