// #32 item 6, the small ones, each its own test: an empty --public-key, CABLEQUAL_DB=off, --speed 1e-300 (the bounds
// are #34's, options.ts SPEED), --json
// --dry-run, a missing --ssh-config, dashboard --out <a file>, control characters in summary.csv and compare.csv, an
// UNPINNED verify of a body re-signed with another serial or `simulated`, and `status --json` as its help says.
// Over the signed good-qsfp56-quick run of rules version 2 (test/fixtures/journals-v2).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/domain/record.js';
import { canonicalJson } from '../../src/report/canonical-json.js';
import { writeRunCsvs } from '../../src/report/csv.js';
import { compareRuns } from '../../src/report/compare.js';
import { keygen, loadLabKey, signBytes } from '../../src/report/sign.js';
import { runCli } from '../helpers/cli.js';
import { unpackFixtureRun } from '../helpers/journals-v1.js';

const V2 = join(process.cwd(), 'test', 'fixtures', 'journals-v2');
const KEY = join(V2, 'lab-key.pub.pem');
const root = mkdtempSync(join(tmpdir(), 'cq-option-edges-'));
const env = { CABLEQUAL_LAB_KEY: join(root, 'none', 'lab-key.pem'), CABLEQUAL_DB: 'off' };

let copies = 0;
const runCopy = (): string => unpackFixtureRun('journals-v2', 'good-qsfp56-quick', join(root, `run-${copies++}`));
// stderr as its lines, yargs' usage hint left out; never a stack trace.
function errLines(err: string): string[] {
  expect(err).not.toMatch(/internal error|\n\s+at .+:\d+:\d+/);
  return err
    .trimEnd()
    .split('\n')
    .filter((l) => !/^Run "cablequal( [a-z]+)* --help" for usage\.$/.test(l) && l !== '');
}

