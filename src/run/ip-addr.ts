import { ParseError } from '../domain/errors.js';

// An IPv4 address with its prefix length, as `ip addr` prints it (192.168.100.10/24).
export interface Ipv4 {
  address: string;
  prefixLength: number;
}

// The first IPv4 address of a rail's netdev from `ip -o -4 addr show dev <if>`, with its prefix; null when it has none.
export function parseIpv4(text: string): Ipv4 | null {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  for (const [i, line] of lines.entries()) {
    const m = /^\d+:\s+\S+\s+inet\s+(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})\b/.exec(line);
    if (m && m[1]!.split('.').every((o) => Number(o) <= 255) && Number(m[2]) <= 32) return { address: m[1]!, prefixLength: Number(m[2]) };
    if (!/^\d+:\s/.test(line)) throw new ParseError('ip-addr', i + 1, `not an "ip -o addr" line: ${line.slice(0, 60)}`);
  }
  return null;
}

// The IPv4 address of a rail's netdev from `ip -o -4 addr show dev <if>` (first address; null when it has none).
export function parseIpAddr(text: string): string | null {
  return parseIpv4(text)?.address ?? null;
}

// The network an address is in, in CIDR notation (192.168.100.10/24 -> 192.168.100.0/24): what OpenMPI's
// *_if_include parameters accept to name the same link on nodes whose interface names differ.
export function subnetOf(ip: Ipv4): string {
  const n = ip.address.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
  const block = 2 ** (32 - ip.prefixLength);
  const net = Math.floor(n / block) * block;
  return `${[24, 16, 8, 0].map((s) => Math.floor(net / 2 ** s) % 256).join('.')}/${ip.prefixLength}`;
}
