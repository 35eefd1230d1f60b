// The PHY's word on a signed certificate (#33 item 4): the link-flap scenario under the full default protocol (75
// simulated minutes, hence the system tier), its link dropping 4 min into the idle-GPU soak; the certificate quotes the
// reason the snapshot read while the link was down, and `verify` re-grades the journal to the same verdict.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keygen } from '../../src/report/sign.js';
import { runCli } from '../helpers/cli.js';

describe('a link-down FAIL on the certificate', { timeout: 120_000 }, () => {
  it('link-flap under the full protocol: the signed certificate quotes the reason, and verify re-grades it to the same', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cq-snap-cert-'));
    await keygen(join(root, 'lab'));
    const env = { CABLEQUAL_LAB_KEY: join(root, 'lab', 'lab-key.pem') };
    const r = await runCli(['run', '--sim', 'link-flap', '--seed', '7', '--json', '--out', join(root, 'reports')], { env });
    const res = JSON.parse(r.out) as { outcome: string; certificate: string };
    expect(res.outcome).toBe('FAIL');
    // The scenario's flap comes 4 min into the idle-GPU soak (329 s into the run with seed 7).
    expect(readFileSync(res.certificate, 'utf8')).toContain('the PHY said why: &quot;Cable issue&quot; (ethtool enp1s0f1np1 at 329 s, link down)');
    const v = await runCli(['verify', res.certificate.replace(/\.html$/, '.json')], { env });
    expect(v.code).toBe(0);
    expect(v.out).toMatch(/re-graded verdict \(FAIL, rules version \d+\) agree/);
  });
});
