// What the PHY says at a link drop, kept and quoted (#33 item 4): a run whose link drops takes a snapshot of the
// receiver at once (while the link is still down: mlx5 gives the reason only then), journals it, and its link-down
// FAIL quotes the reason, live and on re-grade alike; a journal without a snapshot keeps its reason word for word.
// Simulated lab (quick protocol, seed 7): the `link-drop@<s>s` fault takes the link down for 5 s, `ethtool <if>`
// printing `Link detected: no (Cable issue)` meanwhile (the simulator's reason for a flap, generated).
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { labRun } from '../faults/lab-run.js';
import { asBeforeTheChain } from '../helpers/journal-lines.js';

const DROP_S = 80; // inside soak-idle
const DOWN_S = 5; // the fault's default duration

describe('a link drop: the snapshot and the quoted reason', { timeout: 60_000 }, () => {
  it('snapshots the receiver while the link is down, journals the three outputs, and the FAIL quotes the reason (grade agrees)', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: [`link-drop@${DROP_S}s`] });
    const snaps = r.journal.filter((l) => l.type === 'link-snapshot');
    // Both receivers saw the drop (a link has two ends): one snapshot each, at the first sample after it (the link
    // state read a tick later saying down is the same drop).
    expect(snaps.map((l) => l['node']).sort()).toEqual(['spark-a', 'spark-b']);
    for (const l of snaps) {
      const s = l['snapshot'] as { atS: number; link: { raw: string; detected: boolean; reason: string }; stats: { raw: string }; module: { raw: string } };
      expect(l['trigger']).toBe('link-down-events');
      expect(l['phase']).toBe('soak-idle');
      expect(s.atS).toBeGreaterThan(DROP_S);
      expect(s.atS).toBeLessThan(DROP_S + DOWN_S);
      expect(s.link).toMatchObject({ detected: false, reason: 'Cable issue' });
      expect(s.link.raw).toContain('\tLink detected: no (Cable issue)\n');
      expect(s.stats.raw).toMatch(/^\s+link_down_events_phy: 1$/m);
      expect(s.module.raw).toMatch(/Identifier/);
    }
    // Journaled before the decision it explains.
    const decision = r.journal.findIndex((l) => l.type === 'decision');
    expect(r.journal.findIndex((l) => l.type === 'link-snapshot')).toBeLessThan(decision);
    expect(r.record.outcome).toBe('FAIL');
    const down = r.record.reasons.filter((x) => x.rule === 'link-down-events');
    expect(down.map((x) => x.node).sort()).toEqual(['spark-a', 'spark-b']);
    for (const x of down) {
      expect(x.message).toMatch(
        /^spark-[ab] soak-idle: link down events 1 events >= 1 \(fail at 1 or more\); the PHY said why: "Cable issue" \(ethtool enp1s0f1np1 at 8[1-4] s, link down\)$/,
      );
    }
    const g = await runCli(['grade', r.runDir, '--json']);
    const graded = JSON.parse(g.out) as { outcome: string; reasons: { message: string }[] };
    expect(graded.reasons.map((x) => x.message)).toEqual(r.record.reasons.map((x) => x.message));

    // The same journal without its snapshot lines (as every journal written before them; unchained, the chain would
    // say lines are missing): the reason as it was.
    const dir = mkdtempSync(join(tmpdir(), 'cq-nosnap-'));
    const lines = readFileSync(join(r.runDir, 'journal.jsonl'), 'utf8').split('\n').filter(Boolean);
    const kept = asBeforeTheChain(lines.filter((l) => !l.includes('"type":"link-snapshot"')));
    writeFileSync(join(dir, 'journal.jsonl'), `${kept.join('\n')}\n`);
    const plain = JSON.parse((await runCli(['grade', dir, '--json'])).out) as { outcome: string; reasons: { rule: string; message: string }[] };
    expect(plain.outcome).toBe('FAIL');
    const plainDown = plain.reasons.filter((x) => x.rule === 'link-down-events');
    expect(plainDown).toHaveLength(2);
    for (const x of plainDown) expect(x.message).toMatch(/^spark-[ab] soak-idle: link down events 1 events >= 1 \(fail at 1 or more\)$/);
  });

  it('a drop under NCCL (which gives up at once, before the next tick): FAIL on the link, never ERROR nccl-failed', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', faults: ['link-drop@54s'] });
    expect(r.journal.filter((l) => l.type === 'setup-error')).toEqual([]);
    // NCCL's own word is kept: its output, failed, in the journal.
    const out = r.journal.find((l) => l.type === 'raw' && l['what'] === 'nccl')!;
    expect(`${String(out['stdout'])}\n${String(out['stderr'])}`).toMatch(/remote process exited or there was a network error/);
    expect(r.journal.find((l) => l.type === 'phase-end' && l['phase'] === 'nccl')!['status']).toBe('stopped-early');
    expect(r.record.outcome).toBe('FAIL');
    expect(r.record.reasons.map((x) => x.rule)).toEqual(['link-down-events', 'link-down-events']);
    for (const x of r.record.reasons) expect(x.message).toContain('the PHY said why: "Cable issue"');
    const graded = JSON.parse((await runCli(['grade', r.runDir, '--json'])).out) as { outcome: string; reasons: { message: string }[] };
    expect([graded.outcome, graded.reasons.map((x) => x.message)]).toEqual(['FAIL', r.record.reasons.map((x) => x.message)]);
  });

  it('the setup-check document shows the quoted reason', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cq-snap-doc-'));
    const r = await runCli([
      'run',
      '--sim',
      'good-qsfp56',
      '--protocol',
      'quick',
      '--seed',
      '7',
      '--json',
      '--out',
      out,
      '--sim-fault',
      `link-drop@${DROP_S}s`,
    ]);
    const res = JSON.parse(r.out) as { outcome: string; document: string };
    expect(res.outcome).toBe('FAIL');
    expect(readFileSync(res.document, 'utf8')).toMatch(/the PHY said why: &quot;Cable issue&quot; \(ethtool enp1s0f1np1 at 8[1-4] s, link down\)/);
  });
});
