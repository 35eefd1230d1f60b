// The disk side of the ssh config: the top file and the files its Include lines name, read for the pure parser in
// ssh-config.ts. Include globs are expanded like glob(3) as OpenSSH calls it: * ? [...] [!...] per path component, a
// leading dot only matched by a literal dot, backslash escapes, results in byte order, no match = nothing.
import { readdirSync, statSync } from 'node:fs';
import type { IncludedFile, SshConfig } from './ssh-config.js';
import { parseSshConfig } from './ssh-config.js';
import { readInputText } from '../io/read-input.js';

const MAGIC = /[*?[]/;

// One path component of a glob as a regular expression, or null when it has no wildcard (a literal name).
export function componentRegExp(pattern: string): RegExp | null {
  let re = '';
  let magic = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) {
      re += escapeRe(pattern[++i]!);
    } else if (c === '*') {
      magic = true;
      re += '.*';
    } else if (c === '?') {
      magic = true;
      re += '.';
    } else if (c === '[') {
      // A set: `]` first is literal, `!` or `^` first negates; an unclosed `[` is a literal `[`.
      let j = i + 1;
      const negate = pattern[j] === '!' || pattern[j] === '^';
      if (negate) j++;
      if (pattern[j] === ']') j++;
      while (j < pattern.length && pattern[j] !== ']') j++;
      if (j >= pattern.length) {
        re += '\\[';
        continue;
      }
      const body = pattern.slice(i + 1 + (negate ? 1 : 0), j).replace(/[\\\]^]/g, '\\$&');
      re += negate ? `[^${body}]` : `[${body}]`;
      magic = true;
      i = j;
    } else {
      re += escapeRe(c);
    }
  }
  return magic ? new RegExp(`^${re}$`, 's') : null;
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function unescapeLiteral(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

const join = (dir: string, name: string) => (dir.endsWith('/') ? dir + name : `${dir}/${name}`);

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

// The existing paths an absolute glob pattern names, in byte order (glob(3) sorting in the C locale); [] for none.
export function globPaths(pattern: string): string[] {
  if (!pattern.startsWith('/')) throw new Error(`glob pattern must be absolute: ${pattern}`);
  let bases = ['/'];
  for (const part of pattern.split('/').slice(1)) {
    if (part === '') continue;
    const re = MAGIC.test(part) ? componentRegExp(part) : null;
    if (!re) {
      bases = bases.map((b) => join(b, unescapeLiteral(part)));
      continue;
    }
    const next: string[] = [];
    for (const b of bases) {
      let names: string[];
      try {
        names = readdirSync(b);
      } catch {
        continue; // not a directory, or not readable: no match below it (glob(3) without GLOB_ERR)
      }
      for (const n of names) if ((!n.startsWith('.') || part.startsWith('.')) && re.test(n)) next.push(join(b, n));
    }
    bases = next;
    if (bases.length === 0) return [];
  }
  return bases.filter((p) => exists(p)).sort(byteOrder);
}

function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}

// IncludeReader over the real file system. A directory a glob matches gives no lines (OpenSSH reads nothing from it).
export function readIncludeFromDisk(pattern: string): IncludedFile[] {
  const out: IncludedFile[] = [];
  for (const path of globPaths(pattern)) {
    try {
      if (statSync(path).isDirectory()) continue;
      out.push({ path, text: readInputText(path, 'sshConfig') });
    } catch (e) {
      throw new Error(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
    }
  }
  return out;
}

// The user's ssh config (or the --ssh-config file) with its Includes, each a regular file of at most 1 MiB
// (io/read-input.ts: /dev/zero named there is refused, never read for ever); relative Includes are under homeDir/.ssh,
// as OpenSSH does for a user config and for `ssh -F`.
export function loadSshConfig(path: string, homeDir: string): SshConfig {
  return parseSshConfig(readInputText(path, 'sshConfig'), { file: path, include: { homeDir, read: readIncludeFromDisk } });
}
