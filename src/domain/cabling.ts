// The cabling of a cluster of 2-8 Sparks: which cage of which node meets which, as `cablequal cabling` maps it, `run
// --cluster` qualifies it and `cablequal watch` watches it in service. One shape for the three, declared here once:
// the map is built by the cabling step and read by the others (a run of two nodes with --port both is the map of two
// nodes with two links).

// How the nodes are wired. 'pair': two nodes, one or two direct cables; 'triangle': three nodes, port 0 of each to
// port 1 of the next; 'ring': four or more nodes, the same rule around; 'switch': every Spark cabled to a switch;
// 'unknown': none of these (a problem of the map says why).
export type Topology = 'pair' | 'triangle' | 'ring' | 'switch' | 'unknown';

// What one end of a link showed: its node and cage, the cable's identity read from that end's module EEPROM, and the
// port's state. Null where the node could not say.
export interface LinkEnd {
  node: string;
  cage: number;
  serial: string | null;
  partNumber: string | null;
  vendor: string | null;
  // Each rail (PCIe function) of the cage: its netdev, RoCE device and IPv4 address (with prefix length).
  rails: { netdev: string; rdmaDevice: string; address: string | null }[];
  state: 'up' | 'down' | 'no-module';
  speedMbps: number | null;
  lanes: number | null;
  fec: string | null;
  mtu: number | null;
  // At a switch: the switch port's name as LLDP gives it (cage is -1 there).
  port?: string;
}

// One cable of the cluster. `a` is the end that sorts first (node name, then cage); `id` names it in every output:
// "<a.node>:<a.cage>--<b.node>:<b.cage>". On a switch cluster `b` is the switch's port (node: the switch's system
// name, cage: -1) and only `a` is a Spark receiver.
export interface CableLink {
  id: string;
  a: LinkEnd;
  b: LinkEnd;
  serial: string | null; // the serial both ends report (a direct cable); null when they differ or are unread
  partNumber: string | null;
  // How the two ends were matched: the same EEPROM serial at both ends, an LLDP neighbour, or a ping over the rail.
  matchedBy: 'serial' | 'lldp' | 'ping';
}

// A problem of the cabling, with what to do about it: kind is a stable code (e.g. 'miswired', 'mtu-mismatch').
export interface CablingProblem {
  kind: string;
  message: string;
  fix: string;
  nodes: string[];
  link?: string; // the CableLink id it concerns
}

export interface CablingMap {
  topology: Topology;
  nodes: string[];
  links: CableLink[];
  problems: CablingProblem[];
}

// The id of a link between two ends, the same whichever end is named first.
export function linkId(x: { node: string; cage: number }, y: { node: string; cage: number }): string {
  const [a, b] = [x, y].sort((p, q) => (p.node === q.node ? p.cage - q.cage : p.node < q.node ? -1 : 1));
  return `${a!.node}:${a!.cage}--${b!.node}:${b!.cage}`;
}
