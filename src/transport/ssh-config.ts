// OpenSSH client configuration (~/.ssh/config), so an alias that works with `ssh spark-a` works with cablequal too.
// Supported: Host blocks (patterns with * and ?, negation with !), first value wins, HostName (%h), User, Port,
// IdentityFile (~, %d %u %h %r %p %%), ProxyJump (comma-separated hops), ServerAliveInterval, ServerAliveCountMax,
// StrictHostKeyChecking, UserKnownHostsFile, ConnectTimeout. `Match` blocks are skipped (not evaluated), like a
// config read by an older OpenSSH; `Include` is not followed. Both are reported in `ignored`.
import { ParseError } from '../domain/errors.js';

export interface SshConfigBlock {
  patterns: string[];
  line: number;
  options: Array<{ key: string; value: string; line: number }>;
}

export interface SshConfig {
  blocks: SshConfigBlock[];
  // Keywords cablequal did not apply (Match, Include), with their line, so a report can say so.
  ignored: Array<{ key: string; line: number }>;
}

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

function splitArgs(rest: string, line: number): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (const m of rest.matchAll(re)) out.push(m[1] ?? m[2]!);
  if ((rest.match(/"/g)?.length ?? 0) % 2 === 1) throw new ParseError('ssh_config', line, 'unbalanced quote');
  return out;
}

// Pure parser of ssh_config text.
export function parseSshConfig(text: string): SshConfig {
  const blocks: SshConfigBlock[] = [{ patterns: ['*'], line: 0, options: [] }];
  const ignored: SshConfig['ignored'] = [];
  let skipping = false;
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = i + 1;
    const s = raw.trim();
    if (s === '' || s.startsWith('#')) return;
    const m = /^([A-Za-z][A-Za-z0-9]*)(?:\s*=\s*|\s+)(.*)$/.exec(s);
    if (!m) throw new ParseError('ssh_config', line, `expected "Keyword value", got ${JSON.stringify(s.slice(0, 40))}`);
    const key = m[1]!.toLowerCase();
    const args = splitArgs(m[2]!, line);
    if (args.length === 0) throw new ParseError('ssh_config', line, `${m[1]} needs a value`);
    if (key === 'host') {
      skipping = false;
      blocks.push({ patterns: args, line, options: [] });
    } else if (key === 'match') {
      skipping = true;
      ignored.push({ key: 'Match', line });
    } else if (key === 'include') {
      ignored.push({ key: 'Include', line });
    } else if (!skipping) {
      blocks[blocks.length - 1]!.options.push({ key, value: args.join(' '), line });
    }
  });
  return { blocks, ignored };
}

// OpenSSH glob: * any run, ? one character, case-insensitive on host names.
export function globMatch(pattern: string, text: string): boolean {
  const re = new RegExp(
    `^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*').replaceAll('?', '.')}$`,
    'i',
  );
  return re.test(text);
}

// A pattern list matches when some positive pattern matches and no negated one does (OpenSSH match_pattern_list).
export function matchPatternList(patterns: string[], host: string): boolean {
  let hit = false;
  for (const p of patterns) {
    if (p.startsWith('!')) {
      if (globMatch(p.slice(1), host)) return false;
    } else if (globMatch(p, host)) hit = true;
  }
  return hit;
}

export interface ResolveEnv {
  homeDir: string;
  localUser: string;
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

// Apply the config to an alias, like `ssh -G alias` would (for the keywords listed at the top of this file).
export function resolveHost(config: SshConfig, alias: string, env: ResolveEnv): ResolvedHost {
  const first = new Map<string, { value: string; line: number }>();
  const identity: string[] = [];
  for (const b of config.blocks) {
    if (!matchPatternList(b.patterns, alias)) continue;
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
    if (!Number.isInteger(n) || n < 0) throw new ParseError('ssh_config', o.line, `${k} must be a whole number, got ${o.value}`);
    return n;
  };
  const hostName = (get('hostname') ?? alias).replace(/%h/g, alias).replace(/%%/g, '%');
  const user = get('user') ?? env.localUser;
  const port = num('port', 22);
  if (port < 1 || port > 65535) throw new ParseError('ssh_config', first.get('port')!.line, `Port out of range: ${port}`);
  const tokens = { h: hostName, r: user, p: port, d: env.homeDir, u: env.localUser };
  const defaults = ['id_ed25519', 'id_ecdsa', 'id_rsa'].map((f) => `${env.homeDir}/.ssh/${f}`);
  const jump = get('proxyjump');
  const ukh = get('userknownhostsfile');
  return {
    alias,
    hostName,
    user,
    port,
    identityFiles: identity.length ? identity.map((f) => expandTokens(f, tokens)) : defaults,
    identityFileFromConfig: identity.length > 0,
    proxyJump: jump && jump.toLowerCase() !== 'none' ? jump.split(',').map((s) => s.trim()).filter(Boolean) : [],
    serverAliveIntervalS: num('serveraliveinterval', 0),
    serverAliveCountMax: num('serveralivecountmax', 3),
    strictHostKeyChecking: get('stricthostkeychecking') ?? null,
    userKnownHostsFile: ukh ? expandTokens(ukh.split(' ')[0]!, tokens) : null,
    connectTimeoutS: first.has('connecttimeout') ? num('connecttimeout', 0) : null,
  };
}

// A ProxyJump hop is `[user@]host[:port]` (an alias from the same config, or a plain host).
export function parseJumpHop(hop: string): { user: string | null; host: string; port: number | null } {
  const m = /^(?:([^@\s]+)@)?(\[[^\]]+\]|[^:\s]+)(?::(\d+))?$/.exec(hop);
  if (!m) throw new ParseError('ssh_config', 0, `bad ProxyJump hop ${JSON.stringify(hop)}`);
  return { user: m[1] ?? null, host: m[2]!.replace(/^\[|\]$/g, ''), port: m[3] ? Number(m[3]) : null };
}
