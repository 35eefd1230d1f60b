// `ip -j addr show` (iproute2 ip/ipaddress.c in JSON; samples/ip-addr/): each interface's name, MTU, operstate and
// IPv4 addresses. Pure; every string is untrusted (names checked, addresses by shape).
import { ParseError } from '../domain/errors.js';

const KIND = 'ip-json';

export interface IpInterface {
  ifname: string;
  mtu: number | null;
  up: boolean;
  addresses: string[]; // a.b.c.d/len
}

const IFNAME = /^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,31}$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

export function parseIpJson(text: string): IpInterface[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ParseError(KIND, 1, `not JSON: ${(e as Error).message.slice(0, 80)}`);
  }
  if (!Array.isArray(raw)) throw new ParseError(KIND, 1, 'expected a JSON array of interfaces');
  return raw.map((x, i) => {
    const o = x as { ifname?: unknown; mtu?: unknown; operstate?: unknown; flags?: unknown; addr_info?: unknown };
    if (typeof o?.ifname !== 'string' || !IFNAME.test(o.ifname)) throw new ParseError(KIND, 1, `interface ${i}: no readable ifname`);
    const info = Array.isArray(o.addr_info) ? (o.addr_info as { family?: unknown; local?: unknown; prefixlen?: unknown }[]) : [];
    const addresses = info
      .filter((a) => a?.family === 'inet' && typeof a.local === 'string' && IPV4.test(a.local) && Number.isInteger(a.prefixlen))
      .map((a) => `${String(a.local)}/${Number(a.prefixlen)}`);
    const flags = Array.isArray(o.flags) ? o.flags : [];
    return {
      ifname: o.ifname,
      mtu: typeof o.mtu === 'number' && Number.isInteger(o.mtu) ? o.mtu : null,
      up: o.operstate === 'UP' || (flags.includes('LOWER_UP') && flags.includes('UP')),
      addresses,
    };
  });
}
