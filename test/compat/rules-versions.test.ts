// Certificates signed by rules version 1 that today's rules grade differently: verify still accepts them (with the
// rules that signed them) and says what today's rules conclude; grade uses today's rules unless told --rules 1.
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { KNOWN_RULES_VERSIONS, RULES, RULES_VERSION } from '../../src/rules/versions.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'journals-v1-regraded');

function unpack(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `cq-v1r-${name}-`));
  cpSync(join(FIXTURES, name), dir, { recursive: true });
  writeFileSync(join(dir, 'journal.jsonl'), gunzipSync(readFileSync(join(FIXTURES, name, 'journal.jsonl.gz'))));
  return dir;
}
const recorded = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name, 'record.json'), 'utf8')) as { outcome: string; decidedAtS: number | null };

describe('a version 1 certificate that today`s rules grade differently', () => {
  it.each([
    ['steady-lane-quick', 'MARGINAL'],
    ['steady-lane-4k-quick', 'ERROR'],
  ])('%s: verify accepts it under version 1 and notes that today`s rules say %s', async (name, today) => {
    expect(recorded(name).outcome).toBe('FAIL');
    const dir = unpack(name);
    const r = await runCli(['verify', join(dir, 'certificate.json'), '--public-key', join(FIXTURES, 'lab-key.pub.pem')]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^OK: .*re-graded verdict \(FAIL, rules version 1\) agree/m);
    expect(r.out).toContain(
      `note: signed under rules version 1; today's rules (version ${RULES_VERSION}) would grade this run ${today}, not FAIL: the certificate stands for the rules it was signed under`,
    );
  });

  it('grade uses today`s rules and says the journal was written under version 1; --rules 1 gives the recorded verdict', async () => {
    const dir = unpack('steady-lane-quick');
    const now = await runCli(['grade', dir, '--json']);
    const j = JSON.parse(now.out) as { outcome: string; rulesVersion: number; notes: string[]; reasons: { rule: string; node?: string; lane?: number }[] };
    expect(j).toMatchObject({ outcome: 'MARGINAL', rulesVersion: RULES_VERSION });
    expect(j.notes[0]).toBe(`journal written under rules version 1; graded with rules version ${RULES_VERSION}`);
    expect(j.reasons.map((x) => `${x.rule}/${x.node}/${x.lane}`).sort()).toEqual(['lane-ratio/spark-a/2', 'lane-ratio/spark-b/2']);
    const old = await runCli(['grade', dir, '--rules', '1']);
    expect(old.code).toBe(1);
    expect(old.out).toMatch(/^FAIL: .*rules version 1\)/);
    expect(old.out).not.toContain('note: journal written under');
  });

  it('the journal`s decision line (version 1`s watch, 5 s into loopback) does not decide a re-grade: the soaks never ran', async () => {
    expect(recorded('steady-lane-4k-quick').decidedAtS).toBe(5);
    const dir = unpack('steady-lane-4k-quick');
    const r = await runCli(['grade', dir]);
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/^ERROR: /);
    expect(r.out).toContain(
      '[not-soaked] the run was stopped before soak-idle and soak-loaded ended (a FAIL decided by the rules version 1 watch: lane-ratio on spark-a)',
    );
    expect(r.out).toContain('note: the run was stopped early (lane-ratio on spark-a, by the rules version 1 watch); these rules do not confirm it');
    const old = await runCli(['grade', dir, '--rules', '1', '--json']);
    expect(JSON.parse(old.out)).toMatchObject({ outcome: 'FAIL', decidedAtS: 5, rulesVersion: 1 });
  });

  it('a journal whose protocol names a rule this version does not know, and lacks one it knows, grades with notes', async () => {
    const V2 = join(import.meta.dirname, '..', 'fixtures', 'journals-v2', 'good-qsfp56-quick');
    const dir = mkdtempSync(join(tmpdir(), 'cq-future-'));
    const lines = gunzipSync(readFileSync(join(V2, 'journal.jsonl.gz')))
      .toString('utf8')
      .split('\n');
    const start = JSON.parse(lines[0]!) as { type: string; protocolText: string; protocol: { name: string; sha256: string } };
    expect(start.type).toBe('run-start');
    // A lab's own protocol (a built-in's name on another text is refused), its text and its recorded hash agreeing.
    const p = JSON.parse(start.protocolText) as { name: string; limits: { rule: string }[] };
    p.name = 'lab-quick';
    p.limits = [...p.limits.filter((l) => l.rule !== 'fec-window'), { rule: 'eye-height', direction: 'min', fail: 10, unit: 'mV' } as { rule: string }];
    start.protocolText = JSON.stringify(p);
    start.protocol = { ...start.protocol, name: 'lab-quick', sha256: createHash('sha256').update(start.protocolText).digest('hex') };
    writeFileSync(join(dir, 'journal.jsonl'), [JSON.stringify(start), ...lines.slice(1)].join('\n'));
    const r = await runCli(['grade', dir, '--json']);
    expect(r.err).toBe('');
    const j = JSON.parse(r.out) as { outcome: string; notes: string[] };
    expect(j.outcome).toBe('PASS');
    // The journal's protocol lacks fec-window, and whatever rule came after version 2: each gets its default, noted.
    const later = RULES.filter((r) => r.since > 2 && !p.limits.some((l) => l.rule === r.id));
    expect(j.notes).toEqual([
      ...(RULES_VERSION > 2 ? [`journal written under rules version 2; graded with rules version ${RULES_VERSION}`] : []),
      'limits[8]: rule "eye-height" is not known to this version of the rules: ignored',
      'limits: no limit for fec-window (added in rules version 2): its default applies',
      ...later.map((r) => `limits: no limit for ${r.id} (added in rules version ${r.since}): its default applies`),
      // Version 5 grades PHY recoveries where the kernel exposed their counter; no journal before it read one.
      ...(RULES_VERSION >= 5
        ? [
            'total_success_recovery_phy: not exposed on any receiver (spark-a, spark-b) (mlx5 before the 2025-03 patch, or firmware without the PPCNT recovery group): recoveries without a link drop were not counted there',
          ]
        : []),
      // Version 3's soak checks need lines a version 2 journal does not have: not applied, or judged as it was.
      ...(RULES_VERSION >= 3
        ? [
            'soak-link-load: not applied: the journal (rules version 2) was written before the soaks journaled their throughput rows',
            'gpu-util-min: the journal (rules version 2) does not say when the GPU load started: judged as version 2 did, from a fixed point into each GPU-loaded soak',
          ]
        : []),
    ]);
  });

  it('an unknown rules version is a usage error naming the known ones', async () => {
    const r = await runCli(['grade', unpack('steady-lane-quick'), '--rules', '7']);
    expect(r.code).toBe(2);
    const known = KNOWN_RULES_VERSIONS.join(', ').replace(/, (\d+)$/, ' and $1');
    expect(r.err).toContain(`rules version 7: this cablequal grades with versions ${known}`);
  });
});
