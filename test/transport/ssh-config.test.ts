import { describe, expect, it } from 'vitest';
import { ParseError } from '../../src/domain/errors.js';
import { globMatch, matchPatternList, parseJumpHop, parseSshConfig, resolveHost } from '../../src/transport/ssh-config.js';

const env = { homeDir: '/home/op', localUser: 'op' };

const CONFIG = `
# lab nodes
Host spark-? !spark-9
    HostName %h.lab.example
    User nvidia
    IdentityFile ~/.ssh/lab_%r_%h
    ServerAliveInterval 10

Host spark-a
    HostName 10.0.0.1
    Port 2222
    User other

Host spark-9
    ProxyJump jump@bastion:2200,spark-b
    User=admin

Match host spark-a
    User ignored

Host *
    User fallback
    IdentityFile %d/.ssh/id_ed25519
    ServerAliveInterval 60
`;

describe('parseSshConfig / resolveHost', () => {
  const cfg = parseSshConfig(CONFIG);

  it('first value wins across matching blocks, %h expands to the alias, IdentityFile accumulates', () => {
    const a = resolveHost(cfg, 'spark-a', env);
    expect(a.hostName).toBe('spark-a.lab.example'); // first block wins over the later "HostName 10.0.0.1"
    expect(a.user).toBe('nvidia');
    expect(a.port).toBe(2222); // only set by the second block
    expect(a.serverAliveIntervalS).toBe(10);
    expect(a.identityFiles).toEqual(['/home/op/.ssh/lab_nvidia_spark-a.lab.example', '/home/op/.ssh/id_ed25519']);
    expect(a.identityFileFromConfig).toBe(true);
  });

  it('negated pattern excludes a host from a block', () => {
    const n = resolveHost(cfg, 'spark-9', env);
    expect(n.hostName).toBe('spark-9');
    expect(n.user).toBe('admin');
    expect(n.proxyJump).toEqual(['jump@bastion:2200', 'spark-b']);
    expect(n.serverAliveIntervalS).toBe(60);
  });

  it('Match blocks are skipped and reported', () => {
    expect(cfg.ignored).toEqual([{ key: 'Match', line: 18 }]);
  });

  it('defaults: port 22, local user, default identity files', () => {
    const d = resolveHost(parseSshConfig(''), 'node1', env);
    expect(d).toMatchObject({ hostName: 'node1', user: 'op', port: 22, proxyJump: [], identityFileFromConfig: false });
    expect(d.identityFiles).toEqual(['/home/op/.ssh/id_ed25519', '/home/op/.ssh/id_ecdsa', '/home/op/.ssh/id_rsa']);
  });

  it('quoted values and = separator', () => {
    const c = parseSshConfig('Host x\n  IdentityFile "/keys/my key"\n  Port=2022\n');
    expect(resolveHost(c, 'x', env)).toMatchObject({ identityFiles: ['/keys/my key'], port: 2022 });
  });

  it('bad lines are ParseErrors with their line number', () => {
    expect(() => parseSshConfig('Host x\n  Port\n')).toThrow(ParseError);
    expect(() => resolveHost(parseSshConfig('Host x\n  Port abc\n'), 'x', env)).toThrow(/line 2: port must be a whole number/);
    expect(() => parseSshConfig('Host x\n  IdentityFile "unclosed\n')).toThrow(/line 2: unbalanced quote/);
  });
});

describe('patterns', () => {
  it('glob * and ?', () => {
    expect(globMatch('spark-?', 'spark-a')).toBe(true);
    expect(globMatch('spark-?', 'spark-ab')).toBe(false);
    expect(globMatch('*.lab', 'a.b.lab')).toBe(true);
    expect(globMatch('[127.0.0.1]:22?2', '[127.0.0.1]:2202')).toBe(true);
  });
  it('negation wins over a positive match', () => {
    expect(matchPatternList(['*', '!bad'], 'bad')).toBe(false);
    expect(matchPatternList(['*', '!bad'], 'good')).toBe(true);
    expect(matchPatternList(['!bad'], 'good')).toBe(false); // negation alone never matches
  });
  it('jump hops', () => {
    expect(parseJumpHop('jump@bastion:2200')).toEqual({ user: 'jump', host: 'bastion', port: 2200 });
    expect(parseJumpHop('[::1]:22')).toEqual({ user: null, host: '::1', port: 22 });
    expect(parseJumpHop('b')).toEqual({ user: null, host: 'b', port: null });
  });
});
