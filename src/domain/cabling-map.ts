// The cabling map from what each node showed (pure): which cage meets which. A direct-attach cable reports the same
// EEPROM serial at both ends (matched by serial); a cage whose LLDP neighbour is a switch meets that switch's port
// (matched by lldp); ends left over are joined where a ping over a rail's own interface reached the other end's
// address (matched by ping: a cable whose two ends report different serials). The rules are cabling-rules.ts.
import { linkId, type CableLink, type CablingProblem, type LinkEnd } from './cabling.js';
import { addressOf, subnetOf, type NodeView, type PingView, type PortView } from './cabling-view.js';

export interface EndOf {
  end: LinkEnd;
  port: PortView;
}

// A cage as one end of a link.
export function linkEndOf(node: string, p: PortView): LinkEnd {
  return {
    node,
    cage: p.cage,
    serial: p.module?.serial ?? null,
    partNumber: p.module?.partNumber ?? null,
    vendor: p.module?.vendor ?? null,
    rails: p.rails.map((r) => ({ netdev: r.netdev, rdmaDevice: r.rdmaDevice, address: r.addresses[0] ?? null })),
    state: p.linkUp ? 'up' : p.module ? 'down' : 'no-module',
    speedMbps: p.speedMbps,
    lanes: p.lanes,
    fec: p.fec,
    mtu: p.rails[0]?.mtu ?? null,
  };
}

// The cages that hold a cable (a module answers, or the link is up), every node's in order.
export function cabledEnds(views: readonly NodeView[]): EndOf[] {
  return views.flatMap((v) => v.ports.filter((p) => p.module !== null || p.linkUp).map((p) => ({ end: linkEndOf(v.node, p), port: p })));
}

// The pings that confirm each rail's reachability: from each cabled end's rail to every other node's cabled rail of
// the same index in the same subnet (the rails a cable or a switch joins), once per pair.
export function plannedPings(views: readonly NodeView[]): { node: string; netdev: string; target: string }[] {
  const ends = cabledEnds(views);
  const out: { node: string; netdev: string; target: string }[] = [];
  for (const [i, x] of ends.entries())
    for (const y of ends.slice(i + 1)) {
      if (x.end.node === y.end.node) continue;
      x.port.rails.forEach((r, k) => {
        const there = y.port.rails[k]?.addresses[0];
        const here = r.addresses[0];
        if (here && there && subnetOf(here) === subnetOf(there)) out.push({ node: x.end.node, netdev: r.netdev, target: addressOf(there) });
      });
    }
  return out;
}

const key = (e: { node: string; cage: number }) => `${e.node}:${e.cage}`;

function linkOf(x: LinkEnd, y: LinkEnd, matchedBy: CableLink['matchedBy']): CableLink {
  const [a, b] = key(x) === linkId(x, y).split('--')[0] ? [x, y] : [y, x];
  const same = a.serial !== null && a.serial === b.serial;
  return {
    id: linkId(a, b),
    a,
    b,
    serial: same ? a.serial : null,
    partNumber: a.partNumber === b.partNumber ? a.partNumber : null,
    matchedBy,
  };
}

// The links, and the problems met while matching (an end whose far end is nowhere, two ends with different serials).
export function matchLinks(views: readonly NodeView[], pings: readonly PingView[]): { links: CableLink[]; problems: CablingProblem[] } {
  const ends = cabledEnds(views);
  const links: CableLink[] = [];
  const problems: CablingProblem[] = [];
  const used = new Set<string>();
  // A switch port heard over LLDP.
  for (const { end, port } of ends) {
    if (!port.lldp) continue;
    const sw = port.lldp.system ?? port.lldp.chassisId ?? 'switch';
    const far: LinkEnd = {
      node: sw,
      cage: -1,
      serial: null,
      partNumber: null,
      vendor: null,
      rails: [],
      state: end.state,
      speedMbps: null,
      lanes: null,
      fec: null,
      mtu: null,
      ...(port.lldp.port ? { port: port.lldp.port } : {}),
    };
    links.push({ id: `${key(end)}--${sw}:${port.lldp.port ?? '?'}`, a: end, b: far, serial: end.serial, partNumber: end.partNumber, matchedBy: 'lldp' });
    used.add(key(end));
  }
  // The same serial at exactly two ends, on two nodes.
  const bySerial = new Map<string, LinkEnd[]>();
  for (const { end } of ends) if (!used.has(key(end)) && end.serial) bySerial.set(end.serial, [...(bySerial.get(end.serial) ?? []), end]);
  for (const [serial, group] of bySerial) {
    if (group.length === 2 && group[0]!.node !== group[1]!.node) {
      links.push(linkOf(group[0]!, group[1]!, 'serial'));
      group.forEach((e) => used.add(key(e)));
    } else if (group.length > 2) {
      problems.push({
        kind: 'duplicate-serial',
        message: `serial ${serial} is reported at ${group.length} cages (${group.map(key).join(', ')}): a serial should name one cable`,
        fix: 'these are clones sharing one serial: label each cable; the map joins their ends by ping instead',
        nodes: [...new Set(group.map((e) => e.node))],
      });
    }
  }
  // Ends left over, joined where a ping over a rail's own interface reached the other end's address.
  const owner = new Map<string, LinkEnd>();
  for (const { end, port } of ends) for (const r of port.rails) for (const a of r.addresses) owner.set(addressOf(a), end);
  const byNetdev = new Map(ends.flatMap(({ end, port }) => port.rails.map((r) => [`${end.node}/${r.netdev}`, end] as const)));
  for (const p of pings) {
    if (!p.replied) continue;
    const x = byNetdev.get(`${p.node}/${p.netdev}`);
    const y = owner.get(p.target);
    if (!x || !y || used.has(key(x)) || used.has(key(y)) || x.node === y.node) continue;
    links.push(linkOf(x, y, 'ping'));
    used.add(key(x));
    used.add(key(y));
    if (x.serial && y.serial && x.serial !== y.serial) {
      problems.push({
        kind: 'serial-mismatch',
        message: `${key(x)} and ${key(y)} are joined (a ping over the rail answers) but their modules report different serials (${x.serial} and ${y.serial})`,
        fix: `one cable whose two ends disagree is a reprogrammed or mismatched assembly: label it and qualify it before use (cablequal run)`,
        nodes: [x.node, y.node],
        link: linkId(x, y),
      });
    }
  }
  for (const { end } of ends) {
    if (used.has(key(end))) continue;
    problems.push({
      kind: 'unmatched-end',
      message: `${key(end)} holds a cable (${end.serial ? `serial ${end.serial}` : 'serial unread'}, link ${end.state}) whose other end is on none of the nodes read`,
      fix: `plug its other end into the next node, or name that node in --nodes`,
      nodes: [end.node],
    });
  }
  return { links: links.sort((p, q) => (p.id < q.id ? -1 : p.id > q.id ? 1 : 0)), problems };
}
