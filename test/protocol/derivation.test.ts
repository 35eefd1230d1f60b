// A protocol that is not a built-in is named on the certificate with every setting it changes from the built-in it
// derives from (#32 item 1b): a lab's copy of quick renamed with its lane-ratio floors raised and its loaded soak cut
// reads as such on the signed document, not as "lab-quick" alone.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { protocolDerivation } from '../../src/protocol/derivation.js';
import { runCli } from '../helpers/cli.js';

const quick = readFileSync('protocols/quick.json', 'utf8');

function edited(): string {
  const p = JSON.parse(quick) as { name: string; limits: Record<string, unknown>[]; phases: Record<string, unknown>[] };
  p.name = 'lab-quick';
  const lr = p.limits.find((l) => l['rule'] === 'lane-ratio')!;
  lr['marginalFloorBer'] = 0.5;
  p.phases.find((x) => x['name'] === 'soak-loaded')!['durationS'] = 120;
  return JSON.stringify(p, null, 2);
}

describe('protocolDerivation', () => {
  it('a built-in text: null; the edited copy: derived from quick, each change named with both values', () => {
    expect(protocolDerivation(quick)).toBeNull();
    expect(protocolDerivation(readFileSync('protocols/spark-burnin.json', 'utf8'))).toBeNull();
    const d = protocolDerivation(edited())!;
    expect(d.from).toBe('quick');
    expect(d.fromSha256).toMatch(/^[0-9a-f]{64}$/);
    // quick.json's lane-ratio marginal floor is 1e-9 (protocols/quick.json).
    expect(d.changes).toEqual(['limits.lane-ratio.marginalFloorBer: 1e-9 -> 0.5', 'phases.soak-loaded.durationS: 180 -> 120']);
  });

  it('on the signed set-up check of a run with it: protocolDerived in the body, and in the HTML', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cq-derived-'));
    writeFileSync(join(root, 'lab-quick.json'), edited());
    const r = await runCli([
      'run',
      '--sim',
      'good-qsfp56',
      '--protocol',
      join(root, 'lab-quick.json'),
      '--out',
      join(root, 'reports'),
      '--db',
      'off',
      '--json',
    ]);
    const runDir = (JSON.parse(r.out) as { runDir: string }).runDir;
    const body = (
      JSON.parse(readFileSync(join(runDir, 'setup-check.json'), 'utf8')) as {
        body: { protocol: { name: string }; protocolDerived: { from: string; changes: string[] } };
      }
    ).body;
    expect(body.protocol.name).toBe('lab-quick');
    expect(body.protocolDerived.from).toBe('quick');
    expect(body.protocolDerived.changes).toHaveLength(2);
    expect(readFileSync(join(runDir, 'setup-check.html'), 'utf8')).toMatch(
      /not a built-in protocol<\/b>: derived from quick .*phases\.soak-loaded\.durationS: 180 -&gt; 120/,
    );
  }, 60_000);
});
