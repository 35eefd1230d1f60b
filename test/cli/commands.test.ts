// preflight speaks for itself (no "PASS: ? serial ?"), grade takes several run directories (SIGTERM exits 143: signals.system.test.ts).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { runCli } from '../helpers/cli.js';
import { unpackV1 } from '../helpers/journals-v1.js';

describe('cablequal preflight has its own output and messages', () => {
  it('says the nodes are ready and what it saw on each, no cable line', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-pre-'));
    const r = await runCli(['preflight', '--sim', 'good-qsfp56'], { cwd });
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toBe('preflight OK: both nodes are ready (simulated lab)');
    expect(lines[1]).toMatch(/^ {2}spark-a: cage 1 \(enp1s0f1np1, enP2p1s0f1np1\), 200000 Mb\/s, 4 lanes, FEC RS, kernel \S+/);
    expect(lines[2]).toMatch(/^ {2}spark-b: cage 1 /);
    // What NCCL will run on, proven by preflight in a non-interactive session.
    for (const l of lines.slice(1, 3)) expect(l).toMatch(/, GPU driver 580\.95\.05 \(CUDA 13\.0\), Open MPI 4\.1\.6$/);
    expect(lines[3]).toMatch(/^ {2}run directory: .*\/preflight\//);
    expect(r.out).not.toMatch(/serial|\?/);
  });

  it('a node not ready: the reasons and what to do', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-pre-'));
    const r = await runCli(['preflight', '--sim', 'good-qsfp56', '--port', '0'], { cwd });
    expect(r.code).toBe(3);
    expect(r.out.split('\n')[0]).toBe('preflight ERROR: the nodes are not ready (simulated lab)');
    expect(r.out).toMatch(/\n {2}- \[preflight-rails\] /);
  });
  it('a node whose sudo asks for a password: ERROR [preflight-sudo] naming the command and the sudoers line to add', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-pre-'));
    const spec = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8')) as { name: string; nodes: Record<string, unknown>[] };
    spec.name = 'no-sudo';
    spec.nodes[0]!['sudoRefuses'] = true;
    writeFileSync(join(cwd, 'no-sudo.json'), JSON.stringify(spec));
    const r = await runCli(['preflight', '--sim', join(cwd, 'no-sudo.json')], { cwd });
    expect(r.code).toBe(3);
    expect(r.out).toContain('\n  - [preflight-sudo] spark-a: sudo -n ethtool -m refused: sudo: a password is required\n');
    expect(r.out).toContain('    what to do: add this line with visudo on the node: nvidia ALL=(root) NOPASSWD: /usr/sbin/ethtool -m *\n');
    expect(r.out).not.toContain('[preflight-sudo] spark-b');
  });
});

describe('cablequal grade with several run directories', () => {
  it('grades each (grade a b used to ignore b); the exit code is the most severe', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-grade2-'));
    unpackV1('good-qsfp56-quick', join(cwd, 'a'));
    unpackV1('crc-errors-quick', join(cwd, 'b'));
    const r = await runCli(['grade', 'a', 'b', '--json'], { cwd });
    expect(r.code).toBe(1);
    expect(
      r.out
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { outcome: string }).outcome),
    ).toEqual(['PASS', 'FAIL']);
    const text = await runCli(['grade', 'b', 'a'], { cwd });
    expect(text.out).toMatch(/^FAIL: .*\n(?: {2}- .*\n)+(?: {2}note: .*\n)*PASS: /);
  });

  it('malformed lines (null nodes, {} samples) are left out and reported; a record is still built', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-grade-bad-'));
    const dir = unpackV1('good-qsfp56-quick', join(cwd, 'run'));
    const lines = readFileSync(join(dir, 'journal.jsonl'), 'utf8').trimEnd().split('\n');
    const start = JSON.parse(lines[0]!) as { nodes: unknown[] };
    start.nodes = [null, ...start.nodes];
    lines[0] = JSON.stringify(start);
    const samples = lines
      .map((l, i) => [l, i] as const)
      .filter(([l]) => l.includes('"type":"sample"'))
      .slice(0, 3)
      .map(([, i]) => i);
    lines[samples[0]!] = '{"type":"sample","tS":1,"phase":"identity","node":null,"sample":{}}';
    lines[samples[1]!] = '{}';
    lines[samples[2]!] = '{"type":"sample","tS":2,"phase":"identity","node":"spark-a","sample":{"node":null,"tick":0,"tMs":1,"rails":[null]}}';
    writeFileSync(join(dir, 'journal.jsonl'), `${lines.join('\n')}\n`);
    // Without the fixture's lab key, report refuses to replace its signed certificate (#17 item 3): moved aside.
    rmSync(join(dir, 'certificate.json'));
    for (const cmd of [
      ['grade', 'run'],
      ['report', 'run'],
      ['verify', 'run/setup-check.json'],
    ]) {
      const r = await runCli(cmd, { cwd });
      expect([0, 1], `${cmd.join(' ')}: ${r.err}`).toContain(r.code);
      expect(r.err).toContain(
        `warning: ${join(dir, 'journal.jsonl')}: 4 line(s) unreadable, left out of the record: line 1: run-start: nodes[0]: expected an object, got null (left out of the line); line ${samples[0]! + 1}: sample: sample.node: expected a string, got nothing (missing); line ${samples[1]! + 1}: not a journal line (no "type"); line ${samples[2]! + 1}: sample: sample.node: expected a string, got null`,
      );
    }
    const record = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as {
      journal: { badLines: number; problems: { line: number }[] };
      nodes: unknown[];
    };
    expect(record.journal.badLines).toBe(4);
    expect(record.journal.problems.map((p) => p.line)).toEqual([1, ...samples.map((i) => i + 1)]);
    expect(record.nodes).toHaveLength(2);
  });
});
