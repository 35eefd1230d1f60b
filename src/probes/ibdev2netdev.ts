import { ParseError } from '../domain/errors.js';
import type { Cage, Rail } from '../domain/node.js';
import { pciDomain, pciFunction, type NetIdentity } from './net-identity.js';

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

// One function placed by what the node says about it.
interface Placed {
  link: Ibdev2netdevLink;
  pci: string | null;
  domain: number | null;
}

// Group a node's RDMA devices into cages by what the node itself says about each function, never by its name: the
// physical port (phys_port_name `p<N>`, else the PCI function number N) within one NIC (sys_image_guid, else the PCI
// bus and device), two functions on two PCIe domains per cage, domain 0000 first. A function the node says nothing
// about, and a lone function of another NIC, are left out; a cage missing a rail is a ParseError.
export function cagesFromLinks(links: Ibdev2netdevLink[], identity: NetIdentity): CageLinks[] {
  const seen = new Set<string>();
  const groups = new Map<string, { nic: string; port: number; members: Placed[] }>();
  for (const link of links) {
    if (seen.has(link.netdev)) throw new ParseError(KIND, 1, `netdev ${link.netdev} listed twice`);
    seen.add(link.netdev);
    const id = identity.netdevs.get(link.netdev);
    const pci = id?.pci ?? link.pci?.toLowerCase() ?? null;
    const named = id?.physPortName ? /^p(\d+)$/.exec(id.physPortName) : null;
    const port = named ? Number(named[1]) : pciFunction(pci);
    if (port === null) continue;
    const nic = identity.sysImageGuid.get(link.rdmaDevice) ?? (pci ? `pci ${pci.replace(/^[0-9a-f]+:/, '').replace(/\.\d$/, '')}` : 'unknown NIC');
    const key = `${nic}|${port}`;
    const g = groups.get(key) ?? { nic, port, members: [] };
    g.members.push({ link, pci, domain: pciDomain(pci) });
    groups.set(key, g);
  }
  const complete = [...groups.values()].filter((g) => g.members.length === 2);
  const cages: CageLinks[] = [];
  for (const g of groups.values()) {
    const names = g.members.map((m) => m.link.netdev).join(', ');
    if (g.members.length === 1) {
      if (complete.some((c) => c.nic === g.nic)) throw new ParseError(KIND, 1, `cage ${g.port} has 1 rail(s) (${names}); a Spark cage has 2`);
      continue;
    }
    if (g.members.length > 2) throw new ParseError(KIND, 1, `cage ${g.port} has ${g.members.length} functions (${names}); a Spark cage has 2`);
    const [a, b] = [...g.members].sort((x, y) => (x.domain ?? 0) - (y.domain ?? 0)) as [Placed, Placed];
    if (a.domain === null || b.domain === null || a.domain === b.domain) {
      throw new ParseError(
        KIND,
        1,
        `cage ${g.port}: ${names} are not on two PCIe domains (PCI ${a.pci ?? 'unknown'}, ${b.pci ?? 'unknown'}); expected one rail per domain`,
      );
    }
    if (cages.some((c) => c.index === g.port)) throw new ParseError(KIND, 1, `two NICs have a port ${g.port}: cannot tell which is the Spark's`);
    const rail = (m: Placed): RailLink => ({ netdev: m.link.netdev, rdmaDevice: m.link.rdmaDevice, state: m.link.state, ...(m.pci ? { pci: m.pci } : {}) });
    cages.push({ index: g.port, rails: [rail(a), rail(b)], up: a.link.state === 'Up' && b.link.state === 'Up' });
  }
  return cages.sort((x, y) => x.index - y.index);
}

// How a cage's rails look, for messages: `cage 1: enp1s0f1np1 Up, enP2p1s0f1np1 Down`.
function describeCages(cages: CageLinks[]): string {
  return cages.map((c) => `cage ${c.index}: ${c.rails.map((r) => `${r.netdev} ${r.state}`).join(', ')}`).join('; ') || 'no cage found';
}

// The cage a cable test uses: the one named, or with `auto` the only one whose two rails are Up (two cables in: name it).
export function pickCage(cages: CageLinks[], want: number | 'auto'): { cage: CageLinks } | { problem: string } {
  if (want !== 'auto') {
    const cage = cages.find((c) => c.index === want);
    return cage ? { cage } : { problem: `cage ${want} not found (${describeCages(cages)})` };
  }
  const up = cages.filter((c) => c.up);
  if (up.length === 1) return { cage: up[0]! };
  if (up.length === 0) return { problem: `no cage has both rails Up (${describeCages(cages)})` };
  return {
    problem: `cages ${up.map((c) => c.index).join(' and ')} all have both rails Up: name the cage of the cable under test (--port, or --nodes a:N,b:M)`,
  };
}
