import { describe, expect, it } from 'vitest';
import { ParseError } from '../../src/domain/errors.js';
import { parseErrorOf } from '../helpers/parse-error.js';
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

  it('Match host is evaluated against the HostName obtained so far, not the alias', () => {
    // spark-a's HostName is spark-a.lab.example by line 18, so `Match host spark-a` does not apply to it
    expect(resolveHost(cfg, 'spark-a', env).user).toBe('nvidia');
    const viaHostName = parseSshConfig('Host a\n  HostName a.lab\nMatch host a.lab\n  User m\n  Port 2200\n');
    expect(resolveHost(viaHostName, 'a', env)).toMatchObject({ user: 'm', port: 2200 });
    expect(cfg.ignored).toEqual([]);
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

  it('a bad ProxyJump hop is refused when the host is resolved, with its line, not at the first connect', () => {
    const e = parseErrorOf(() => resolveHost(parseSshConfig('Host x\n  HostName 10.0.0.2\n  ProxyJump ok@bastion,user@host:notaport\n'), 'x', env));
    expect(e.line).toBe(3);
    expect(e.reason).toBe('bad ProxyJump hop "user@host:notaport": expected [user@]host[:port]');
    expect(resolveHost(parseSshConfig('Host x\n  ProxyJump none\n'), 'x', env).proxyJump).toEqual([]);
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

// An in-memory IncludeReader: each pattern the parser asks for yields the files listed for it (already in the
// order a glob would give); the patterns asked for are recorded. Globbing itself is tested on disk in
// ssh-config-files.test.ts.
function memReader(files: Record<string, Array<[path: string, text: string]>>) {
  const asked: string[] = [];
  const read = (pattern: string) => {
    asked.push(pattern);
    return (files[pattern] ?? []).map(([path, text]) => ({ path, text }));
  };
  return { asked, include: { homeDir: '/home/op', read } };
}

describe('Include', () => {
  it('relative paths are under ~/.ssh, ~ is the home directory, absolute paths stay; several paths per line', () => {
    const r = memReader({});
    parseSshConfig('Include config.d/* ~/lab/ssh.conf /etc/ssh/ssh_config.d/*.conf\nInclude "with space"\n', {
      file: '/home/op/.ssh/config',
      include: r.include,
    });
    expect(r.asked).toEqual(['/home/op/.ssh/config.d/*', '/home/op/lab/ssh.conf', '/etc/ssh/ssh_config.d/*.conf', '/home/op/.ssh/with space']);
  });

  it('an alias defined in an included file is found; files apply in the order the reader gives them', () => {
    const r = memReader({
      '/home/op/.ssh/config.d/*': [
        ['/home/op/.ssh/config.d/10-sparks', 'Host spark-a\n  HostName 192.168.1.10\n  User nvidia\n'],
        ['/home/op/.ssh/config.d/20-more', 'Host spark-a spark-b\n  HostName 192.168.1.99\n  Port 2222\n'],
      ],
    });
    const c = parseSshConfig('Include config.d/*\n', { include: r.include });
    expect(resolveHost(c, 'spark-a', env)).toMatchObject({ hostName: '192.168.1.10', user: 'nvidia', port: 2222 });
    expect(resolveHost(c, 'spark-b', env)).toMatchObject({ hostName: '192.168.1.99', user: 'op', port: 2222 });
  });

  it('first obtained value wins across files: before the Include beats the included file, which beats after', () => {
    const r = memReader({ '/home/op/.ssh/inc': [['/home/op/.ssh/inc', 'User from-inc\nPort 2001\nHostName inc.lab\n']] });
    const c = parseSshConfig('Host n\n  Port 1001\n  Include inc\n  User after\n  ServerAliveInterval 7\n', { include: r.include });
    expect(resolveHost(c, 'n', env)).toMatchObject({ port: 1001, user: 'from-inc', hostName: 'inc.lab', serverAliveIntervalS: 7 });
  });

  it('inside a Host block the included lines apply only while that block matches, and the block goes on after it', () => {
    const r = memReader({
      '/home/op/.ssh/lab.conf': [['/home/op/.ssh/lab.conf', 'User labuser\nHost *\n  Port 2200\nHost spark-*\n  HostName %h.lab\n']],
    });
    const c = parseSshConfig('Host spark-*\n  Include lab.conf\n  ConnectTimeout 9\nHost *\n  ConnectTimeout 3\n', { include: r.include });
    // spark-a: the block matches, so the included lines apply (Host * inside it means "spark-* and *")
    expect(resolveHost(c, 'spark-a', env)).toMatchObject({ user: 'labuser', port: 2200, hostName: 'spark-a.lab', connectTimeoutS: 9 });
    // other: none of lab.conf applies, not even its `Host *`; the top file's Host * still does
    expect(resolveHost(c, 'other', env)).toMatchObject({ user: 'op', port: 22, hostName: 'other', connectTimeoutS: 3 });
  });

  it('a Host or Match in an included file does not change the block of the file that included it', () => {
    const r = memReader({ '/home/op/.ssh/inc': [['/home/op/.ssh/inc', 'Host nothing-matches\n  Port 1\n']] });
    const c = parseSshConfig('Host n\n  Include inc\n  User still-n\n', { include: r.include });
    expect(resolveHost(c, 'n', env)).toMatchObject({ user: 'still-n', port: 22 });
    expect(resolveHost(c, 'x', env).user).toBe('op');
  });

  it('a pattern that matches nothing is skipped silently, glob or plain path', () => {
    const r = memReader({});
    const c = parseSshConfig('Include config.d/* missing.conf\nHost a\n  Port 2022\n', { include: r.include });
    expect(r.asked).toHaveLength(2);
    expect(resolveHost(c, 'a', env).port).toBe(2022);
    expect(c.ignored).toEqual([]);
  });

  it('without a reader, Include is reported in ignored with its line', () => {
    const c = parseSshConfig('Host a\n  Include x\n', { file: '/cfg' });
    expect(c.ignored).toEqual([{ key: 'Include', file: '/cfg', line: 2, reason: expect.stringMatching(/not followed/) }]);
  });

  it('16 levels of nesting are fine (OpenSSH READCONF_MAX_DEPTH); the 17th is an error naming the files', () => {
    const chain = (n: number) => {
      const files: Record<string, Array<[string, string]>> = {};
      for (let i = 1; i <= n; i++) files[`/home/op/.ssh/f${i}`] = [[`/home/op/.ssh/f${i}`, i < n ? `Include f${i + 1}\n` : 'Port 2345\n']];
      return memReader(files);
    };
    expect(resolveHost(parseSshConfig('Include f1\n', { include: chain(16).include }), 'h', env).port).toBe(2345);
    const e = parseErrorOf(() => parseSshConfig('Include f1\n', { file: '/home/op/.ssh/config', include: chain(17).include }));
    expect(e.kind).toBe('ssh_config /home/op/.ssh/f16');
    expect(e.line).toBe(1);
    expect(e.reason).toMatch(
      /^Include nested more than 16 levels deep .* through \/home\/op\/\.ssh\/config, \/home\/op\/\.ssh\/f1, .*\/home\/op\/\.ssh\/f17: /,
    );
  });

  it('a file that includes itself stops at the limit with an error naming it', () => {
    const r = memReader({ '/home/op/.ssh/loop': [['/home/op/.ssh/loop', '\n\nInclude loop\n']] });
    const e = parseErrorOf(() => parseSshConfig('Include loop\n', { file: '/home/op/.ssh/config', include: r.include }));
    expect(e.message).toBe(
      "ssh_config /home/op/.ssh/loop: line 3: Include nested more than 16 levels deep (OpenSSH's limit) through /home/op/.ssh/config, /home/op/.ssh/loop: look for a file that includes itself",
    );
    expect(r.asked).toHaveLength(17);
  });

  it('errors in an included file name that file and line, also those found when resolving', () => {
    const r = memReader({
      '/home/op/.ssh/bad': [['/home/op/.ssh/bad', 'Host x\n  IdentityFile "unclosed\n']],
      '/home/op/.ssh/num': [['/home/op/.ssh/num', '# c\nPort abc\n']],
    });
    expect(() => parseSshConfig('Include bad\n', { include: r.include })).toThrow('ssh_config /home/op/.ssh/bad: line 2: unbalanced quote');
    const c = parseSshConfig('Include num\n', { include: r.include });
    expect(() => resolveHost(c, 'x', env)).toThrow('ssh_config /home/op/.ssh/num: line 2: port must be a whole number, got abc');
  });

  it('a reader failure becomes a ParseError at the Include line; ~user paths are refused', () => {
    const include = {
      homeDir: '/home/op',
      read: () => {
        throw new Error('cannot read /home/op/.ssh/secret: EACCES');
      },
    };
    expect(parseErrorOf(() => parseSshConfig('\nInclude secret\n', { file: '/c', include })).message).toBe(
      'ssh_config /c: line 2: Include secret: cannot read /home/op/.ssh/secret: EACCES',
    );
    expect(parseErrorOf(() => parseSshConfig('Include ~bob/x\n', { include: memReader({}).include })).reason).toMatch(/~user paths are not supported/);
  });
});

describe('Match', () => {
  const at = (text: string, alias: string, e: Partial<typeof env & { user: string }> = {}) => resolveHost(parseSshConfig(text), alias, { ...env, ...e });

  it('all applies everywhere; !all nowhere', () => {
    expect(at('Match all\n  Port 2001\n', 'x').port).toBe(2001);
    expect(at('Match !all\n  Port 2001\n', 'x').port).toBe(22);
  });

  it('host sees the HostName so far (with %h), originalhost the name typed', () => {
    const text =
      'Host spark-?\n  HostName %h.lab.example\nMatch host *.lab.example\n  User labuser\nMatch originalhost spark-a\n  Port 2201\nMatch host spark-a\n  Port 2999\n';
    expect(at(text, 'spark-a')).toMatchObject({ user: 'labuser', port: 2201 });
    expect(at(text, 'SPARK-B')).toMatchObject({ user: 'labuser', port: 22 }); // host names compare case-insensitively
    expect(at(text, 'other')).toMatchObject({ user: 'op', port: 22 });
    // a HostName obtained after the Match line is not seen by it
    expect(at('Match host real.lab\n  Port 2001\nHost n\n  HostName real.lab\n', 'n').port).toBe(22);
  });

  it('user is the User so far (or the user given with the node), localuser the local account; case-sensitive', () => {
    const text = 'Host a\n  User nvidia\nMatch user nvidia\n  Port 2001\nMatch localuser op\n  ConnectTimeout 5\n';
    expect(at(text, 'a')).toMatchObject({ port: 2001, connectTimeoutS: 5 });
    expect(at(text, 'b')).toMatchObject({ port: 22, connectTimeoutS: 5 }); // user so far is the local user "op"
    expect(at(text, 'a', { user: 'admin' })).toMatchObject({ user: 'admin', port: 22 }); // like ssh -l admin
    expect(at(text, 'b', { localUser: 'Op' })).toMatchObject({ user: 'Op', connectTimeoutS: null });
    expect(at('Match user NVIDIA\n  Port 2001\n', 'a', { localUser: 'nvidia' }).port).toBe(22);
  });

  it('negation of a criterion, ! patterns in a comma-separated list, criteria ANDed', () => {
    const text = 'Match originalhost spark-*,!spark-9 !user root\n  Port 2001\nMatch originalhost node-* user op localuser op\n  Port 2002\n';
    expect(at(text, 'spark-1').port).toBe(2001);
    expect(at(text, 'spark-9').port).toBe(22); // excluded by !spark-9
    expect(at(text, 'spark-1', { user: 'root' }).port).toBe(22); // !user root
    expect(at(text, 'node-1').port).toBe(2002);
    expect(at(text, 'node-1', { localUser: 'nvidia' }).port).toBe(22); // user and localuser are now nvidia
  });

  it('exec, canonical, final, tagged, localnetwork and unknown criteria: the block is not applied and is reported', () => {
    const text = [
      'Match exec "true"',
      '  Port 2001',
      'Match host * canonical',
      '  Port 2002',
      'Match final',
      '  Port 2003',
      'Match !tagged x',
      '  Port 2004',
      'Match localnetwork 10.0.0.0/8',
      '  Port 2005',
      'Match version OpenSSH_10*',
      '  Port 2006',
      'Match all',
      '  User after',
    ].join('\n');
    const c = parseSshConfig(text, { file: '/home/op/.ssh/config' });
    expect(resolveHost(c, 'x', env)).toMatchObject({ port: 22, user: 'after' });
    expect(c.ignored.map((i) => [i.key, i.file, i.line])).toEqual([1, 3, 5, 7, 9, 11].map((l) => ['Match', '/home/op/.ssh/config', l]));
    expect(c.ignored[0]!.reason).toBe('Match exec: not evaluated (it would run a command); the block is not applied');
    expect(c.ignored[5]!.reason).toMatch(/^Match version: not evaluated \(unknown criterion\)/);
  });

  it('a Match in an included file is evaluated there and reported with that file', () => {
    const r = memReader({ '/home/op/.ssh/m': [['/home/op/.ssh/m', 'Match exec "x"\n  Port 1\nMatch user op\n  Port 2002\n']] });
    const c = parseSshConfig('Include m\n', { include: r.include });
    expect(resolveHost(c, 'a', env).port).toBe(2002);
    expect(c.ignored).toEqual([{ key: 'Match', file: '/home/op/.ssh/m', line: 1, reason: expect.stringMatching(/^Match exec/) }]);
  });

  it('an enclosing Match is evaluated once, at its line, not again after what an Include set', () => {
    // At the Match line the user is still the local "op"; the included file then sets User. The lines after the
    // Include still belong to the block that matched.
    const r = memReader({ '/home/op/.ssh/u': [['/home/op/.ssh/u', 'User other\n']] });
    const c = parseSshConfig('Match user op\n  Include u\n  Port 2001\n', { include: r.include });
    expect(resolveHost(c, 'a', env)).toMatchObject({ user: 'other', port: 2001 });
  });

  it('malformed Match lines are ParseErrors with their line', () => {
    expect(() => parseSshConfig('Match host\n')).toThrow('ssh_config: line 1: Match host needs a pattern list');
    expect(() => parseSshConfig('\nMatch all host x\n')).toThrow(/line 2: Match all cannot be combined/);
    expect(() => parseSshConfig('Match host x all\n')).toThrow(/Match all cannot be combined/);
    expect(() => parseSshConfig('Match =\n')).toThrow('ssh_config: line 1: Match needs a value');
    expect(at('Match final all\n  Port 2001\n', 'x').port).toBe(22); // allowed by OpenSSH, not evaluated here
  });
});
