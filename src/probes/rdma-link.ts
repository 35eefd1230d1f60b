import { ParseError } from '../domain/errors.js';
import type { Ibdev2netdevLink } from './ibdev2netdev.js';

const KIND = 'rdma-link';

// Which layout the rdma tool printed: `link <dev>/<port> ...` (iproute2 since 5.5, 2019), or `<index>/<port>:
// <dev>/<port>: ...` (iproute2 before 5.5 and the rdma tool that vendor driver packages of that era shipped).
// docs/formats.md §7; samples/rdma-link/.
export type RdmaLinkLayout = 'link-keyword' | 'index-prefix';

// One RDMA port as iproute2 reports it; netdev is null for ports without one (IB without IPoIB, some soft devices,
// and every port of the rdma tools before iproute2 4.18, which printed no netdev).
export interface RdmaLink {
  rdmaDevice: string;
  port: number;
  state: string; // e.g. ACTIVE, DOWN, INIT
  physicalState: string | null; // e.g. LINK_UP, DISABLED, POLLING, NOP (iWARP); absent on some kernels
  netdev: string | null;
  attributes: Record<string, string>; // every key/value printed, including IB-only lid/sm_lid/subnet_prefix
  deviceIndex?: number; // the RDMA device index the index-prefix layout prints first
}

// All ports `rdma link show` printed; an empty list is real when the devices are gone (Spark without a cable).
export interface RdmaLinkResult {
  links: RdmaLink[];
  layout?: RdmaLinkLayout; // absent when no port was printed
}

const HEAD = /^link (\S+)\/(\d+)(?:\s+(.*))?$/;
const INDEXED = /^(\d+)\/(\d+): (\S+)\/(\d+):(?:\s+(.*))?$/;
const KEY = /^[a-z][a-z0-9_]*$/;

// Parse `rdma link [show]` in either layout: `link rocep1s0f0/1 state ACTIVE physical_state LINK_UP netdev enp1s0f0np0`
// or `2/1: mlx5_0/1: state ACTIVE physical_state LINK_UP netdev ens803f0`; one output is in one layout.
export function parseRdmaLink(text: string): RdmaLinkResult {
  const links: RdmaLink[] = [];
  let layout: { name: RdmaLinkLayout; line: number } | null = null;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const line = lines[i]!.replace(/\r$/, '').trim();
    if (line === '') continue;
    const m = HEAD.exec(line);
    const old = m ? null : INDEXED.exec(line);
    if (!m && !old) {
      throw new ParseError(
        KIND,
        n,
        `not an rdma link line ("link <dev>/<port> state ..." or "<index>/<port>: <dev>/<port>: state ..."): "${line.slice(0, 80)}"`,
      );
    }
    const name: RdmaLinkLayout = m ? 'link-keyword' : 'index-prefix';
    if (layout && layout.name !== name)
      throw new ParseError(KIND, n, `a ${name} line, but line ${layout.line} was ${layout.name}: one rdma tool's output per text`);
    layout ??= { name, line: n };
    if (old && old[2] !== old[4]) throw new ParseError(KIND, n, `port ${old[2]} before the device and ${old[4]} after it differ`);
    const words = ((m ? m[3] : old![5]) ?? '').split(/\s+/).filter((w) => w !== '');
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
      rdmaDevice: m ? m[1]! : old![3]!,
      port: Number(m ? m[2] : old![4]),
      state,
      physicalState: attributes['physical_state'] ?? null,
      netdev: attributes['netdev'] ?? null,
      attributes,
      ...(old && { deviceIndex: Number(old[1]) }),
    });
  }
  return { links, ...(layout && { layout: layout.name }) };
}

// The ports with a netdev in ibdev2netdev's terms, for placing rails in cages where ibdev2netdev is not installed:
// Up when the port is ACTIVE with its physical link up (ibdev2netdev reads the netdev's carrier, which follows it).
export function railLinksOfRdma(result: RdmaLinkResult): Ibdev2netdevLink[] {
  return result.links.flatMap((l) =>
    l.netdev === null
      ? []
      : [
          {
            rdmaDevice: l.rdmaDevice,
            port: l.port,
            netdev: l.netdev,
            state: l.state === 'ACTIVE' && (l.physicalState ?? 'LINK_UP') === 'LINK_UP' ? 'Up' : 'Down',
          },
        ],
  );
}
