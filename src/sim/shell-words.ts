// Just enough of /bin/sh for the simulated nodes: split a command line into words, drop redirections and
// harmless wrappers, and expand globs against the node's virtual files.

export interface ParsedCommand {
  argv: string[];
  sudo: boolean;
  sudoList?: boolean; // `sudo -l <command>`: only asks whether the command is allowed
  stderrToNull: boolean;
  stderrToStdout: boolean;
  // stdout buffering the program runs with: `stdbuf -oL` line, `stdbuf -o0` none, else glibc's full buffering.
  stdout: 'full' | 'line' | 'none';
}

// Split into words with single/double quotes and backslash escapes; null when quotes are unbalanced.
function splitWords(line: string): string[] | null {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  let q: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (q) {
      if (c === q) q = null;
      else if (c === '\\' && q === '"' && i + 1 < line.length) cur += line[++i];
      else cur += c;
    } else if (c === "'" || c === '"') {
      q = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (q) return null;
  if (inWord) words.push(cur);
  return words;
}

// Split a pipeline on top-level `|` (not inside quotes, not `||`); null when quotes are unbalanced.
export function splitPipeline(line: string): string[] | null {
  const parts: string[] = [];
  let cur = '';
  let q: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (q) {
      if (c === q) q = null;
      cur += c;
    } else if (c === "'" || c === '"') {
      q = c;
      cur += c;
    } else if (c === '|' && line[i + 1] !== '|' && line[i - 1] !== '|') {
      parts.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  if (q) return null;
  parts.push(cur.trim());
  return parts;
}

// `grep [-E] <pattern>` as a line filter (the only pipe stage the harness uses); null for anything else.
export function grepFilter(argv: string[]): RegExp | null {
  if (argv[0] !== 'grep') return null;
  const args = argv.slice(1).filter((a) => a !== '-E');
  if (args.length !== 1 || args[0]!.startsWith('-')) return null;
  try {
    return new RegExp(args[0]!);
  } catch {
    return null;
  }
}

// Words of one simple command, with sudo/stdbuf/nohup/env prefixes and redirections taken off.
export function parseCommand(line: string): ParsedCommand | null {
  const words = splitWords(line.trim());
  if (!words) return null;
  const out: ParsedCommand = { argv: [], sudo: false, stderrToNull: false, stderrToStdout: false, stdout: 'full' };
  const rest: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '2>/dev/null') out.stderrToNull = true;
    else if (w === '2>&1') out.stderrToStdout = true;
    else if (w === '>/dev/null' || w === '&>/dev/null') continue;
    else if ((w === '>' || w === '2>' || w === '>>') && i + 1 < words.length) {
      if (w === '2>' && words[i + 1] === '/dev/null') out.stderrToNull = true;
      i++;
    } else rest.push(w);
  }
  let i = 0;
  for (;;) {
    const w = rest[i];
    if (w === 'sudo') {
      out.sudo = true;
      i++;
      while (rest[i]?.startsWith('-')) if (rest[i++] === '-l') out.sudoList = true;
    } else if (w === 'nohup' || w === 'exec') i++;
    else if (w === 'stdbuf') {
      i++;
      for (; rest[i]?.startsWith('-'); i++) {
        const o = /^(?:-o|--output=)(.*)$/.exec(rest[i]!)?.[1] ?? (rest[i] === '-o' ? rest[++i] : undefined);
        if (o === 'L') out.stdout = 'line';
        else if (o === '0') out.stdout = 'none';
      }
    } else if (w === 'env' || (w !== undefined && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w))) {
      i++;
      while (rest[i] !== undefined && /^[A-Za-z_][A-Za-z0-9_]*=/.test(rest[i]!)) i++;
    } else break;
  }
  out.argv = rest.slice(i);
  return out;
}

// A glob (`*`, `?`) as a regular expression over whole paths (kept per glob: the sampler's hwmon read repeats its globs).
function globToRegExp(glob: string): RegExp {
  let re = globs.get(glob);
  if (!re) {
    if (globs.size >= 256) globs.clear();
    globs.set(glob, (re = globRegExpOf(glob)));
  }
  return re;
}
const globs = new Map<string, RegExp>();

function globRegExpOf(glob: string): RegExp {
  const re = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '[^/]*')
    .replace(/\?/g, '[^/]');
  return new RegExp(`^${re}$`);
}

// Expand each argument against the given paths in the shell's way (sorted; an unmatched glob stays literal).
export function expandGlobs(args: string[], paths: string[]): string[] {
  const out: string[] = [];
  for (const a of args) {
    if (!/[*?]/.test(a)) {
      out.push(a);
      continue;
    }
    const re = globToRegExp(a);
    const hits = paths.filter((p) => re.test(p)).sort();
    out.push(...(hits.length ? hits : [a]));
  }
  return out;
}

// `cd <dir> && <command>` (how a load with a working directory is started): the directory and the rest; null when
// the line does not start that way.
export function splitCd(line: string): { dir: string; rest: string } | null {
  const m = /^\s*cd\s+((?:'(?:[^']|'\\'')*')+|[^\s'"&|;]+)\s+&&\s+([\s\S]*)$/.exec(line);
  if (!m) return null;
  const w = splitWords(m[1]!);
  return w && w.length === 1 ? { dir: w[0]!, rest: m[2]! } : null;
}
