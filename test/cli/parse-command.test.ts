import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('cablequal parse', () => {
  it('refuses an unknown kind with exit 2 and names the kinds', async () => {
    const r = await runCli(['parse', 'no-such-kind', '-']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/ethtool-stats/);
  });

  it('reports a missing file in one line with exit 2', async () => {
    const r = await runCli(['parse', 'ethtool-stats', 'does/not/exist.txt']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('ENOENT');
    expect(r.err.trim().split('\n')).toHaveLength(1);
  });

  it('refuses a missing command with exit 2', async () => {
    const r = await runCli([]);
    expect(r.code).toBe(2);
  });
});
