// The sampling shell's persistent *_phy filter (cmd.ethtoolStatsPhy) in real shells: the same lines as the grep
// pipeline it replaces, one process per call instead of two, a clean fallback without perl, and a fresh set-up in
// the next shell when the filter dies. `ethtool` is a GENERATED stand-in printing a full mlx5 dump rendered by the
// simulated lab (not recorded output); grep and perl are the machine's own, wrapped to count their runs.
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { cmd } from '../../src/transport/commands.js';
import { LocalRunner } from '../../src/transport/local-runner.js';

const A = 'enp1s0f1np1';
const B = 'enP2p1s0f1np1';

let dir: string;
const runners: LocalRunner[] = [];

// Full `ethtool -S` dumps of both rails as the simulated lab renders them (about 1,700 lines each).
async function simulatedDumps(): Promise<Record<string, string>> {
  const lab = createLab({ scenario: 'good-qsfp56', clock: new VirtualClock(1_767_225_600_000) });
  const r = lab.runner('spark-a');
  const out: Record<string, string> = {};
  for (const rail of [A, B]) out[rail] = (await r.run(cmd.ethtoolStats(rail))).stdout;
  await r.close();
  return out;
}

async function script(name: string, text: string): Promise<void> {
  await writeFile(join(dir, 'bin', name), text);
  await chmod(join(dir, 'bin', name), 0o755);
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cq-phy-filter-'));
  execFileSync('mkdir', ['-p', join(dir, 'bin'), join(dir, 'noperl')]);
  for (const [rail, text] of Object.entries(await simulatedDumps())) await writeFile(join(dir, `stats-${rail}.txt`), text);
  // GENERATED stand-in: a known netdev prints its dump; any other fails the way ethtool does.
  await script(
    'ethtool',
    `#!/bin/sh\n# GENERATED test stand-in for ethtool (simulated-lab output, not recorded)\necho x >> '${dir}/ethtool.log'\n` +
      `[ -f '${dir}'/stats-"$2".txt ] || { echo "Cannot get stats strings information: No such device" >&2; exit 71; }\nexec cat '${dir}'/stats-"$2".txt\n`,
  );
  const realGrep = execFileSync('sh', ['-c', 'command -v grep']).toString().trim();
  await script('grep', `#!/bin/sh\necho x >> '${dir}/grep.log'\nexec ${realGrep} "$@"\n`);
  // A perl that cannot start (exits at once): the set-up must fall back, not hang.
  await writeFile(join(dir, 'noperl', 'perl'), '#!/bin/sh\nexit 1\n');
  await chmod(join(dir, 'noperl', 'perl'), 0o755);
});

afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.close()));
  await rm(dir, { recursive: true, force: true });
});

function runner(pathFirst: string[] = []): LocalRunner {
  const r = new LocalRunner({ node: 'n1', env: { PATH: [...pathFirst, join(dir, 'bin'), process.env['PATH']!].join(':') } });
  runners.push(r);
  return r;
}

const count = async (log: string) => (await readFile(join(dir, log), 'utf8').catch(() => '')).split('\n').filter(Boolean).length;

describe('the persistent *_phy filter (cmd.ethtoolStatsPhy)', () => {
  it('prints exactly what `ethtool -S | grep` prints, call after call, with ethtool its only process per call', async () => {
    const shell = await runner().openShell();
    const expected: Record<string, string> = {};
    for (const rail of [A, B]) expected[rail] = (await shell.run(cmd.ethtoolStatsPhyGrep(rail))).stdout;
    expect(expected[A]!.split('\n')[0]).toBe('NIC statistics:');
    expect(expected[A]!.split('\n').filter((l) => l.includes('_phy: ')).length).toBeGreaterThan(30);
    const grepsBefore = await count('grep.log');
    for (let i = 0; i < 3; i++) {
      for (const rail of [A, B]) {
        const r = await shell.run(cmd.ethtoolStatsPhy(rail));
        expect(r).toMatchObject({ stdout: expected[rail], stderr: '', exitCode: 0 });
      }
      // Other commands in between write straight to the same stdout: nothing of theirs is filtered or reordered.
      expect((await shell.run('echo between; echo err >&2')).stdout).toBe('between\n');
    }
    expect(await count('grep.log')).toBe(grepsBefore); // no grep ran: the filter did the work
    expect(await count('ethtool.log')).toBe(2 + 6);
    // ethtool's own status and message come through (its stderr is not filtered).
    const bad = await shell.run(cmd.ethtoolStatsPhy('eth9'));
    expect(bad).toMatchObject({ stdout: '', exitCode: 71 });
    expect(bad.stderr).toContain('Cannot get stats strings information: No such device');
    expect((await shell.run(cmd.ethtoolStatsPhy(A))).stdout).toBe(expected[A]);
    await shell.close();
  });

  it('falls back to the grep pipeline, same output, when perl cannot start', async () => {
    const shell = await runner([join(dir, 'noperl')]).openShell();
    const expected = (await shell.run(cmd.ethtoolStatsPhyGrep(A))).stdout;
    const before = await count('grep.log');
    for (let i = 0; i < 2; i++) expect(await shell.run(cmd.ethtoolStatsPhy(A))).toMatchObject({ stdout: expected, exitCode: 0 });
    expect(await count('grep.log')).toBe(before + 2);
    await shell.close();
  });

  it('a dead filter takes its shell with it; the next shell sets up a new one', async () => {
    const r = runner();
    const shell = await r.openShell();
    const expected = (await shell.run(cmd.ethtoolStatsPhyGrep(A))).stdout;
    expect((await shell.run(cmd.ethtoolStatsPhy(A))).stdout).toBe(expected);
    // The filter is the shell's only perl child.
    const pid = (await shell.run('echo $$')).stdout.trim();
    const filter = execFileSync('sh', ['-c', `pgrep -P ${pid} perl || true`])
      .toString()
      .trim();
    expect(filter).toMatch(/^\d+$/);
    process.kill(Number(filter), 'SIGKILL');
    await expect(shell.run(cmd.ethtoolStatsPhy(A))).rejects.toThrow(/shell session closed/);
    // As the sampler does after a lost shell: a new one, whose first call starts its own filter.
    const next = await r.openShell();
    expect((await next.run(cmd.ethtoolStatsPhy(A))).stdout).toBe(expected);
    const pid2 = (await next.run('echo $$')).stdout.trim();
    expect(
      execFileSync('sh', ['-c', `pgrep -P ${pid2} perl || true`])
        .toString()
        .trim(),
    ).toMatch(/^\d+$/);
    await next.close();
  });

  it('works the same in bash, the login shell of DGX OS', () => {
    const parts = [cmd.ethtoolStatsPhy(A), cmd.ethtoolStatsPhy(B), cmd.ethtoolStatsPhy(A), cmd.ethtoolStatsPhyGrep(A), cmd.ethtoolStatsPhyGrep(B)];
    const out = execFileSync('bash', ['-c', parts.join('; echo @@; ')], { env: { PATH: `${join(dir, 'bin')}:${process.env['PATH']}`, HOME: dir } }).toString();
    const [a1, b1, a2, grepA, grepB] = out.split('@@\n');
    expect(grepA!.split('\n')[0]).toBe('NIC statistics:');
    expect(a1).toBe(grepA);
    expect(a2).toBe(grepA);
    expect(b1).toBe(grepB);
  });
});
