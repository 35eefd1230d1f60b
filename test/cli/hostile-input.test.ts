// Bad input of every kind the CLI takes (options, paths, files, numbers, journals): one line on stderr and exit 2
// (3 when the machine failed, e.g. a full disk), never a stack trace, an internal error (exit 70) or a hang.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { unpackV1 } from '../helpers/journals-v1.js';

const dir = mkdtempSync(join(tmpdir(), 'cq-hostile-'));
writeFileSync(join(dir, 'afile'), 'not a directory\n');
writeFileSync(join(dir, 'nested.json'), `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
writeFileSync(
  join(dir, 'nested-obj.json'),
  `{"name":"x","description":"d","phases":[{"name":"p","kind":"preflight","x":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}]}`,
);
mkdirSync(join(dir, 'protocol-dir.json'));
writeFileSync(join(dir, 'box.csv'), 'label\nc1\nc2\n');
writeFileSync(join(dir, 'bad_ssh_config'), 'Host spark-a\n  Port notanumber\n');
mkdirSync(join(dir, 'jdir', 'journal.jsonl'), { recursive: true });
unpackV1('good-qsfp56-quick', join(dir, 'good'));
// A journal whose run-start line cannot be read: nothing to grade.
mkdirSync(join(dir, 'nostart'));
writeFileSync(join(dir, 'nostart', 'journal.jsonl'), '{"type":"run-start","runId":null}\n{"type":"sample","tS":1,"phase":"x","sample":{}}\n');
writeFileSync(join(dir, 'esc.txt'), 'rocep1s0f1 port 1 => \u001b]0;pwned\u0007\u001b[2J\u0000 (Up)\n');
const longHost = 'h'.repeat(5000);

type Case = [argv: string[], code: number, firstLine: RegExp];

const CASES: Case[] = [
  // repeated options: refused, naming the option
  [['run', '--sim', 'good-qsfp56', '--out', 'a', '--out', 'b'], 2, /^cablequal: --out given 2 times \("a", "b"\): give it once$/],
  [['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--protocol', 'spark-burnin'], 2, /^cablequal: --protocol given 2 times/],
  [['run', '--sim', 'good-qsfp56', '--seed', '1', '--seed', '2'], 2, /^cablequal: --seed given 2 times/],
  [['grade', 'good', '--protocol', 'a.json', '--protocol', 'b.json'], 2, /^cablequal: --protocol given 2 times/],
  [['compare', 'good', '--out', 'x.csv', '--out', 'y.csv'], 2, /^cablequal: --out given 2 times/],
  [['status', '--out', 'a', '--out', 'b'], 2, /^cablequal: --out given 2 times/],
  [['batch', '--manifest', 'box.csv', '--manifest', 'box.csv', '--sim', 'good-qsfp56,good-qsfp56'], 2, /^cablequal: --manifest given 2 times/],
  // numbers
  [['run', '--sim', 'good-qsfp56', '--seed', 'abc'], 2, /^cablequal: --seed: expected a whole number from 0 to 4294967295, got "abc"$/],
  [['run', '--sim', 'good-qsfp56', '--seed', '1.5'], 2, /^cablequal: --seed: expected a whole number/],
  [['run', '--sim', 'good-qsfp56', '--seed', '-1'], 2, /^cablequal: --seed: expected a whole number/],
  [['batch', '--manifest', 'box.csv', '--sim', 'good-qsfp56,good-qsfp56', '--seed', 'x'], 2, /^cablequal: --seed: expected a whole number/],
  [['sim', 'serve', '--scenario', 'good-qsfp56', '--speed', '0'], 2, /^cablequal: --speed: expected a speed-up factor from 0\.1 to 1000, got "0"$/],
  [['sim', 'serve', '--scenario', 'good-qsfp56', '--speed', '-3'], 2, /^cablequal: --speed: expected a speed-up factor from 0\.1 to 1000/],
  [['sim', 'serve', '--scenario', 'good-qsfp56', '--speed', 'fast'], 2, /^cablequal: --speed: expected a speed-up factor from 0\.1 to 1000/],
  [['sim', 'serve', '--scenario', 'good-qsfp56', '--listen', '99999'], 2, /^cablequal: --listen: expected a whole number from 0 to 65534, got "99999"$/],
  [['sim', 'serve', '--scenario', 'good-qsfp56', '--listen', '-1'], 2, /^cablequal: --listen: expected a whole number/],
  [['sim', 'serve', '--scenario', 'good-qsfp56', '--port', '99999'], 2, /^cablequal: --port: expected a whole number from 0 to 65534, got "99999"$/],
  [['sim', 'serve', '--scenario', 'good-qsfp56', '--speed', '1e-300'], 2, /^cablequal: --speed: expected a speed-up factor from 0\.1 to 1000, got "1e-300"$/],
  [['sim', 'serve', '--scenario', 'good-qsfp56', '--seed', 'x'], 2, /^cablequal: --seed: expected a whole number/],
  [['run', '--nodes', 'a,b', '--speed', '0'], 2, /^cablequal: --speed: expected a speed-up factor from 0\.1 to 1000, got "0"$/],
  // choices and unknown options
  [['run', '--sim', 'good-qsfp56', '--on-hangup', 'maybe'], 2, /^cablequal: --on-hangup "maybe": expected one of continue, abort$/],
  [['run', '--sim', 'good-qsfp56', '--bogus'], 2, /^cablequal: run: unknown option "--bogus"$/],
  [['run', '--nodes', 'a,b', '--seed', '3'], 2, /^cablequal: run: --sim-fault and --seed apply to the simulated lab only \(--sim\)$/],
  // output paths
  [['run', '--sim', 'good-qsfp56', '--out', 'afile'], 2, /^cablequal: --out: .*\/afile is a file, not a directory$/],
  [['run', '--sim', 'good-qsfp56', '--out', 'afile/sub'], 2, /^cablequal: --out: .*\/afile is a file, not a directory$/],
  [['batch', '--manifest', 'box.csv', '--sim', 'good-qsfp56,good-qsfp56', '--out', 'afile'], 2, /^cablequal: --out: .*\/afile is a file, not a directory$/],
  [['compare', 'good', '--out', 'afile/compare.csv'], 2, /^cablequal: --out: .*\/afile is a file, not a directory$/],
  [['compare', 'good', '--out', 'jdir'], 2, /^cablequal: --out jdir: is a directory; give the CSV file to write, e\.g\. jdir\/compare\.csv$/],
  [['run', '--sim', 'good-qsfp56', '--port', ''], 2, /^cablequal: --port: cage must be 0, 1 or auto, got ""$/],
  [['run', '--sim', 'good-qsfp56', '--label', ' '], 2, /^cablequal: --label: empty; give the cable a label or leave --label out/],
  [['regress', '--baseline', 'good', 'good', '--junit', 'afile/r.xml'], 2, /^cablequal: --junit: .*\/afile is a file, not a directory$/],
  [['keygen', 'afile/keys'], 2, /^cablequal: key directory: .*\/afile is a file, not a directory$/],
  [['sim', 'serve', '--scenario', 'good-qsfp56', '--dir', 'afile'], 2, /^cablequal: --dir: .*\/afile is a file, not a directory$/],
  // input files
  [
    ['verify', '--public-key', '/nonexistent.pem', 'good/certificate.json'],
    2,
    /^cablequal: --public-key \/nonexistent\.pem: cannot read the lab's public key \(ENOENT\)$/,
  ],
  [['run', '--sim', 'good-qsfp56', '--protocol', 'nested.json'], 2, /^cablequal: nested\.json: nested deeper than 32 levels: not a protocol$/],
  [['run', '--sim', 'good-qsfp56', '--protocol', 'nested-obj.json'], 2, /^cablequal: nested-obj\.json: nested deeper than 32 levels/],
  [['run', '--sim', 'good-qsfp56', '--protocol', 'protocol-dir.json'], 2, /^cablequal: .*protocol-dir\.json: a directory, not a regular file$/],
  [['grade', 'good', '--protocol', 'nested.json'], 2, /nested deeper than 32 levels/],
  [['grade', 'jdir'], 2, /^cablequal: .*\/jdir\/journal\.jsonl: not a file \(a journal is a file of JSON lines\)$/],
  [['grade', 'afile'], 2, /^cablequal: .*\/afile: not a directory; give a run directory/],
  [['grade', 'no-such-run'], 2, /^cablequal: .*\/no-such-run: no such run directory$/],
  [['grade', 'nostart'], 2, /^cablequal: .*nostart\/journal\.jsonl: no readable run-start line \(line 1: run-start: runId: expected a string, got null\)/],
  [['report', 'jdir'], 2, /^cablequal: .*journal\.jsonl: not a file/],
  [['verify', 'no-such/certificate.json'], 2, /^cablequal: no-such\/certificate\.json: no such certificate file$/],
  [['verify', 'good'], 2, /^cablequal: good: not a file; give a certificate\.json$/],
  [['compare', 'no-such-dir'], 2, /^cablequal: no-such-dir: no such file or directory$/],
  [['regress', '--baseline', 'no-such', 'good'], 2, /^cablequal: --baseline: .*no record\.json/],
  [['status', '--out', 'no-such'], 2, /^cablequal: --out no-such: no such reports directory$/],
  [['parse', 'ethtool-stats', '/nonexistent'], 2, /^cablequal parse: \/nonexistent: cannot read command output file \(ENOENT\)$/],
  [['parse', 'ethtool-stats', '/dev/zero'], 2, /^cablequal parse: \/dev\/zero: a device, not a regular file$/],
  // nodes, cages, faults
  [['run', '--nodes', `${longHost},b`], 2, /^cablequal: --nodes: "h{80}… \(5000 chars\)" is too long for a host name \(at most 253 characters\)$/],
  [['cleanup', '--nodes', 'a;rm -rf /'], 2, /^cablequal: /],
  [
    ['run', '--sim', 'good-qsfp56', '--sim-fault', 'ssh-drop@10s:spark-z'],
    2,
    /^cablequal: fault "ssh-drop@10s:spark-z": no simulated node "spark-z" \(nodes: spark-a, spark-b\)$/,
  ],
  [
    ['batch', '--manifest', 'box.csv', '--pair', 'a:1,b:1', '--pair', 'a:1,c:1'],
    2,
    /^cablequal: --pair: cage 1 of a is given to pairs 1 and 2: a cage holds one cable$/,
  ],
  [
    ['batch', '--manifest', 'box.csv', '--pair', 'a,b', '--pair', 'c,a'],
    2,
    /^cablequal: --pair: a is in pairs 1 and 2: give its cage in each \(e\.g\. a:0 and a:1\)$/,
  ],
  // batch reads the --ssh-config it is given, as run does
  [
    ['batch', '--manifest', 'box.csv', '--nodes', 'spark-a,spark-b', '--ssh-config', 'bad_ssh_config', '--out', 'b-ssh'],
    2,
    /^cablequal: ssh_config .*\/bad_ssh_config: line 2: port must be a whole number, got notanumber \(ssh config for node spark-a; /,
  ],
  [['preflight'], 2, /^cablequal: preflight: give either --sim <scenario> or --nodes a,b$/],
  [['run'], 2, /^cablequal: run: give either --sim <scenario> or --nodes a,b$/],
];

// No raw control byte reaches the terminal: ESC, BEL, NUL and the rest show as escapes.
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

// Test names show each argument clipped (the 5,000-character host name too).
const named = CASES.map(([argv, code, re]) => [argv.map((a) => (a.length > 40 ? `${a.slice(0, 20)}…(${a.length})` : a)).join(' '), argv, code, re] as const);

describe('hostile CLI input: one line, exit code, no stack trace', { timeout: 60_000 }, () => {
  it.each(named)('%s', async (_name, argv, code, firstLine) => {
    const r = await runCli(argv, { cwd: dir });
    expect(r.code, r.err).toBe(code);
    const lines = r.err.trimEnd().split('\n');
    expect(lines[0]).toMatch(firstLine);
    // yargs' own usage errors add the hint of the command's --help; the rest are exactly one line.
    expect(lines.filter((l) => !/^Run "cablequal( [a-z]+)* --help" for usage\.$/.test(l))).toHaveLength(1);
    expect(lines[0]!.length).toBeLessThan(1100);
    expect(r.err).not.toMatch(/\n\s+at |internal error/);
    expect(r.err).not.toMatch(RAW_CONTROL);
  });

  it('a parse error on a line holding ESC, BEL and NUL prints them as escapes', async () => {
    const r = await runCli(['parse', 'ibdev2netdev', 'esc.txt'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.err).not.toMatch(RAW_CONTROL);
    expect(r.err).toBe(
      'esc.txt: ibdev2netdev: line 1: not an ibdev2netdev line ("<dev> port <n> ==> <netdev> (Up|Down|NA)"): "rocep1s0f1 port 1 => \\x1b]0;pwned\\x07\\x1b[2J\\x00 (Up)"\n',
    );
  });
});
