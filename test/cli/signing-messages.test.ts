// Say the important things where the person is (#34 item 6): a document written without a lab key says UNSIGNED in
// the terminal with the commands that fix it; keygen says where the key went and how runs find it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { unpackV1 } from '../helpers/journals-v1.js';

const dir = mkdtempSync(join(tmpdir(), 'cq-signing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// The default lab key (~/.config/cablequal/lab-key.pem) of a home with none: report/sign.ts reads the home directory
// when the command first loads it, after this line (this file's modules are its own: vitest isolates each file).
process.env['HOME'] = join(dir, 'home');
const DEFAULT_KEY = join(dir, 'home', '.config', 'cablequal', 'lab-key.pem');

describe('UNSIGNED, where the person is', () => {
  it('a document written without a lab key: one line naming the key looked for, keygen and the report that signs it', async () => {
    const run = unpackV1('good-qsfp56-quick', join(dir, 'run'));
    rmSync(join(run, 'certificate.json')); // a quick run: written again as a set-up check
    const key = DEFAULT_KEY;
    const r = await runCli(['report', run], { cwd: dir, env: {} });
    expect(r.code).toBe(0);
    const said = r.err.split('\n').filter((l) => l.includes('UNSIGNED'));
    expect(said).toEqual([
      `cablequal: UNSIGNED: setup-check.json is not signed: no lab key at ${key}; \`cablequal keygen\` creates it, then \`cablequal report ${run}\` signs this run`,
    ]);
  });

  it('with the lab key there, nothing of the kind', async () => {
    const env = { CABLEQUAL_LAB_KEY: join(dir, 'keys', 'lab-key.pem') };
    expect((await runCli(['keygen'], { cwd: dir, env })).code).toBe(0);
    const run = unpackV1('good-qsfp56-quick', join(dir, 'signed'));
    rmSync(join(run, 'certificate.json')); // a quick run: written again as a set-up check
    const r = await runCli(['report', run], { cwd: dir, env });
    expect(r.code).toBe(0);
    expect(r.err).not.toContain('UNSIGNED');
  });
});

describe('keygen says where the key went and how runs find it', () => {
  it('CABLEQUAL_LAB_KEY set: the key goes there and runs sign with it', async () => {
    const key = join(dir, 'env-keys', 'lab-key.pem');
    const r = await runCli(['keygen'], { cwd: dir, env: { CABLEQUAL_LAB_KEY: key } });
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toBe(`lab key: ${key} (keep it private)`);
    expect(lines[1]).toBe(`public key: ${join(dir, 'env-keys', 'lab-key.pub.pem')}`);
    expect(lines[2]).toMatch(/^fingerprint: sha256:[0-9a-f]{64}$/);
    expect(lines[3]).toBe('runs sign with it: CABLEQUAL_LAB_KEY points to it; verify on this machine pins the public key beside it');
  });

  it('another directory: the export that makes runs use it', async () => {
    const r = await runCli(['keygen', 'elsewhere'], { cwd: dir, env: {} });
    expect(r.code).toBe(0);
    expect(r.out.trimEnd().split('\n').at(-1)).toBe(
      `runs sign with it once CABLEQUAL_LAB_KEY points to it: export CABLEQUAL_LAB_KEY=${join(dir, 'elsewhere', 'lab-key.pem')}`,
    );
  });
});
