// OpenSSH client configuration (~/.ssh/config), so an alias that works with `ssh spark-a` works with cablequal too.
// Supported: Host blocks (patterns with * and ?, negation with !), first value wins, HostName (%h), User, Port,
// IdentityFile (~, %d %u %h %r %p %%), ProxyJump (comma-separated hops), ServerAliveInterval, ServerAliveCountMax,
// StrictHostKeyChecking, UserKnownHostsFile, ConnectTimeout.
// Include is followed like OpenSSH: several paths, globs (* ? [...]), ~, relative paths under ~/.ssh, matches in
// lexical order, no match silently skipped, an Include inside a Host/Match block only applying while that block
// does, at most 16 levels deep. The files come from an injected reader (ssh-config-files.ts reads the disk), so
// this module stays pure; without a reader Include is reported in `ignored`.
// Match is evaluated where it stands, as OpenSSH does, for the criteria that have no side effect: all, host (the
// HostName obtained so far, else the name typed), originalhost (the name typed), user (the User so far, or the user
// given with the node, which wins like `ssh -l`), localuser;
// `!criterion`, comma-separated pattern lists with !, several criteria ANDed. exec, canonical, final, tagged,
// localnetwork and unknown criteria are not evaluated: such a block is not applied and is reported in `ignored`.
import { ParseError } from '../domain/errors.js';

// One Host or Match line: the condition of the options below it.
export type SshCondition =
  | { kind: 'host'; patterns: string[]; file: string | null; line: number }
  | { kind: 'match'; criteria: MatchCriterion[]; unevaluable: string | null; file: string | null; line: number };

export interface MatchCriterion {
  name: 'all' | 'host' | 'originalhost' | 'user' | 'localuser';
  negate: boolean;
  patterns: string[];
}

export interface SshConfigBlock {
  // All must hold: the conditions of the blocks around the Include(s) that brought this block in, then its own.
  // A condition object is shared by every block it governs, so it is evaluated once, where it stands.
  conditions: SshCondition[];
  options: Array<{ key: string; value: string; file: string | null; line: number }>;
}

export interface SshConfig {
  blocks: SshConfigBlock[];
  // Lines cablequal did not apply (a Match it cannot evaluate, an Include without a reader), so a report can say so.
  ignored: Array<{ key: string; file: string | null; line: number; reason: string }>;
}

// One file an Include pattern names.
export interface IncludedFile {
  path: string;
  text: string;
}

// Reads the files an Include pattern names (absolute, ~ already expanded), in lexical order; [] when none match.
// Throws (a plain Error) for a file that exists but cannot be read.
export type IncludeReader = (pattern: string) => IncludedFile[];

export interface ParseOptions {
  // The file's path, for errors and `ignored` (default: "ssh_config" without a path).
  file?: string;
  // How Include lines are followed; absent: they are reported in `ignored`.
  include?: { homeDir: string; read: IncludeReader };
}

// OpenSSH's READCONF_MAX_DEPTH: files included from files included from ... the top file.
export const MAX_INCLUDE_DEPTH = 16;

// What the connection to one alias uses, after the config and the defaults are applied.
export interface ResolvedHost {
  alias: string;
  hostName: string;
  user: string;
  port: number;
  identityFiles: string[];
  identityFileFromConfig: boolean;
  proxyJump: string[];
  serverAliveIntervalS: number;
  serverAliveCountMax: number;
  strictHostKeyChecking: string | null;
  userKnownHostsFile: string | null;
  connectTimeoutS: number | null;
}

const MULTI = new Set(['identityfile', 'localforward', 'remoteforward', 'dynamicforward', 'certificatefile', 'sendenv']);

const kindOf = (file: string | null) => (file ? `ssh_config ${file}` : 'ssh_config');

