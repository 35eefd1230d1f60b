// The cables a watch covers: the cabling map's (#35) links, read as `cablequal cabling` reads them (each node's cages
// by ibdev2netdev and sysfs, their link state and the module EEPROM's serial: src/probes/cabling-read.ts) and matched
// as it matches them (src/domain/cabling-map.ts), with no ping: a watch only reads. A cable is watched when both its
// ends are on watched nodes, report one serial and have their link up; every other cabled end is said with its fix
// (a cable to a switch or to a node not named, a link down at the start, clones sharing a serial). Read-only: nothing
// is configured, cleared or loaded.
import type { CableLink, CablingProblem } from '../domain/cabling.js';
import type { NodeView } from '../domain/cabling-view.js';
import { matchLinks } from '../domain/cabling-map.js';
import { ParseError } from '../domain/errors.js';
import { printable } from '../domain/text.js';
import { readNodeView } from '../probes/cabling-read.js';
import { RemoteCommandError, TransportError, type CommandRunner } from '../transport/types.js';

export interface WatchedNode {
  name: string;
  runner: CommandRunner;
}

// What one node shows, or the problem that kept it from showing it: a node that cannot be reached, or whose cages
// cannot be listed, is a problem of the map, not the end of it (the other nodes' cables are watched).
async function viewOf(n: WatchedNode): Promise<NodeView | CablingProblem> {
  try {
    return await readNodeView(n.runner, n.name);
  } catch (e) {
    if (e instanceof TransportError)
      return {
        kind: 'unreachable',
        message: `${n.name}: not reachable (${e.message})`,
        fix: 'check the node is up and its SSH (cablequal preflight)',
        nodes: [n.name],
      };
    if (e instanceof RemoteCommandError || e instanceof ParseError)
      return {
        kind: 'cages-unread',
        message: `${n.name}: cannot list its cages (${printable(e.message)})`,
        fix: 'check that the mlx5 driver is loaded and ibdev2netdev works on the node',
        nodes: [n.name],
      };
    throw e;
  }
}

// Why a link of the map is not watched, or null when it is.
function unwatched(l: CableLink): CablingProblem | null {
  if (l.matchedBy === 'lldp')
    return {
      kind: 'switch-port',
      message: `${l.a.node}:${l.a.cage} is cabled to switch ${l.b.node} port ${l.b.port ?? '?'}: the watch reads both ends of a cable, and a switch's end is not read`,
      fix: 'watch the switch port on the switch; the Spark end is qualified in the lab (cablequal run)',
      nodes: [l.a.node],
      link: l.id,
    };
  const down = [l.a, l.b].filter((e) => e.state !== 'up');
  if (down.length > 0)
    return {
      kind: 'link-down',
      message: `cable ${l.serial ?? l.id} (${l.id}): link ${down.map((e) => `${e.node}:${e.cage} ${e.state}`).join(', ')} when the watch started; not watched`,
      fix: 'reseat the cable and start the watch again; if the link stays down, qualify the cable (cablequal run)',
      nodes: down.map((e) => e.node),
      link: l.id,
    };
  return null;
}

// Every cable between the watched nodes, and every problem met finding them.
export async function findCables(nodes: readonly WatchedNode[]): Promise<{ links: CableLink[]; problems: CablingProblem[] }> {
  const read = await Promise.all(nodes.map(viewOf));
  const views = read.filter((v): v is NodeView => 'ports' in v);
  const problems = read.filter((v): v is CablingProblem => !('ports' in v));
  const matched = matchLinks(views, []);
  problems.push(...matched.problems);
  const links: CableLink[] = [];
  for (const l of matched.links) {
    const why = unwatched(l);
    if (why) problems.push(why);
    else links.push(l);
  }
  return { links: links.sort((x, y) => (x.id < y.id ? -1 : 1)), problems };
}
