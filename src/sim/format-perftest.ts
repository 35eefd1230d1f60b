// ib_write_bw (perftest) text byte for byte as perftest prints it: PERFTEST perftest_parameters.c
// ctx_print_test_info() (TAB pairs `%s\t\tDevice`, the `rdma_cm QPs\t :` key), force_dependecies() (` WARNING: ...`),
// print_full_bw_report() (REPORT_FMT, two TABs before MsgRate, fflush() before the row's newline) and
// perftest_parameters.h RESULT_FMT_G. The Spark sample that keeps its TABs (samples/ib_write_bw/spark-hotplug-...) and
// the source agree; the DGX Spark playbook pastes show two blanks more before MsgRate and between the header pairs
// (another perftest build, or the paste), which the output-structure test tolerates as whitespace only. Generated.

export const RESULT_LINE = '-'.repeat(87);

// Printed while the command line is parsed (-D, --run_infinitely, > 20000 iterations), before anything else.
export const PEAK_WARNING = " WARNING: BW peak won't be measured in this run.\n";

// RESULT_FMT_G: the table header with --report_gbits (three blanks before MsgRate).
export const RESULT_HEADER_GBITS = ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]';

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

// The test banner (ctx_print_test_info), the address lines of both ends and the table header, each line ending in \n.
export function formatPerftestHeader(p: PerftestHeader): string {
  const out: string[] = [
    RESULT_LINE,
    `                    RDMA_Write ${p.bidir ? 'Bidirectional ' : ''}BW Test`,
    ` Dual-port       : OFF\t\tDevice         : ${p.device}`,
    ' Number of qps   : 1\t\tTransport type : IB',
    ' Connection type : RC\t\tUsing SRQ      : OFF',
    ' PCIe relax order: ON',
    ' ibv_wr* API     : ON',
  ];
  if (p.client || p.bidir) out.push(' TX depth        : 128');
  out.push(
    ' CQ Moderation   : 1',
    ' Mtu             : 1024[B]',
    ' Link type       : Ethernet',
    ' GID index       : 3',
    ' Max inline data : 0[B]',
    ' rdma_cm QPs\t : OFF',
    ' Data ex. method : Ethernet',
    RESULT_LINE,
    ` local address:  LID 0000 QPN ${h(p.qpn[0], 4)} PSN ${h(p.psn[0]).padEnd(8)} RKey ${h(p.rkey[0], 6)} VAddr ${h(p.vaddr[0], 14)}`,
    ` GID:            ${gid(p.localIp)}`,
    ` remote address: LID 0000 QPN ${h(p.qpn[1], 4)} PSN ${h(p.psn[1]).padEnd(8)} RKey ${h(p.rkey[1], 6)} VAddr ${h(p.vaddr[1], 14)}`,
    ` GID:            ${gid(p.remoteIp)}`,
    RESULT_LINE,
    RESULT_HEADER_GBITS,
  );
  return `${out.join('\n')}\n`;
}

// One result row without its newline: perftest prints the row, fflush()es stdout, then prints the "\n", so a reader
// of a file or pipe sees the newest row without its line end until the next row comes. REPORT_FMT
// " %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf", or REPORT_FMT_EXT (6 decimals) when the
// average is below 0.1 Gb/s.
export function formatPerftestRow(bytes: number, iterations: number, peakGbps: number, avgGbps: number): string {
  const msgRate = (avgGbps * 1e9) / (bytes * 8) / 1e6;
  if (avgGbps < 0.1) {
    return ` ${String(bytes).padEnd(7)}    ${iterations}           ${peakGbps.toFixed(6).padEnd(7)}            ${avgGbps.toFixed(6).padEnd(7)}            ${msgRate.toFixed(6).padEnd(7)}`;
  }
  return (
    ` ${String(bytes).padEnd(7)}    ${String(iterations).padEnd(10)}       ${peakGbps.toFixed(2).padEnd(7)}` +
    `            ${avgGbps.toFixed(2).padEnd(7)}\t\t   ${msgRate.toFixed(6).padEnd(7)}`
  );
}

// What a server prints while it waits for its client.
export const WAITING_BANNER = '\n************************************\n* Waiting for client to connect... *\n************************************\n';

// A client whose server is not listening (perftest's socket setup failure).
export function connectFailure(ip: string, port: number): string {
  return ` Couldn't connect to ${ip}:${port}\nUnable to open file descriptor for socket connection Unable to init the socket connection\n`;
}

// A client or server whose queue pair failed because the link went down (transport retry counter exceeded).
export function completionFailure(side: 'client' | 'server'): string {
  return ` Completion with error at ${side}\n Failed status 12: wr_id 0 syndrom 0x81\nscnt=128, ccnt=0\n Failed to complete run_iter_bw function successfully\n`;
}

// How a program's stdout reaches a file or pipe (never a terminal on a node run over SSH or into the run directory):
// glibc buffers it fully (4096-byte blocks) unless `stdbuf -oL` (line) or `stdbuf -o0` (none) says otherwise.
export type StdoutBuffering = 'full' | 'line' | 'none';
const STDIO_BLOCK = 4096;

// The part of `printed` a reader of the stream can see: everything once the program exited normally (exit()
// flushes); otherwise what its last fflush() pushed out (the first `flushedTo` characters), whole stdio blocks, and
// with line buffering every complete line. A program killed by a signal loses what was still in its buffer.
export function visibleStdout(printed: string, flushedTo: number, buffering: StdoutBuffering, exited: boolean): string {
  if (exited || buffering === 'none') return printed;
  let upTo = Math.max(flushedTo, printed.length - (printed.length % STDIO_BLOCK));
  if (buffering === 'line') upTo = Math.max(upTo, printed.lastIndexOf('\n') + 1);
  return printed.slice(0, Math.min(upTo, printed.length));
}

// visibleStdout of a program that printed `head` and then result rows, each fflush()ed before its newline (`rows`
// ends in the last row's newline, `open` is the same text without it): the flushed part ends just before the last
// newline. Made from the parts without cutting the whole text again: ib_write_bw's text grows all soak long.
export function visibleRows(head: string, rows: string, open: string, buffering: StdoutBuffering, exited: boolean): string {
  if (rows === '') return visibleStdout(head, 0, buffering, exited);
  const length = head.length + rows.length;
  // The flushed part reaches at least length - 1; only a full buffer that ends on a block boundary shows the newline.
  if (exited || buffering !== 'full' || length % STDIO_BLOCK === 0) return head + rows;
  return head + open;
}
