// The PHY's word at a link drop, in the journal (#33 item 4): when a sample sees a receiver's link go down (or its
// link_down_events_phy rise), the sampling loop reads `ethtool <if>`, `ethtool -S <if>` and `ethtool -m <if>` of it at
// once (src/probes/link-snapshot.ts) and journals a `link-snapshot` line: the three outputs raw, with the link state
// and the reason ethtool printed. mlx5 reports the reason only while the link is down, so this is the only moment it
// can be read. The record quotes it in the link-down FAIL's reason (and so on the certificate), from the raw text;
// a journal without snapshot lines (every journal before them) keeps its reasons word for word.
import type { Reason } from '../domain/outcome.js';
import type { NodeSample, RailSample } from '../domain/sample.js';
import { linkState, type LinkSnapshot } from '../probes/link-snapshot.js';
import type { JournalLine } from './journal.js';

// At most this many snapshots per node in one run: a link that flaps all hour keeps its first drops, not a journal of
// ethtool dumps (each ~60 kB with the full `ethtool -S`).
export const MAX_SNAPSHOTS_PER_NODE = 5;

// What set a snapshot off: the link seen down (`Link detected: no` in the sample), or link_down_events_phy risen.
export type SnapshotTrigger = 'link-down' | 'link-down-events';

// The rail of a sample whose link went down since the node's previous sample, and what showed it; null: none did.
// `snapped`: this drop has its snapshot already (the counter rose a tick before the link state, read every 10 s, says
// it is down): a link seen down then is the same drop, a counter risen again is a new one.
export function linkDropOf(prev: NodeSample | undefined, cur: NodeSample, snapped = false): { rail: RailSample; trigger: SnapshotTrigger } | null {
  if (!prev) return null;
  for (const rail of cur.rails) {
    const before = prev.rails.find((r) => r.netdev === rail.netdev);
    if (!before) continue;
    const a = before.phy.linkDownEvents;
    const b = rail.phy.linkDownEvents;
    if (a !== undefined && b !== undefined && b > a) return { rail, trigger: 'link-down-events' };
    if (rail.linkUp === false && before.linkUp !== false && !snapped) return { rail, trigger: 'link-down' };
  }
  return null;
}

// The journal line of one snapshot.
export function snapshotLine(phase: string, trigger: SnapshotTrigger, s: LinkSnapshot): JournalLine {
  return { type: 'link-snapshot', tS: s.atS, phase, node: s.node, netdev: s.netdev, trigger, snapshot: s };
}

// What a record quotes of one snapshot line, read again from its raw `ethtool <if>` text (the evidence).
interface PhyWord {
  node: string;
  netdev: string;
  atS: number;
  detected: boolean | null;
  reason: string | null;
}

function phyWordsOf(lines: readonly JournalLine[]): PhyWord[] {
  const out: PhyWord[] = [];
  for (const l of lines) {
    if (l.type !== 'link-snapshot') continue;
    const s = l['snapshot'] as { atS: number; link: { raw: string; stderr?: string } };
    out.push({ node: String(l['node']), netdev: String(l['netdev']), atS: s.atS, ...linkState(s.link) });
  }
  return out;
}

// The reasons with the PHY's word added to each link-down FAIL of a node that has a snapshot: the first reason read
// while its link was down, or that the snapshot found it up again (no reason to read). Unchanged without snapshots.
export function withPhyWord(reasons: Reason[], lines: readonly JournalLine[]): Reason[] {
  const words = phyWordsOf(lines);
  if (words.length === 0) return reasons;
  return reasons.map((r) => {
    if (r.rule !== 'link-down-events' || r.grade !== 'FAIL' || !r.node) return r;
    const mine = words.filter((w) => w.node === r.node);
    const said = mine.find((w) => w.detected === false && w.reason !== null);
    if (said) return { ...r, message: `${r.message}; the PHY said why: "${said.reason}" (ethtool ${said.netdev} at ${fmtS(said.atS)} s, link down)` };
    const first = mine[0];
    if (!first) return r;
    const state = first.detected === true ? 'found the link up again, so gave no reason (mlx5 reports one only while it is down)' : 'gave no reason';
    return { ...r, message: `${r.message}; ethtool ${first.netdev} at ${fmtS(first.atS)} s ${state}` };
  });
}

const fmtS = (s: number) => (Math.round(s * 10) / 10).toString();
