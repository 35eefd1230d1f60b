import { mkdirSync, statSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';

// Why a path cannot hold our files, in words (the errno code stays in the message for searching).
const WHY: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOENT: 'the file system does not accept a directory there',
  ENAMETOOLONG: 'name too long',
  ELOOP: 'too many symbolic links',
  ENOTDIR: 'a part of the path is not a directory',
};

function kindOf(st: Stats): string {
  if (st.isFile()) return 'a file';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a pipe';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a directory';
}

// The path's stat, or null when it (or a parent that is not a directory) does not exist.
function statOrNull(p: string, what: string): Stats | null {
  try {
    return statSync(p);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    if (WHY[code]) throw new UsageError(`${what}: cannot use ${p}: ${WHY[code]} (${code})`);
    throw e;
  }
}

// The directories `abs` needs made, parents first; a usage error when an existing part of it is not a directory.
function missingDirs(abs: string, what: string): string[] {
  const missing: string[] = [];
  for (let p = abs; ; p = dirname(p)) {
    const st = statOrNull(p, what);
    if (st) {
      if (!st.isDirectory()) throw new UsageError(`${what}: ${p} is ${kindOf(st)}, not a directory`);
      break;
    }
    missing.unshift(p);
    if (dirname(p) === p) break;
  }
  return missing;
}

// What ensureDir would refuse, without making anything (a dry run checks --out but writes nothing).
export function checkDir(dir: string, what = dir): string {
  const abs = resolve(dir);
  missingDirs(abs, what);
  return abs;
}

// Make `dir` and its missing parents one level at a time, or say in one line why not (a usage error: exit 2).
// fs.mkdirSync(recursive) never returns on some paths (/proc/x: it retries for ever, and a SIGTERM cannot be
// handled while it spins); here every step either succeeds or fails at once. `what` names the option or file.
export function ensureDir(dir: string, what = dir): string {
  const abs = resolve(dir);
  for (const p of missingDirs(abs, what)) {
    try {
      mkdirSync(p);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? '';
      if (code === 'EEXIST' && statOrNull(p, what)?.isDirectory()) continue; // made by someone else meanwhile
      if (WHY[code]) throw new UsageError(`${what}: cannot create ${p}: ${WHY[code]} (${code})`);
      throw e;
    }
  }
  return abs;
}
