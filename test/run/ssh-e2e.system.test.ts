import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serveSimLab, type SimServe } from '../../src/sim/serve.js';
import { runCli } from '../helpers/cli.js';
import { servedNodeArgs } from '../helpers/served-nodes.js';

// The whole run path as on a real lab: SSH (ssh2 client, host keys from known_hosts, key auth via the ssh config that
// `sim serve` writes), node locks, remote process wrappers, the persistent sampler; in real time sped up 4 times on both
// sides (`sim serve --speed 4`, `run --speed 4`): ~45 simulated seconds in ~12.
describe('run --nodes over SSH against `cablequal sim serve`', () => {
  let served: SimServe | null = null;
  afterAll(async () => {
    await served?.close();
  });

  it('a shortened quick protocol ends PASS with every load process stopped and the lock released', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-ssh-e2e-'));
    served = await serveSimLab({ scenario: 'good-qsfp56', dir: join(dir, 'keys'), speed: 4 });
    const out = join(dir, 'reports');
    const r = await runCli([
      'run',
      ...servedNodeArgs(served),
      '--protocol',
      join(import.meta.dirname, '..', 'fixtures', 'protocols', 'ssh-smoke.json'),
      '--speed',
      '4',
      '--out',
      out,
      '--json',
    ]);
    const result = JSON.parse(r.out) as { outcome: string; simulated: boolean; runDir: string; reasons: { rule: string }[]; sampling: { ticks: number } };
    expect(result.outcome, r.err + JSON.stringify(result.reasons)).toBe('PASS');
    expect(r.code).toBe(0);
    // Reached over SSH, the nodes still say what they are (DMI sys_vendor): a run against them is never a real cable's.
    expect(result.simulated).toBe(true);
    expect(result.sampling.ticks).toBeGreaterThan(30);
    for (const n of served.nodes) expect(served.lab.processes(n.name)).toEqual([]);
    const journal = readFileSync(join(result.runDir, 'journal.jsonl'), 'utf8');
    expect(journal).toContain('"type":"process-start"');
    // A second run can take the nodes: the first released its locks.
    const again = await runCli(['preflight', ...servedNodeArgs(served), '--out', out, '--json']);
    expect(JSON.parse(again.out).outcome, again.out + again.err).toBe('PASS');
    expect(again.code).toBe(0);
  });
});