function splitArgs(rest: string, file: string | null, line: number): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (const m of rest.matchAll(re)) out.push(m[1] ?? m[2]!);
  if ((rest.match(/"/g)?.length ?? 0) % 2 === 1) throw new ParseError(kindOf(file), line, 'unbalanced quote');
  return out;
}

const EVALUATED = new Set(['host', 'originalhost', 'user', 'localuser']);
const NOT_EVALUATED: Record<string, string> = {
  exec: 'it would run a command',
  canonical: 'cablequal does not canonicalize host names',
  final: 'cablequal makes no final pass',
  tagged: 'cablequal does not apply Tag',
  localnetwork: 'it needs the local interface addresses',
};

// A Match line's criteria, or the reason it cannot be evaluated (the first criterion that cannot be).
function parseMatch(args: string[], file: string | null, line: number): Extract<SshCondition, { kind: 'match' }> {
  const err = (reason: string) => new ParseError(kindOf(file), line, reason);
  const criteria: MatchCriterion[] = [];
  let unevaluable: string | null = null;
  const names: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const negate = args[i]!.startsWith('!');
    const name = (negate ? args[i]!.slice(1) : args[i]!).toLowerCase();
    names.push(name);
    if (name === 'all' || name === 'canonical' || name === 'final') {
      if (name === 'canonical' || name === 'final') unevaluable ??= `Match ${name}: not evaluated (${NOT_EVALUATED[name]})`;
      else criteria.push({ name, negate, patterns: [] });
      continue;
    }
    const arg = args[i + 1];
    if (arg === undefined) throw err(`Match ${args[i]} needs a pattern list (or an argument)`);
    i++;
    if (EVALUATED.has(name)) criteria.push({ name: name as MatchCriterion['name'], negate, patterns: arg.split(',') });
    else unevaluable ??= `Match ${name}: not evaluated (${NOT_EVALUATED[name] ?? 'unknown criterion'})`;
  }
  // OpenSSH: `all` stands alone, or after canonical/final.
  if (names.includes('all') && names.some((n) => n !== 'all' && n !== 'canonical' && n !== 'final')) {
    throw err(`Match all cannot be combined with other criteria (${names.join(' ')})`);
  }
  return { kind: 'match', criteria, unevaluable, file, line };
}

// An Include argument as the absolute pattern OpenSSH globs: ~ is the home directory, relative is under ~/.ssh.
function includePattern(arg: string, homeDir: string, file: string | null, line: number): string {
  if (arg.startsWith('/')) return arg;
  if (arg === '~' || arg.startsWith('~/')) return homeDir + arg.slice(1);
  if (arg.startsWith('~')) throw new ParseError(kindOf(file), line, `Include ${arg}: ~user paths are not supported; write the full path`);
  return `${homeDir}/.ssh/${arg}`;
}

interface Frame {
  file: string | null;
  line: number;
}

function parseInto(out: SshConfig, text: string, file: string | null, outer: SshCondition[], chain: Frame[], opts: ParseOptions): void {
  // The block the next option lines go to; a new one after each Host/Match line and after each Include.
  let conditions = outer;
  let block: SshConfigBlock = { conditions, options: [] };
  out.blocks.push(block);
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = i + 1;
    const s = raw.trim();
    if (s === '' || s.startsWith('#')) return;
    const m = /^([A-Za-z][A-Za-z0-9]*)(?:\s*=\s*|\s+)(.*)$/.exec(s);
    if (!m) throw new ParseError(kindOf(file), line, `expected "Keyword value", got ${JSON.stringify(s.slice(0, 40))}`);
    const key = m[1]!.toLowerCase();
    const args = splitArgs(m[2]!, file, line);
    if (args.length === 0) throw new ParseError(kindOf(file), line, `${m[1]} needs a value`);
    if (key === 'host' || key === 'match') {
      const cond: SshCondition = key === 'host' ? { kind: 'host', patterns: args, file, line } : parseMatch(args, file, line);
      if (cond.kind === 'match' && cond.unevaluable) out.ignored.push({ key: 'Match', file, line, reason: `${cond.unevaluable}; the block is not applied` });
      conditions = [...outer, cond];
      block = { conditions, options: [] };
      out.blocks.push(block);
    } else if (key === 'include') {
      if (!opts.include) {
        out.ignored.push({ key: 'Include', file, line, reason: 'not followed: no file reader given' });
        return;
      }
      for (const arg of args) {
        const pattern = includePattern(arg, opts.include.homeDir, file, line);
        let files: IncludedFile[];
        try {
          files = opts.include.read(pattern);
        } catch (e) {
          throw new ParseError(kindOf(file), line, `Include ${arg}: ${(e as Error).message}`);
        }
        for (const f of files) {
          const here = [...chain, { file, line }];
          if (here.length > MAX_INCLUDE_DEPTH) {
            const names = [...new Set([...here.map((h) => h.file ?? 'ssh_config'), f.path])];
            throw new ParseError(
              kindOf(file),
              line,
              `Include nested more than ${MAX_INCLUDE_DEPTH} levels deep (OpenSSH's limit) through ${names.join(', ')}: look for a file that includes itself`,
            );
          }
          parseInto(out, f.text, f.path, conditions, here, opts);
        }
      }
      // The rest of the enclosing block, after what the included files said.
      block = { conditions, options: [] };
      out.blocks.push(block);
    } else {
      block.options.push({ key, value: args.join(' '), file, line });
    }
  });
}

