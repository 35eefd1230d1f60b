// The cables a watch covers, as CableLinks (src/domain/cabling.ts). Until the cluster's cabling map is there (#35: it
// replaces `findCables` and nothing else), the simplest honest way: each node's cages as the node itself says
// (ibdev2netdev and sysfs, as a run's preflight reads them), the cabled ones (both rails Up), and the cable serial each
// reads from its module EEPROM (upper page 00h, as a run's identity step reads it); two ends with one serial are one
// cable. Read-only: nothing is configured, cleared or loaded.
import { linkId, type CableLink, type CablingProblem, type LinkEnd } from '../domain/cabling.js';
import { ParseError } from '../domain/errors.js';
import { cagesFromLinks, parseIbdev2netdev, type CageLinks } from '../probes/ibdev2netdev.js';
import { parseNetIdentity } from '../probes/net-identity.js';
import { parseEepromHex } from '../probes/eeprom-hex.js';
import { cmd } from '../transport/commands.js';
import { TransportError, type CommandRunner } from '../transport/types.js';
import { printable } from '../domain/text.js';

export interface WatchedNode {
  name: string;
  runner: CommandRunner;
}

// A node's cabled cages with what each end's EEPROM says.
async function cabledEnds(n: WatchedNode): Promise<{ ends: LinkEnd[]; problems: CablingProblem[] }> {
  const problems: CablingProblem[] = [];
  let cages: CageLinks[];
  try {
    const list = await n.runner.run(cmd.ibdev2netdev(), { timeoutMs: 20_000 });
    if (list.exitCode !== 0) throw new ParseError('ibdev2netdev', 1, list.stderr.trim().split('\n')[0] || `exit ${list.exitCode}`);
    const ids = await n.runner.run(cmd.netIdentity(), { timeoutMs: 20_000 });
    cages = cagesFromLinks(parseIbdev2netdev(list.stdout).links, parseNetIdentity(ids.stdout));
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    const message = `${n.name}: cannot list its cages (${e.message})`;
    return {
      ends: [],
      problems: [{ kind: 'cages-unread', message, fix: 'check that the mlx5 driver is loaded and ibdev2netdev works on the node', nodes: [n.name] }],
    };
  }
  const ends: LinkEnd[] = [];
  for (const c of cages.filter((x) => x.up)) {
    const netdev = c.rails[0].netdev;
    const r = await n.runner.run(cmd.eepromUpper(netdev), { timeoutMs: 30_000 });
    let id: { serial: string | null; partNumber: string | null; vendor: string | null } = { serial: null, partNumber: null, vendor: null };
    try {
      if (r.exitCode === 0) {
        const d = parseEepromHex(r.stdout);
        id = {
          serial: d.vendorSn ? printable(d.vendorSn) : null,
          partNumber: d.vendorPn ? printable(d.vendorPn) : null,
          vendor: d.vendorName ? printable(d.vendorName) : null,
        };
      }
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
    }
    if (id.serial === null)
      problems.push({
        kind: 'serial-unread',
        message: `${n.name} cage ${c.index}: the module EEPROM gave no serial (${r.exitCode !== 0 ? r.stderr.trim().split('\n')[0] || `exit ${r.exitCode}` : 'unreadable'})`,
        fix: 'let the watch read the EEPROM (sudoers: ethtool), or reseat the cable',
        nodes: [n.name],
      });
    ends.push({
      node: n.name,
      cage: c.index,
      ...id,
      rails: c.rails.map((x) => ({ netdev: x.netdev, rdmaDevice: x.rdmaDevice, address: null })),
      state: 'up',
      speedMbps: null,
      lanes: null,
      fec: null,
      mtu: null,
    });
  }
  return { ends, problems };
}

// Every cable between the nodes: two cabled ends with the same serial on two nodes. An end whose serial no other node
// reads (a cable to a node not watched, a switch) is a problem, not a cable.
export async function findCables(nodes: readonly WatchedNode[]): Promise<{ links: CableLink[]; problems: CablingProblem[] }> {
  // A node that cannot be reached is a problem of the map, not the end of it: the other nodes' cables are watched.
  const found = await Promise.all(
    nodes.map((n) =>
      cabledEnds(n).catch((e: unknown) => {
        if (!(e instanceof TransportError)) throw e;
        const problem: CablingProblem = {
          kind: 'unreachable',
          message: `${n.name}: not reachable (${e.message})`,
          fix: 'check the node is up and its SSH (cablequal preflight)',
          nodes: [n.name],
        };
        return { ends: [], problems: [problem] };
      }),
    ),
  );
  const problems = found.flatMap((f) => f.problems);
  const bySerial = new Map<string, LinkEnd[]>();
  for (const e of found.flatMap((f) => f.ends)) if (e.serial !== null) bySerial.set(e.serial, [...(bySerial.get(e.serial) ?? []), e]);
  const links: CableLink[] = [];
  for (const [serial, ends] of bySerial) {
    if (ends.length !== 2 || ends[0]!.node === ends[1]!.node) {
      problems.push({
        kind: 'unmatched-end',
        message: `cable ${serial}: read at ${ends.map((e) => `${e.node} cage ${e.cage}`).join(', ')}; a direct cable has one end on each of two watched nodes`,
        fix: 'name both nodes of each cable with --nodes',
        nodes: ends.map((e) => e.node),
      });
      continue;
    }
    const [a, b] = [...ends].sort((p, q) => (p.node === q.node ? p.cage - q.cage : p.node < q.node ? -1 : 1)) as [LinkEnd, LinkEnd];
    links.push({ id: linkId(a, b), a, b, serial, partNumber: a.partNumber ?? b.partNumber, matchedBy: 'serial' });
  }
  return { links: links.sort((x, y) => (x.id < y.id ? -1 : 1)), problems };
}
