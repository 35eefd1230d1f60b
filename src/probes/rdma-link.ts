import { ParseError } from '../domain/errors.js';

const KIND = 'rdma-link';

// One RDMA port as iproute2 reports it; netdev is null for ports without one (IB without IPoIB, some soft devices).
export interface RdmaLink {
  rdmaDevice: string;
  port: number;
  state: string; // e.g. ACTIVE, DOWN, INIT
  physicalState: string | null; // e.g. LINK_UP, DISABLED, POLLING; absent on some kernels
  netdev: string | null;
  attributes: Record<string, string>; // every key/value printed, including IB-only lid/sm_lid/subnet_prefix
}

// All ports `rdma link show` printed; an empty list is real when the devices are gone (Spark without a cable).
export interface RdmaLinkResult {
  links: RdmaLink[];
}

const HEAD = /^link (\S+)\/(\d+)(?:\s+(.*))?$/;
const KEY = /^[a-z][a-z0-9_]*$/;

// Parse `rdma link [show]` lines: `link rocep1s0f0/1 state ACTIVE physical_state LINK_UP netdev enp1s0f0np0`.
export function parseRdmaLink(text: string): RdmaLinkResult {
  const links: RdmaLink[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const line = lines[i]!.replace(/\r$/, '').trim();
    if (line === '') continue;
    const m = HEAD.exec(line);
    if (!m) throw new ParseError(KIND, n, `not an rdma link line ("link <dev>/<port> state ..."): "${line.slice(0, 80)}"`);
    const words = (m[3] ?? '').split(/\s+/).filter((w) => w !== '');
    if (words.length % 2 !== 0) throw new ParseError(KIND, n, 'attributes must come in "key value" pairs');
    const attributes: Record<string, string> = {};
    for (let k = 0; k < words.length; k += 2) {
      const key = words[k]!;
      if (!KEY.test(key)) throw new ParseError(KIND, n, `not an attribute name: "${key.slice(0, 40)}"`);
      if (Object.hasOwn(attributes, key)) throw new ParseError(KIND, n, `attribute "${key}" printed twice`);
      attributes[key] = words[k + 1]!;
    }
    const state = attributes['state'];
    if (state === undefined) throw new ParseError(KIND, n, 'no "state" attribute');
    links.push({
      rdmaDevice: m[1]!,
      port: Number(m[2]),
      state,
      physicalState: attributes['physical_state'] ?? null,
      netdev: attributes['netdev'] ?? null,
      attributes,
    });
  }
  return { links };
}
