import { ParseError } from '../domain/errors.js';
import { cageIndexOfNetdev, type Cage, type Rail } from '../domain/node.js';

const KIND = 'ibdev2netdev';

// Carrier of the netdev as ibdev2netdev reads it from /sys/class/net/<if>/carrier.
export type NetdevState = 'Up' | 'Down' | 'NA';

// One RDMA device port and its netdev; the -v form adds PCI address, firmware and IB port state.
export interface Ibdev2netdevLink {
  rdmaDevice: string;
  port: number;
  netdev: string;
  state: NetdevState;
  pci?: string; // e.g. 0000:01:00.0 (-v only)
  mtId?: string; // e.g. 4129 from (MT4129 - ...) (-v only)
  partId?: string; // board part number or NA (-v only)
  description?: string; // may be empty (-v only)
  fw?: string; // (-v only)
  portState?: string; // IB port state, e.g. ACTIVE, DOWN (-v only)
}

// All links ibdev2netdev printed; an empty list is real (a Spark removes the devices when no cable is in).
export interface Ibdev2netdevResult {
  links: Ibdev2netdevLink[];
}

// A rail with the carrier state of its netdev.
export interface RailLink extends Rail {
  state: NetdevState;
}

// A cage with both rails' states; `up` only when both rails carry, which is what a cable test needs.
export interface CageLinks extends Cage {
  rails: [RailLink, RailLink];
  up: boolean;
}

const PLAIN = /^(\S+) port (\d+) ==> (\S+) \((Up|Down|NA)\)$/;
const VERBOSE = /^(\S+) (\S+) \(MT(\w+) - ([^)]*)\)\s*(.*?)\s*\bfw (\S+) port (\d+) \((\w+)\s*\) ==> (\S+) \((Up|Down|NA)\)(?: \(\S+\))?$/;

// Parse `ibdev2netdev` or `ibdev2netdev -v`; device order is locale-dependent, so keep it as printed.
export function parseIbdev2netdev(text: string): Ibdev2netdevResult {
  const links: Ibdev2netdevLink[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '').trim();
    if (line === '') continue;
    const p = PLAIN.exec(line);
    if (p) {
      links.push({ rdmaDevice: p[1]!, port: Number(p[2]), netdev: p[3]!, state: p[4] as NetdevState });
      continue;
    }
    const v = VERBOSE.exec(line);
    if (v) {
      links.push({
        rdmaDevice: v[2]!,
        port: Number(v[7]),
        netdev: v[9]!,
        state: v[10] as NetdevState,
        pci: v[1]!,
        mtId: v[3]!,
        partId: v[4]!.trim(),
        description: v[5]!,
        fw: v[6]!,
        portState: v[8]!,
      });
      continue;
    }
    throw new ParseError(KIND, i + 1, `not an ibdev2netdev line ("<dev> port <n> ==> <netdev> (Up|Down|NA)"): "${line.slice(0, 80)}"`);
  }
  return { links };
}

// PCIe domain of a rail: from the -v PCI address when known, else from the netdev name (enP2p1s0... => 2, enp1s0... => 0).
function domainOf(link: Ibdev2netdevLink): number {
  const pci = link.pci ? /^([0-9a-fA-F]{4,}):/.exec(link.pci) : null;
  if (pci) return parseInt(pci[1]!, 16);
  const m = /^enP(\d+)p/.exec(link.netdev);
  return m ? Number(m[1]) : 0;
}

// Group a Spark's RDMA devices into cages (f<N>np<M> => cage N), rails PCIe domain 0000 first; netdevs without
// that pattern are not Spark cage rails and are left out. A cage must have exactly two rails.
export function cagesFromLinks(links: Ibdev2netdevLink[]): CageLinks[] {
  const byCage = new Map<number, Ibdev2netdevLink[]>();
  for (const link of links) {
    const cage = cageIndexOfNetdev(link.netdev);
    if (cage === null) continue;
    const list = byCage.get(cage) ?? [];
    if (list.some((l) => l.netdev === link.netdev)) throw new ParseError(KIND, 1, `netdev ${link.netdev} listed twice`);
    list.push(link);
    byCage.set(cage, list);
  }
  return [...byCage.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, list]) => {
      if (list.length !== 2) {
        throw new ParseError(KIND, 1, `cage ${index} has ${list.length} rail(s) (${list.map((l) => l.netdev).join(', ')}); a Spark cage has 2`);
      }
      const [a, b] = [...list].sort((x, y) => domainOf(x) - domainOf(y) || x.netdev.localeCompare(y.netdev)) as [Ibdev2netdevLink, Ibdev2netdevLink];
      if (domainOf(a) === domainOf(b)) {
        throw new ParseError(KIND, 1, `cage ${index}: ${a.netdev} and ${b.netdev} are on the same PCIe domain; expected one rail per domain`);
      }
      const rail = (l: Ibdev2netdevLink): RailLink => ({ netdev: l.netdev, rdmaDevice: l.rdmaDevice, state: l.state });
      return { index, rails: [rail(a), rail(b)], up: a.state === 'Up' && b.state === 'Up' };
    });
}
