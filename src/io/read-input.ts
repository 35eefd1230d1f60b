// Every file the CLI reads as input (protocol, scenario, manifest, certificate, key, record, journal, state file) is
// read here: a regular file, below a size limit for its kind, or a one-line usage error naming the file. `/dev/zero`,
// a FIFO or a 2 GB file named as a protocol (or left as a run's record.json) never hangs or fills memory: the file is
// opened without blocking, checked with fstat, and read no further than the limit. A journal is too large to read
// whole: openInput hands its reader the checked descriptor to stream.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { UsageError } from '../domain/errors.js';

// The largest file of each kind the CLI reads, in bytes, and what messages call it. A shipped protocol is ~6 KB, a
// scenario ~4 KB, a key ~120 bytes, a certificate of the full procedure ~60 KB, a manifest of 10,000 cables ~500 KB,
// an ssh config a few KB, a run's record.json ~50 KB, a batch's state file ~1 KB a cable. A journal of the full
// 75-minute procedure at 1 Hz is 8.4 MB (test/fixtures/journals-v4/good-qsfp56-spark-burnin: 4,289 two-node ticks,
// 1.96 KB a tick with its load rows and raw dumps); the longest a protocol may ask for is MAX_TICKS = 300,000 ticks
// (src/protocol/semantics.ts), ~590 MB at that rate: 768 MiB holds it with a margin, and refuses the 1 GiB file of
// issue #32. Read back it takes ~1.3 bytes of heap per byte of journal (measured in the #32 report).
export const INPUT_LIMITS = {
  protocol: { bytes: 1 << 20, name: 'protocol' },
  scenario: { bytes: 1 << 20, name: 'scenario' },
  scenarioList: { bytes: 1 << 20, name: 'scenario list' },
  manifest: { bytes: 16 << 20, name: 'manifest' },
  certificate: { bytes: 16 << 20, name: 'certificate' },
  key: { bytes: 64 << 10, name: 'key' },
  sshConfig: { bytes: 1 << 20, name: 'ssh config' },
  knownHosts: { bytes: 16 << 20, name: 'known_hosts' },
  // `cablequal parse <kind> <file>`: one command's output (`ethtool -S` of mlx5 is ~60 KB).
  output: { bytes: 16 << 20, name: 'command output' },
  record: { bytes: 16 << 20, name: 'run record' },
  batchState: { bytes: 16 << 20, name: 'batch state' },
  liveState: { bytes: 1 << 20, name: 'live state' },
  journal: { bytes: 768 << 20, name: 'journal' },
} as const;

// Which of INPUT_LIMITS a file is read as.
export type InputKind = keyof typeof INPUT_LIMITS;

const size = (n: number) =>
  n >= 1 << 20 && n % (1 << 20) === 0 ? `${n / (1 << 20)} MiB` : n >= 1 << 10 && n % (1 << 10) === 0 ? `${n / (1 << 10)} KiB` : `${n} bytes`;

// What a file that is not a regular one is, as messages say it (from lstat, a symbolic link is one).
export function kindOf(st: Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a directory';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isFIFO()) return 'a pipe';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

// An open descriptor of `path`, a regular file of at most `maxBytes` (default: the kind's limit), and its size; the
// caller reads it (no further than the size it was given, or it is refused as growing) and closes it. Messages start
// with `label` (default: the path) and call the file `what` when it cannot be opened (default: "<kind> file"):
// "lab.pem: cannot read the lab's public key (ENOENT)".
export function openInput(
  path: string,
  kind: InputKind,
  o: { label?: string; what?: string; maxBytes?: number } = {},
): { fd: number; size: number; limit: number; label: string; what: string } {
  const label = o.label ?? path;
  const what = o.what ?? `${INPUT_LIMITS[kind].name} file`;
  const limit = o.maxBytes ?? INPUT_LIMITS[kind].bytes;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    throw new UsageError(`${label}: cannot read ${what} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UsageError(`${label}: ${kindOf(st)}, not a regular file`);
    if (st.size > limit) throw new UsageError(`${label}: ${st.size} bytes, more than the ${size(limit)} a ${INPUT_LIMITS[kind].name} file may hold`);
    return { fd, size: st.size, limit, label, what };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

// The message of a file that grew past its limit while it was read.
export function grewPastLimit(label: string, kind: InputKind, limit: number): UsageError {
  return new UsageError(`${label}: more than the ${size(limit)} a ${INPUT_LIMITS[kind].name} file may hold`);
}

// A read error of an open input file as its one line.
export function readFailed(label: string, what: string, e: unknown): UsageError {
  return new UsageError(`${label}: cannot read ${what} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
}

// The bytes of `path`, a regular file of at most the kind's limit (see openInput for `label` and `what`).
export function readInputBytes(path: string, kind: InputKind, label: string = path, what = `${INPUT_LIMITS[kind].name} file`): Buffer {
  const { fd, size: bytes, limit } = openInput(path, kind, { label, what });
  try {
    // Read at most limit + 1 bytes: a file that grows while it is read is refused as too large, never read for ever.
    const buf = Buffer.alloc(Math.min(bytes, limit) + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) {
      try {
        got = readSync(fd, buf, n, buf.length - n, null);
      } catch (e) {
        throw readFailed(label, what, e);
      }
    }
    if (n > limit) throw grewPastLimit(label, kind, limit);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

// The same file as UTF-8 text.
export function readInputText(path: string, kind: InputKind, label: string = path, what?: string): string {
  return readInputBytes(path, kind, label, what).toString('utf8');
}
