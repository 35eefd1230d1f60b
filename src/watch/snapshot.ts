// What a link's two ends show the moment it is seen down: `ethtool <if>` (mlx5 gives the PHY's link-down reason, from
// its PDDR status, only while the link is down: docs CLUSTERS.md "In service", mlx5 en_ethtool.c get_link_ext_state),
// `ethtool -S <if>` and `ethtool -m <if>`, of both ends at once. Until the run's snapshot module (#33, branch stopsnap)
// is merged this is the watch's own, behind the interface it is expected to have: runner, node, netdev -> raw texts
// and the parsed reason.
import { ParseError } from '../domain/errors.js';
import { printable } from '../domain/text.js';
import { parseEthtoolLink } from '../probes/ethtool-link.js';
import { cmd } from '../transport/commands.js';
import type { CommandRunner } from '../transport/types.js';
import type { Clock } from '../domain/clock.js';
import type { EndSnapshot } from './events.js';

// The most of one output kept with the event (an `ethtool -S` of every counter is ~60 kB; the *_phy part is early).
const KEEP_CHARS = 64_000;

// ethtool prints the reason after the state: `Link detected: no (Cable issue)` (ethtool netlink/settings.c prints the
// kernel's link_ext_state and substate names in parentheses; FORMATS.md §3 "may be followed by ' (reason)'").
const REASON = /^\s*Link detected:\s*no\s*\((.+)\)\s*$/m;

async function text(runner: CommandRunner, command: string): Promise<string> {
  try {
    const r = await runner.run(command, { timeoutMs: 20_000 });
    const out = r.exitCode === 0 ? r.stdout : `${r.stdout}${r.stderr ? `\n[stderr] ${r.stderr}` : ''}\n[exit ${r.exitCode ?? r.signal}]`;
    return out.length > KEEP_CHARS ? `${out.slice(0, KEEP_CHARS)}\n[cut at ${KEEP_CHARS} of ${out.length} characters]` : out;
  } catch (e) {
    return `[not read: ${e instanceof Error ? e.message : String(e)}]`;
  }
}

// One end's snapshot; every text is kept raw (escaped only where it is printed), the state and reason read from it.
export async function snapshotEnd(runner: CommandRunner, clock: Clock, end: { node: string; cage: number; netdev: string }): Promise<EndSnapshot> {
  const takenAt = new Date(clock.now()).toISOString();
  const [link, stats, module] = await Promise.all([
    text(runner, cmd.ethtoolLink(end.netdev)),
    text(runner, cmd.ethtoolStats(end.netdev)),
    text(runner, cmd.ethtoolModule(end.netdev)),
  ]);
  let linkDetected: boolean | null = null;
  try {
    linkDetected = parseEthtoolLink(link).linkDetected;
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
  }
  const m = REASON.exec(link);
  return {
    ...end,
    takenAt,
    linkDetected,
    reason: m ? printable(m[1]!).slice(0, 200) : null,
    texts: { ethtool: link, 'ethtool -S': stats, 'ethtool -m': module },
  };
}
