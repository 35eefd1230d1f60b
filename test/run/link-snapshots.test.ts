// The link-snapshot journal line's pure parts: what sets a snapshot off, how a record quotes it, how a bad line is
// screened out. Constructed samples and lines (the outputs quoted are the shapes of ethtool netlink/settings.c).
import { describe, expect, it } from 'vitest';
import type { NodeSample, RailSample } from '../../src/domain/sample.js';
import type { Reason } from '../../src/domain/outcome.js';
import { journalLineProblem } from '../../src/run/journal-shape.js';
import type { JournalLine } from '../../src/run/journal.js';
import { linkDropOf, withPhyWord } from '../../src/run/link-snapshots.js';

const rail = (netdev: string, o: { up?: boolean; downs?: bigint }): RailSample => ({
  netdev,
  phy: { laneErrors: [], ...(o.downs !== undefined ? { linkDownEvents: o.downs } : {}) },
  ...(o.up !== undefined ? { linkUp: o.up } : {}),
});
const sample = (rails: RailSample[]): NodeSample => ({ node: 'spark-b', tick: 1, tMs: 0, controllerMs: 0, rails, nicTempC: null, gpus: [], errors: [] });

describe('linkDropOf', () => {
  it('fires on a link seen going down or link_down_events_phy rising, on the rail that showed it; not on the first sample nor a link staying down', () => {
    const up = sample([rail('a0', { up: true, downs: 0n }), rail('a1', { up: true, downs: 0n })]);
    expect(linkDropOf(undefined, up)).toBeNull();
    expect(linkDropOf(up, up)).toBeNull();
    const counted = sample([rail('a0', { downs: 1n }), rail('a1', { downs: 1n })]);
    expect(linkDropOf(up, counted)).toMatchObject({ rail: { netdev: 'a0' }, trigger: 'link-down-events' });
    const seen = sample([rail('a0', { up: true, downs: 0n }), rail('a1', { up: false, downs: 0n })]);
    expect(linkDropOf(up, seen)).toMatchObject({ rail: { netdev: 'a1' }, trigger: 'link-down' });
    expect(linkDropOf(seen, seen)).toBeNull();
    // The same drop seen down a tick after its counter rose (and snapped then): no second snapshot; a new rise is one.
    const counted2 = sample([rail('a0', { up: false, downs: 1n }), rail('a1', { up: false, downs: 1n })]);
    expect(linkDropOf(counted, counted2, true)).toBeNull();
    expect(linkDropOf(counted, counted2, false)).toMatchObject({ trigger: 'link-down' });
    const again = sample([rail('a0', { up: false, downs: 2n }), rail('a1', { up: false, downs: 2n })]);
    expect(linkDropOf(counted2, again, true)).toMatchObject({ rail: { netdev: 'a0' }, trigger: 'link-down-events' });
  });
});

const snap = (node: string, atS: number, linkText: string): JournalLine => ({
  type: 'link-snapshot',
  tS: atS,
  node,
  netdev: 'enp1s0f1np1',
  snapshot: { atS, link: { raw: `Settings for enp1s0f1np1:\n\tLink detected: ${linkText}\n` } },
});
const down: Reason = { rule: 'link-down-events', grade: 'FAIL', node: 'spark-b', message: 'spark-b: 1 link down events (fail at 1 or more)' };

describe('withPhyWord', () => {
  it('quotes the first reason read while the link was down, from the raw text', () => {
    const lines = [snap('spark-b', 12.34, 'no (Bad signal integrity, Large number of physical errors)'), snap('spark-b', 40, 'no (Cable issue)')];
    expect(withPhyWord([down], lines)[0]!.message).toBe(
      'spark-b: 1 link down events (fail at 1 or more); the PHY said why: "Bad signal integrity, Large number of physical errors" (ethtool enp1s0f1np1 at 12.3 s, link down)',
    );
  });

  it('says when the snapshot found the link up again; leaves other rules, other nodes and journals without snapshots alone', () => {
    expect(withPhyWord([down], [snap('spark-b', 3, 'yes')])[0]!.message).toBe(
      'spark-b: 1 link down events (fail at 1 or more); ethtool enp1s0f1np1 at 3 s found the link up again, so gave no reason (mlx5 reports one only while it is down)',
    );
    const crc: Reason = { rule: 'crc-errors', grade: 'FAIL', node: 'spark-b', message: 'spark-b: 3 crc errors' };
    expect(withPhyWord([crc, { ...down, node: 'spark-a' }], [snap('spark-b', 3, 'no (Cable issue)')])).toEqual([crc, { ...down, node: 'spark-a' }]);
    expect(withPhyWord([down], [])).toEqual([down]);
  });
});

describe('the link-snapshot line shape', () => {
  it('is read when it has what the record re-reads, reported otherwise', () => {
    expect(journalLineProblem(snap('spark-b', 3, 'no') as never)).toBeNull();
    const bad = { ...snap('spark-b', 3, 'no'), snapshot: { atS: 3, link: { raw: 5 } } };
    expect(journalLineProblem(bad as never)).toMatch(/link-snapshot/);
    expect(journalLineProblem({ type: 'link-snapshot', tS: 1, node: 'x', netdev: 'y' } as never)).toMatch(/snapshot/);
  });
});
