// `mpirun --version`: Open MPI prints `mpirun (Open MPI) <version>` and a "Report bugs to" line (4.x and 5.x alike).
import { ParseError } from '../domain/errors.js';
import { clip } from './read.js';

const KIND = 'mpirun-version';
const LINE = /^\s*mpirun \(Open MPI\) ([0-9][0-9A-Za-z.+~_-]{0,31})\s*$/m;

// The Open MPI version, e.g. "4.1.6"; a ParseError for any other launcher (MPICH's prints "HYDRA build details").
export function parseMpirunVersion(text: string): string {
  const m = LINE.exec(text);
  if (m) return m[1]!;
  const first = text.split('\n').find((l) => l.trim() !== '') ?? '';
  const why = /HYDRA|MPICH/.test(text) ? 'this mpirun is MPICH (HYDRA), not Open MPI' : `no "mpirun (Open MPI) <version>" line: ${clip(first)}`;
  throw new ParseError(KIND, 1, why);
}
