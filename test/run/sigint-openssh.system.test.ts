// Ctrl-C of a controller whose loads run as real processes on a real OpenSSH sshd: every one of them is gone
// within 5 s. The controller (test/fixtures/sigint-controller.ts) is the real run code with the CLI's SIGINT
// handling on the simulated lab; each load it starts is mirrored by a real `sleep` started over SSH by the same
// RemoteProcess code a node gets (own process group, pid files, env marker CABLEQUAL_RUN=<runId>).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sshdAvailable, startSshd, type Sshd } from '../helpers/sshd.js';

// Pids of live processes carrying the run's marker, read from /proc (the sshd is on this machine).
function marked(runId: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(`CABLEQUAL_RUN=${runId}`)) {
        const state = readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]?.[0];
        if (state !== 'Z') out.push(Number(d));
      }
    } catch {
      // gone while we looked
    }
  }
  return out;
}

describe.skipIf(!sshdAvailable)('SIGINT with real remote processes', { timeout: 60_000 }, () => {
  let sshd: Sshd;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cq-sigint-'));
    // Sessions get an empty home: the machine user's shell rc (here a pyenv init, ~1 s a session) is not the subject.
    sshd = await startSshd([`SetEnv HOME=${dir}`]);
    writeFileSync(join(dir, 'known_hosts'), `${sshd.knownHostsLine}\n`);
  });
  afterAll(async () => {
    await sshd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every load process on the node is gone within 5 s of Ctrl-C, and the run ends ABORTED', async () => {
    const runId = `sigint-${process.pid}-${Date.now()}`;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join('test', 'fixtures', 'sigint-controller.ts'), String(sshd.port), sshd.user, sshd.clientKey, join(dir, 'known_hosts'), dir, runId],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 40_000;
      while (!out.includes(`ready ${runId}`)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`controller never started the loaded soak:\n${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 5));
      }
      const before = marked(runId);
      expect(before.length).toBeGreaterThanOrEqual(1); // real loads were running on the node
      const t0 = Date.now();
      child.kill('SIGINT');
      let left = before;
      while (left.length > 0 && Date.now() - t0 < 10_000) {
        await new Promise((r) => setTimeout(r, 20));
        left = marked(runId);
      }
      const goneAfterMs = Date.now() - t0;
      expect(left).toEqual([]);
      expect(goneAfterMs).toBeLessThan(5000);
      expect(await exited).toBe(0);
      expect(err).toContain('SIGINT: stopping the loads on every node');
      expect(out).toContain('outcome ABORTED');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      for (const pid of marked(runId)) process.kill(pid, 'SIGKILL');
      rmSync(`/tmp/cablequal/${runId}`, { recursive: true, force: true });
    }
  });
});
