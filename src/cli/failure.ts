import { UsageError } from '../domain/errors.js';
import { clip, printable } from '../domain/text.js';
import { EXIT } from './exit-codes.js';

// A usage problem found by the argument parser (unknown option, missing argument): the command's usage line (when a
// argument is missing) and the --help to read follow it.
export class ArgvError extends UsageError {
  readonly helpFor: string;
  readonly usage: string | undefined;
  constructor(message: string, more: { helpFor?: string; usage?: string } = {}) {
    super(message);
    this.helpFor = more.helpFor ?? 'cablequal --help';
    this.usage = more.usage;
  }
}

// The machine could not do what was asked (disk full, I/O error): one ERROR line, exit 3.
export class MachineError extends Error {
  override readonly name = 'MachineError';
}

// File system errors a user's path causes (exit 2) and those of the machine (exit 3), in words.
const PATH_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'is a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'name too long',
  EEXIST: 'already exists',
  EROFS: 'read-only file system',
  EINVAL: 'invalid argument for this file',
  ENXIO: 'no such device',
};
const MACHINE_PROBLEMS: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EIO: 'input/output error',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in the system',
  ENOMEM: 'out of memory',
  EFBIG: 'file too large',
};

const VERB: Record<string, string> = {
  open: 'open',
  read: 'read',
  write: 'write',
  mkdir: 'create',
  rename: 'write',
  scandir: 'list',
  stat: 'read',
  unlink: 'remove',
  fsync: 'write',
  close: 'write',
};

// An errno code in words, with the code kept (for searching): "no space left on device (ENOSPC)".
export function errnoWhy(code: string | undefined): string | null {
  const why = PATH_PROBLEMS[code ?? ''] ?? MACHINE_PROBLEMS[code ?? ''];
  return why ? `${why} (${code})` : null;
}

// One line for the operator: what failed on which path, with the errno code.
export function errnoLine(e: NodeJS.ErrnoException): string | null {
  const code = e.code ?? '';
  const why = PATH_PROBLEMS[code] ?? MACHINE_PROBLEMS[code];
  if (!why) return null;
  // A rename names the temp file as path and the target as dest: the target is what the operator gave.
  const path = (e.syscall === 'rename' ? (e as { dest?: string }).dest : undefined) ?? e.path ?? (e as { dest?: string }).dest;
  const verb = e.syscall ? (VERB[e.syscall] ?? e.syscall) : 'use';
  return path ? `cannot ${verb} ${path}: ${why} (${code})` : `${why} (${code})`;
}

// A file system error as the error the CLI tells in one line (UsageError for a path's fault, MachineError for the
// machine's), with `then` appended (what is kept, what to do); null when it is not a file system error.
export function asOneLine(e: unknown, then = '', target?: string): UsageError | MachineError | null {
  const err = e as NodeJS.ErrnoException;
  const line = err && typeof err === 'object' ? (target && errnoWhy(err.code) ? `cannot write ${target}: ${errnoWhy(err.code)}` : errnoLine(err)) : null;
  if (!line) return null;
  return MACHINE_PROBLEMS[err.code!] ? new MachineError(`${line}${then}`) : new UsageError(`${line}${then}`);
}

// How an error that escaped a command is told: exit code and one printable line, or null for a bug (exit 70 with
// its stack, so that it can be reported).
export function describeFailure(e: unknown): { code: number; text: string } | null {
  const one = (s: string) => clip(printable(s), 1000);
  // yargs writes some of its messages on several lines ("Invalid values:\n  Argument: ..."): one line here.
  if (e instanceof ArgvError)
    return {
      code: EXIT.usage,
      text: `${one(
        e.message
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean)
          .join(' '),
      )}\n${e.usage ? `${one(e.usage)}\n` : ''}Run "${e.helpFor}" for usage.`,
    };
  if (e instanceof UsageError) return { code: EXIT.usage, text: one(e.message) };
  if (e instanceof MachineError) return { code: EXIT.error, text: one(`ERROR: ${e.message}`) };
  const told = asOneLine(e);
  return told ? describeFailure(told) : null;
}