// Pure parser of ssh_config text; Include lines read their files through `opts.include.read`.
export function parseSshConfig(text: string, opts: ParseOptions = {}): SshConfig {
  const out: SshConfig = { blocks: [], ignored: [] };
  parseInto(out, text, opts.file ?? null, [], [], opts);
  return out;
}

// OpenSSH glob: * any run, ? one character; case-insensitive for host names, case-sensitive for user names.
export function globMatch(pattern: string, text: string, ignoreCase = true): boolean {
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replaceAll('*', '.*')
      .replaceAll('?', '.')}$`,
    ignoreCase ? 'i' : '',
  );
  return re.test(text);
}

// A pattern list matches when some positive pattern matches and no negated one does (OpenSSH match_pattern_list).
export function matchPatternList(patterns: string[], host: string, ignoreCase = true): boolean {
  let hit = false;
  for (const p of patterns) {
    if (p.startsWith('!')) {
      if (globMatch(p.slice(1), host, ignoreCase)) return false;
    } else if (globMatch(p, host, ignoreCase)) hit = true;
  }
  return hit;
}

export interface ResolveEnv {
  homeDir: string;
  localUser: string;
  // The user given with the node (user@host): like `ssh -l`, it wins over User lines and `Match user` sees it.
  user?: string;
}

function expandTokens(value: string, t: { h: string; r: string; p: number; d: string; u: string }): string {
  let v = value.startsWith('~/') || value === '~' ? t.d + value.slice(1) : value;
  v = v.replace(/%([%dhurp])/g, (_m, c: string) => {
    switch (c) {
      case '%':
        return '%';
      case 'd':
        return t.d;
      case 'h':
        return t.h;
      case 'u':
        return t.u;
      case 'r':
        return t.r;
      default:
        return String(t.p);
    }
  });
  return v;
}

// HostName with %h (the alias) and %% expanded, as OpenSSH does before it connects and when it evaluates Match host.
function expandHostName(value: string, alias: string): string {
  return value.replace(/%([%h])/g, (_m, c: string) => (c === 'h' ? alias : '%'));
}

// Apply the config to an alias, like `ssh -G alias` would (for the keywords listed at the top of this file).
export function resolveHost(config: SshConfig, alias: string, env: ResolveEnv): ResolvedHost {
  const first = new Map<string, { value: string; file: string | null; line: number }>();
  const identity: string[] = [];
  // Match criteria see the values obtained so far, so each condition is evaluated once, at its own line.
  const seen = new Map<SshCondition, boolean>();
  const evaluate = (c: SshCondition): boolean => {
    if (c.kind === 'host') return matchPatternList(c.patterns, alias);
    if (c.unevaluable) return false;
    const hn = first.get('hostname');
    const subject: Record<MatchCriterion['name'], string> = {
      all: '',
      host: hn ? expandHostName(hn.value, alias) : alias,
      originalhost: alias,
      user: env.user ?? first.get('user')?.value ?? env.localUser,
      localuser: env.localUser,
    };
    return c.criteria.every((k) => {
      const hit = k.name === 'all' || matchPatternList(k.patterns, subject[k.name], k.name === 'host' || k.name === 'originalhost');
      return hit !== k.negate;
    });
  };
  const holds = (c: SshCondition): boolean => {
    let v = seen.get(c);
    if (v === undefined) seen.set(c, (v = evaluate(c)));
    return v;
  };
  for (const b of config.blocks) {
    if (!b.conditions.every(holds)) continue;
    for (const o of b.options) {
      if (o.key === 'identityfile') identity.push(o.value);
      else if (!MULTI.has(o.key) && !first.has(o.key)) first.set(o.key, o);
    }
  }
  const get = (k: string) => first.get(k)?.value;
  const num = (k: string, fallback: number): number => {
    const o = first.get(k);
    if (!o) return fallback;
    const n = Number(o.value);
    if (!Number.isInteger(n) || n < 0) throw new ParseError(kindOf(o.file), o.line, `${k} must be a whole number, got ${o.value}`);
    return n;
  };
  const hostName = expandHostName(get('hostname') ?? alias, alias);
  const user = env.user ?? get('user') ?? env.localUser;
  const port = num('port', 22);
  if (port < 1 || port > 65535) throw new ParseError(kindOf(first.get('port')!.file), first.get('port')!.line, `Port out of range: ${port}`);
  const tokens = { h: hostName, r: user, p: port, d: env.homeDir, u: env.localUser };
  const defaults = ['id_ed25519', 'id_ecdsa', 'id_rsa'].map((f) => `${env.homeDir}/.ssh/${f}`);
  const jump = get('proxyjump');
  const jumps =
    jump && jump.toLowerCase() !== 'none'
      ? jump
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [];
  // A bad hop is bad input found here, with its file and line, not when the connection is first tried.
  for (const hop of jumps) {
    if (!JUMP_HOP.test(hop)) {
      const at = first.get('proxyjump')!;
      throw new ParseError(kindOf(at.file), at.line, `bad ProxyJump hop ${JSON.stringify(hop)}: expected [user@]host[:port]`);
    }
  }
  const ukh = get('userknownhostsfile');
  return {
    alias,
    hostName,
    user,
    port,
    identityFiles: identity.length ? identity.map((f) => expandTokens(f, tokens)) : defaults,
    identityFileFromConfig: identity.length > 0,
    proxyJump: jumps,
    serverAliveIntervalS: num('serveraliveinterval', 0),
    serverAliveCountMax: num('serveralivecountmax', 3),
    strictHostKeyChecking: get('stricthostkeychecking') ?? null,
    userKnownHostsFile: ukh ? expandTokens(ukh.split(' ')[0]!, tokens) : null,
    connectTimeoutS: first.has('connecttimeout') ? num('connecttimeout', 0) : null,
  };
}

// A ProxyJump hop is `[user@]host[:port]` (an alias from the same config, or a plain host).
const JUMP_HOP = /^(?:([^@\s]+)@)?(\[[^\]]+\]|[^:\s]+)(?::(\d+))?$/;
export function parseJumpHop(hop: string): { user: string | null; host: string; port: number | null } {
  const m = JUMP_HOP.exec(hop);
  if (!m) throw new ParseError('ssh_config', 0, `bad ProxyJump hop ${JSON.stringify(hop)}`);
  return { user: m[1] ?? null, host: m[2]!.replace(/^\[|\]$/g, ''), port: m[3] ? Number(m[3]) : null };
}
