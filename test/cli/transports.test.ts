// The CLI's transports: what of the operator's ssh config cablequal did not apply is said once, with file and line.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeRunners } from '../../src/cli/transports.js';

let dir: string | null = null;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

describe('makeRunners', () => {
  it('warns once per run about ssh config blocks it does not apply (Match exec), naming file and line', async () => {
    dir = mkdtempSync(join(tmpdir(), 'cq-transports-'));
    const config = join(dir, 'config');
    // GENERATED test config.
    writeFileSync(config, 'Host spark-*\n  User nvidia\n\nMatch exec "test -f /etc/lab-vpn"\n  Port 2222\n');
    const warnings: string[] = [];
    const runners = await makeRunners(
      [
        { name: 'spark-a', host: 'spark-a', cage: 'auto' },
        { name: 'spark-b', host: 'spark-b', cage: 'auto' },
      ],
      { acceptNewHostKeys: false, env: {}, sshConfig: config, warn: (l) => warnings.push(l) },
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      new RegExp(`^cablequal: ssh config not applied: ${config.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4: Match: .*exec.*the block is not applied$`),
    );
    for (const r of runners.values()) await r.close();
  });

  it('says nothing when everything in the config is applied', async () => {
    dir = mkdtempSync(join(tmpdir(), 'cq-transports-'));
    const config = join(dir, 'config');
    writeFileSync(config, 'Host spark-*\n  User nvidia\n  Port 2200\n');
    const warnings: string[] = [];
    const runners = await makeRunners([{ name: 'spark-a', host: 'spark-a', cage: 'auto' }], {
      acceptNewHostKeys: false,
      env: {},
      sshConfig: config,
      warn: (l) => warnings.push(l),
    });
    expect(warnings).toEqual([]);
    for (const r of runners.values()) await r.close();
  });
});
