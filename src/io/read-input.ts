// Every file the CLI reads as input (protocol, scenario, manifest, certificate, key) is read here: a regular file,
// below a size limit for its kind, or a one-line usage error naming the file. `/dev/zero`, a FIFO or a 2 GB file
// named as a protocol never hangs or fills memory: the file is opened without blocking, checked with fstat, and read
// no further than the limit.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { UsageError } from '../domain/errors.js';

// The largest file of each kind the CLI reads, in bytes, and what messages call it. A shipped protocol is ~6 KB, a
// scenario ~4 KB, a key ~120 bytes, a certificate of the full procedure ~60 KB, a manifest of 10,000 cables ~500 KB,
// an ssh config a few KB.
export const INPUT_LIMITS = {
  protocol: { bytes: 1 << 20, name: 'protocol' },
  scenario: { bytes: 1 << 20, name: 'scenario' },
  scenarioList: { bytes: 1 << 20, name: 'scenario list' },
  manifest: { bytes: 16 << 20, name: 'manifest' },
  certificate: { bytes: 16 << 20, name: 'certificate' },
  key: { bytes: 64 << 10, name: 'key' },
  sshConfig: { bytes: 1 << 20, name: 'ssh config' },
  // `cablequal parse <kind> <file>`: one command's output (`ethtool -S` of mlx5 is ~60 KB).
  output: { bytes: 16 << 20, name: 'command output' },
} as const;

// Which of INPUT_LIMITS a file is read as.
export type InputKind = keyof typeof INPUT_LIMITS;

const size = (n: number) => (n >= 1 << 20 ? `${n / (1 << 20)} MiB` : `${n / (1 << 10)} KiB`);

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isFIFO()) return 'a pipe';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

// The bytes of `path`, a regular file of at most the kind's limit. Messages start with `label` (default: the path)
// and call the file `what` when it cannot be opened (default: "<kind> file"): "lab.pem: cannot read the lab's
// public key (ENOENT)".
export function readInputBytes(path: string, kind: InputKind, label: string = path, what = `${INPUT_LIMITS[kind].name} file`): Buffer {
  const limit = INPUT_LIMITS[kind].bytes;
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
    // Read at most limit + 1 bytes: a file that grows while it is read is refused as too large, never read for ever.
    const buf = Buffer.alloc(Math.min(st.size, limit) + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) {
      try {
        got = readSync(fd, buf, n, buf.length - n, null);
      } catch (e) {
        throw new UsageError(`${label}: cannot read ${what} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
      }
    }
    if (n > limit) throw new UsageError(`${label}: more than the ${size(limit)} a ${INPUT_LIMITS[kind].name} file may hold`);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

// The same file as UTF-8 text.
export function readInputText(path: string, kind: InputKind, label: string = path, what?: string): string {
  return readInputBytes(path, kind, label, what).toString('utf8');
}
