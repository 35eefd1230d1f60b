// OpenSSH's sshd allows MaxSessions (10 by default) channels per connection: a run's status polls, stops, output reads
// and the sampler's shell must never ask for more at once ("Channel open failure" left a load running).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CHANNELS } from '../../src/transport/ssh-runner.js';
import type { Sshd } from '../helpers/sshd.js';
import { sshdAvailable, sshdRunner, startSshd } from '../helpers/sshd.js';

describe.skipIf(!sshdAvailable)('SshRunner channels against OpenSSH sshd (MaxSessions 10)', { timeout: 60_000 }, () => {
  let sshd: Sshd;
  beforeAll(async () => {
    sshd = await startSshd(['MaxSessions 10']);
    writeFileSync(join(sshd.dir, 'known_hosts'), `${sshd.knownHostsLine}\n`);
  });
  afterAll(async () => {
    await sshd?.stop();
  });

  it('25 commands at once, with a shell held open, all run: opens beyond the limit wait for a channel to close', async () => {
    expect(MAX_CHANNELS).toBeLessThan(10);
    const r = sshdRunner(sshd, { homeDir: sshd.dir, knownHostsPath: join(sshd.dir, 'known_hosts') });
    try {
      const shell = await r.openShell();
      expect((await shell.run('echo held')).stdout).toBe('held\n');
      const results = await Promise.all(Array.from({ length: 25 }, (_, i) => r.run(`sleep 0.3; echo ${i}`)));
      expect(results.map((x) => x.exitCode)).toEqual(Array(25).fill(0));
      expect(results.map((x) => x.stdout)).toEqual(Array.from({ length: 25 }, (_, i) => `${i}\n`));
      expect((await shell.run('echo still')).stdout).toBe('still\n');
      await shell.close();
    } finally {
      await r.close();
    }
  });
});