describe('the small ones of #32 item 6', () => {
  it("--public-key '' is exit 2 (it fell back silently to the other key sources)", async () => {
    const dir = runCopy();
    const r = await runCli(['verify', join(dir, 'certificate.json'), '--public-key', ''], { env: { ...env, CABLEQUAL_LAB_PUBLIC_KEY: KEY } });
    expect(r.code).toBe(2);
    expect(errLines(r.err)).toEqual([
      "cablequal: --public-key: empty; give the lab's public key file (PEM), or leave --public-key out to use $CABLEQUAL_LAB_PUBLIC_KEY",
    ]);
    expect(r.out).toBe('');
  });

  it('CABLEQUAL_DB=off means off, as the flag does: no SQLite file named "off"', async () => {
    const dir = runCopy();
    const imp = await runCli(['db', 'import', dir], { env, cwd: root });
    expect(imp.code).toBe(2);
    expect(errLines(imp.err)).toEqual(['cablequal: db import: $CABLEQUAL_DB=off writes no store; give --db to import anyway']);
    const dash = await runCli(['dashboard', '--out', root, '--listen', '0'], { env, cwd: root });
    expect(dash.code).toBe(2);
    expect(errLines(dash.err)).toEqual(['cablequal: dashboard: $CABLEQUAL_DB=off: there is no store to show; give --db']);
    expect(existsSync(join(root, 'off'))).toBe(false);
    // --db given wins over the environment.
    const given = await runCli(['db', 'import', dir, '--db', join(root, 'given.db')], { env, cwd: root });
    expect(given.code, given.err).toBe(0);
    expect(existsSync(join(root, 'given.db'))).toBe(true);
  });

  it('--speed 1e-300 is refused (it printed 489 TimeoutOverflowWarning lines), by the same bound in run and sim serve', async () => {
    for (const argv of [
      ['run', '--sim', 'good-qsfp56', '--speed', '1e-300', '--dry-run'],
      ['run', '--nodes', 'a,b', '--speed', '1e-300'],
      ['sim', 'serve', '--scenario', 'good-qsfp56', '--speed', '1e-300'],
    ]) {
      const r = await runCli(argv, { env });
      expect(r.code).toBe(2);
      expect(errLines(r.err)).toEqual(['cablequal: --speed: expected a speed-up factor from 0.1 to 1000, got "1e-300"']);
    }
    const help = await runCli(['sim', 'serve', '--help'], { env });
    expect(help.out.replace(/\s+/g, ' ')).toContain('from 0.1 to 1000');
  });

  it('run --json --dry-run prints the plan as one JSON object (it printed text)', async () => {
    const r = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--dry-run', '--json'], { env });
    expect(r.code, r.err).toBe(0);
    expect(r.out.trimEnd().split('\n')).toHaveLength(1);
    const plan = JSON.parse(r.out) as {
      schema: string;
      protocol: string;
      real: boolean;
      nodes: { name: string }[];
      phases: string[];
      commands: { node: string; phase: string; kind: string; command: string }[];
    };
    expect(plan).toMatchObject({ schema: 'cablequal.dry-run/1', protocol: 'quick', real: false });
    expect(plan.nodes.map((n) => n.name)).toEqual(['spark-a', 'spark-b']);
    expect(plan.phases).toContain('soak-loaded');
    expect(plan.commands.filter((c) => c.phase === 'ib-write-bw' && /^ib_write_bw /.test(c.command)).map((c) => c.node)).toEqual(
      expect.arrayContaining(['spark-a', 'spark-b']),
    );
    expect(new Set(plan.commands.map((c) => c.kind))).toEqual(new Set(['run', 'start', 'stop', 'sampler']));
  });

  it('a missing --ssh-config file is exit 2 naming it (it was ignored)', async () => {
    const r = await runCli(['run', '--nodes', 'a,b', '--ssh-config', 'no/such/ssh_config', '--dry-run'], { env, cwd: root });
    expect(r.code).toBe(2);
    expect(errLines(r.err)).toEqual([
      `cablequal: --ssh-config ${join(root, 'no/such/ssh_config')}: no such file; give the ssh config that names the nodes, or leave --ssh-config out (~/.ssh/config)`,
    ]);
  });

  it('dashboard --out <a file> is exit 2 (it was exit 3)', async () => {
    writeFileSync(join(root, 'afile'), 'x\n');
    const r = await runCli(['dashboard', '--out', 'afile', '--listen', '0'], { env: {}, cwd: root });
    expect(r.code).toBe(2);
    expect(errLines(r.err)).toEqual(['cablequal: --out afile: not a directory; give the reports directory (the --out of cablequal run)']);
  });

  it('labels and serials with control characters are escaped in summary.csv and compare.csv, as the HTML does', async () => {
    const dir = runCopy();
    const record = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as RunRecord;
    record.label = 'cab\u001b[2J\u001b]0;pwned\u0007le';
    record.cable.serial = 'SN\u0000\u009b1';
    writeFileSync(join(dir, 'record.json'), JSON.stringify(record));
    const out = join(root, 'csvs');
    mkdirSync(out);
    await writeRunCsvs(record, out);
    // compare re-grades the journal (its label wins over record.json's): handed this record, its CSV escapes it too.
    await compareRuns([dir], join(root, 'compare.csv'), async () => record);
    for (const csv of [readFileSync(join(out, 'summary.csv'), 'utf8'), readFileSync(join(root, 'compare.csv'), 'utf8')]) {
      expect(csv).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/);
      expect(csv).toContain('cab\\x1b[2J\\x1b]0;pwned\\x07le');
      expect(csv).toContain('SN\\x00\u009b1');
    }
  });

  it('an UNPINNED verify compares the serial and `simulated` with the journal (a body re-signed with another key said anything)', async () => {
    await keygen(join(root, 'mallory'));
    const mallory = (await loadLabKey(join(root, 'mallory', 'lab-key.pem')))!;
    const resigned = (edit: (body: Record<string, any>) => void) => {
      const dir = runCopy();
      const doc = JSON.parse(readFileSync(join(dir, 'certificate.json'), 'utf8')) as { body: Record<string, any>; signature: string };
      edit(doc.body);
      doc.body['signer'] = { algorithm: 'Ed25519', fingerprint: mallory.fingerprint, publicKeyPem: mallory.publicKeyPem };
      doc.signature = signBytes(mallory, canonicalJson(doc.body));
      writeFileSync(join(dir, 'certificate.json'), `${canonicalJson(doc)}\n`);
      return join(dir, 'certificate.json');
    };
    const plain = await runCli(['verify', resigned(() => undefined)], { env });
    expect(plain.code, plain.err).toBe(5); // consistent, unpinned: what it was before the edits
    const serial = await runCli(['verify', resigned((b) => void (b['cable'].serial = 'MT9999XX00001'))], { env });
    expect(serial.code).toBe(1);
    expect(errLines(serial.err)[0]).toMatch(/^problem: the journal's cable serial is "[^"]+", the certificate says "MT9999XX00001"$/);
    const real = await runCli(['verify', resigned((b) => void (b['simulated'] = false))], { env });
    expect(real.code).toBe(1);
    expect(errLines(real.err)[0]).toBe('problem: the journal says the run was simulated, the certificate says simulated: false');
  });

  it('status --json prints one JSON array, an object per run, as its help says', async () => {
    const reports = join(root, 'reports');
    const dir = join(reports, 'cable', 'r1');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'journal.jsonl'), '');
    const dead = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
    writeFileSync(
      join(dir, 'live.json'),
      JSON.stringify({
        schema: 'cablequal.live/1',
        runId: 'r1',
        label: null,
        pid: dead,
        controller: (await import('node:os')).hostname(),
        startedAt: '2026-06-01T00:00:00.000Z',
        updatedAt: '2026-06-01T00:10:00.000Z',
        phase: 'soak-loaded',
        elapsedS: 600,
        remainingS: 3900,
        nodes: [{ name: 'spark-a', host: 'spark-a', cage: 1 }],
        runDir: dir,
        protocol: 'spark-burnin',
        simulated: false,
      }),
    );
    const r = await runCli(['status', '--out', reports, '--json'], { env });
    expect(r.code, r.err).toBe(0);
    const runs = JSON.parse(r.out) as { runId: string; verdict: string }[];
    expect(runs).toEqual([expect.objectContaining({ runId: 'r1', verdict: 'died', runDir: dir })]);
    mkdirSync(join(root, 'empty'));
    const none = await runCli(['status', '--out', join(root, 'empty'), '--json'], { env });
    expect(JSON.parse(none.out)).toEqual([]);
    const help = await runCli(['status', '--help'], { env });
    expect(help.out.replace(/\s+/g, ' ')).toContain('--json one JSON array on stdout, an object per run');
  });
});
