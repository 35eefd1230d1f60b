// What one node showed a cabling map (`cablequal cabling`): each cage's module identity, link and rails, the node's
// NCCL device list and its LLDP neighbours, and the pings between rails. Plain data, read by probes/cabling-read.ts
// through a CommandRunner and turned into the map by the pure functions of cabling-map.ts and cabling-rules.ts.

// One rail (PCIe function) of a cage: its netdev and RoCE device, carrier, IPv4 addresses (a.b.c.d/len) and MTU.
export interface RailView {
  netdev: string;
  rdmaDevice: string;
  up: boolean;
  addresses: string[];
  mtu: number | null;
}

// One cage (QSFP port) of a node.
export interface PortView {
  cage: number;
  rails: RailView[]; // rail 0 (PCIe domain 0000) first
  // The module's EEPROM identity; null when no module answers (an empty cage).
  module: { serial: string | null; partNumber: string | null; vendor: string | null } | null;
  linkUp: boolean;
  speedMbps: number | null;
  lanes: number | null;
  fec: string | null;
  // The LLDP neighbour heard on this cage's netdevs (`lldpctl -f json0`), when lldpd runs and hears one.
  lldp: { system: string | null; chassisId: string | null; port: string | null } | null;
}

// The NCCL_IB_HCA list a node's ranks would use, and where it comes from; null devices: none set (NCCL takes every
// active RoCE device).
export interface NcclView {
  source: string; // 'environment', '/etc/nccl.conf', '~/.nccl.conf' or 'default'
  devices: string[] | null;
}

export interface NodeView {
  node: string;
  ports: PortView[];
  nccl: NcclView;
}

// One ping over a rail's own interface (`ping -I <netdev> -c N <address>`): did the address answer.
export interface PingView {
  node: string;
  netdev: string;
  target: string;
  replied: boolean;
}

// The address part of an a.b.c.d/len, and the subnet it lies in (a.b.c.d/len with host bits cleared).
export function addressOf(cidr: string): string {
  return cidr.split('/')[0]!;
}

export function subnetOf(cidr: string): string | null {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr);
  if (!m) return null;
  const len = Number(m[5]);
  const n = m.slice(1, 5).reduce((a, o) => a * 256 + Number(o), 0);
  const block = 2 ** (32 - len);
  const base = Math.floor(n / block) * block;
  return `${[24, 16, 8, 0].map((s) => Math.floor(base / 2 ** s) % 256).join('.')}/${len}`;
}
