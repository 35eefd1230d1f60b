// The wiring rules of a cluster over its map (pure), each problem with its fix. Sources (CLUSTERS.md): two Sparks use
// the same port at both ends (NVIDIA's helper scripts expect it); a triangle and a ring join port 0 of each node to
// port 1 of the next (NVIDIA connect-multiple-sparks, dgx-spark-playbooks); on a switch every Spark uses the same
// port number, and the switch runs Spark ports at 100G unless forced to 200G-baseCR4 (multi-sparks-through-switch);
// equal addresses or subnets on two rails cause ARP flux; an MTU differing between two ends stalls RoCE; NCCL pairs
// NCCL_IB_HCA devices by position across ranks (getainode/ainode #84), so a list must hold every cabled device, no
// other, in an order that pairs the same cable.
import type { CableLink, CablingMap, CablingProblem, Topology } from './cabling.js';
import { addressOf, subnetOf, type NodeView, type PingView } from './cabling-view.js';
import { matchLinks } from './cabling-map.js';

const SPARK_SPEED_MBPS = 200000;
const end = (node: string, cage: number) => `${node} cage ${cage}`;

// The map of a cluster: its links, the topology they form and every problem found.
export function buildCablingMap(views: readonly NodeView[], pings: readonly PingView[]): CablingMap {
  const { links, problems } = matchLinks(views, pings);
  const nodes = views.map((v) => v.node);
  const { topology, problems: wiring } = topologyOf(nodes, links);
  return {
    topology,
    nodes,
    links,
    problems: [...problems, ...wiring, ...linkProblems(links, pings, topology), ...addressProblems(views), ...ncclProblems(views, links, topology)],
  };
}

function topologyOf(nodes: readonly string[], links: readonly CableLink[]): { topology: Topology; problems: CablingProblem[] } {
  const toSwitch = links.filter((l) => l.b.cage === -1);
  if (toSwitch.length > 0) return { topology: 'switch', problems: switchProblems(links, toSwitch) };
  if (links.length === 0)
    return {
      topology: 'unknown',
      problems: [
        {
          kind: 'no-links',
          message: 'no cable joins any two of the nodes read',
          fix: 'check each cable is seated at both ends (ibdev2netdev: Up)',
          nodes: [...nodes],
        },
      ],
    };
  if (nodes.length === 2) return { topology: 'pair', problems: pairProblems(links) };
  const degree = new Map(nodes.map((n) => [n, links.filter((l) => l.a.node === n || l.b.node === n).length]));
  const cycle = cycleOf(nodes, links);
  if (!cycle) {
    const short = nodes.filter((n) => degree.get(n)! < 2);
    return {
      topology: 'unknown',
      problems: [
        {
          kind: 'topology',
          message: `the ${links.length} cables do not form a ${nodes.length === 3 ? 'triangle' : 'ring'} of the ${nodes.length} nodes${short.length ? ` (${short.map((n) => `${n} has ${degree.get(n)} cable${degree.get(n) === 1 ? '' : 's'}`).join(', ')})` : ''}`,
          fix: `cable port 0 of each node to port 1 of the next, the last back to the first (${[...nodes, nodes[0]].join(' -> ')})`,
          nodes: short.length ? short : [...nodes],
        },
      ],
    };
  }
  return { topology: nodes.length === 3 ? 'triangle' : 'ring', problems: ringProblems(cycle, links, nodes.length === 3 ? 'triangle' : 'ring') };
}

// The nodes in ring order when every node has exactly two cables to two others and they close one cycle; else null.
function cycleOf(nodes: readonly string[], links: readonly CableLink[]): string[] | null {
  if (links.length !== nodes.length) return null;
  const next = (n: string, from: string | null) =>
    links
      .filter((l) => l.a.node === n || l.b.node === n)
      .map((l) => (l.a.node === n ? l.b.node : l.a.node))
      .filter((m) => m !== from);
  const order = [nodes[0]!];
  let prev: string | null = null;
  while (order.length < nodes.length) {
    const cur: string = order[order.length - 1]!;
    const options = next(cur, prev).filter((m) => !order.includes(m));
    if (options.length === 0) return null;
    prev = cur;
    order.push(options[0]!);
  }
  const closes = links.some((l) => (l.a.node === order[0] && l.b.node === order.at(-1)) || (l.b.node === order[0] && l.a.node === order.at(-1)));
  return closes && nodes.every((n) => links.filter((l) => l.a.node === n || l.b.node === n).length === 2) ? order : null;
}

const cageAt = (l: CableLink, node: string) => (l.a.node === node ? l.a.cage : l.b.cage);
const between = (links: readonly CableLink[], x: string, y: string) =>
  links.find((l) => (l.a.node === x && l.b.node === y) || (l.a.node === y && l.b.node === x))!;

// Port 0 of each node to port 1 of the next: a link joining two ports of one number is miswired; the fix is the
// fewest nodes whose two cables to swap (one orientation of the ring or the other).
function ringProblems(order: string[], links: readonly CableLink[], what: string): CablingProblem[] {
  const bad = links.filter((l) => l.a.cage === l.b.cage);
  if (bad.length === 0) return [];
  const k = order.length;
  const swapsFor = (dir: 1 | -1) =>
    order.filter((n, i) => {
      const nxt = order[(i + dir + k) % k]!;
      return cageAt(between(links, n, nxt), n) !== 0;
    });
  const fwd = swapsFor(1);
  const back = swapsFor(-1);
  const swaps = back.length < fwd.length ? back : fwd;
  const fix = swaps.map((n) => `swap the two cables at ${n} (cage 0 <-> cage 1)`).join('; ');
  return bad.map((l) => ({
    kind: 'miswired',
    message: `${l.id} joins port ${l.a.cage} to port ${l.b.cage}: a ${what} joins port 0 of each node to port 1 of the next (NVIDIA connect-multiple-sparks); NCCL across these nodes fails in ibv_modify_qp (error 110), naming no cable`,
    fix,
    nodes: swaps,
    link: l.id,
  }));
}

// Two Sparks: the same port number at both ends of each cable.
function pairProblems(links: readonly CableLink[]): CablingProblem[] {
  const bad = links.filter((l) => l.a.cage !== l.b.cage);
  if (bad.length === 0) return [];
  const crossed = bad.length === 2;
  return bad.map((l) => ({
    kind: 'miswired',
    message: `${l.id} joins port ${l.a.cage} to port ${l.b.cage}: two Sparks use the same port at both ends (NVIDIA's helper scripts expect it)`,
    fix: crossed ? `swap the two cables at ${l.b.node} (cage 0 <-> cage 1)` : `move the cable at ${end(l.b.node, l.b.cage)} to ${end(l.b.node, l.a.cage)}`,
    nodes: [l.b.node],
    link: l.id,
  }));
}

// A switch cluster: every Spark on one port number, no direct cable beside it, each port at 200G.
function switchProblems(links: readonly CableLink[], toSwitch: readonly CableLink[]): CablingProblem[] {
  const out: CablingProblem[] = [];
  const direct = links.filter((l) => l.b.cage !== -1);
  for (const l of direct)
    out.push({
      kind: 'mixed',
      message: `${l.id} is a direct cable in a switch cluster: do not mix direct cables and a switch in one cluster (NVIDIA connect-multiple-sparks)`,
      fix: `cable ${end(l.a.node, l.a.cage)} and ${end(l.b.node, l.b.cage)} to the switch instead, or remove the cable`,
      nodes: [l.a.node, l.b.node],
      link: l.id,
    });
  const count = [0, 1].map((c) => toSwitch.filter((l) => l.a.cage === c).length);
  const want = count[0]! > count[1]! ? 0 : 1;
  for (const l of toSwitch) {
    if (l.a.cage !== want)
      out.push({
        kind: 'mixed-ports',
        message: `${l.a.node} reaches the switch on port ${l.a.cage}, the other Sparks on port ${want}: every Spark on a switch uses the same port number`,
        fix: `move the cable at ${end(l.a.node, l.a.cage)} to ${end(l.a.node, want)}`,
        nodes: [l.a.node],
        link: l.id,
      });
    if (l.a.state === 'up' && l.a.speedMbps !== null && l.a.speedMbps < SPARK_SPEED_MBPS)
      out.push({
        kind: 'speed',
        message: `${l.id} runs at ${l.a.speedMbps} Mb/s: switches run Spark ports at 100G unless forced`,
        fix: `force switch port ${l.b.port ?? '?'} to 200G-baseCR4 with autoneg off (NVIDIA multi-sparks-through-switch)`,
        nodes: [l.a.node],
        link: l.id,
      });
  }
  return out;
}

// Per cable: both rails up at each end at the cable's speed, equal MTU at both ends, each rail reaching the other end.
function linkProblems(links: readonly CableLink[], pings: readonly PingView[], topology: Topology): CablingProblem[] {
  const out: CablingProblem[] = [];
  for (const l of links) {
    const ends = l.b.cage === -1 ? [l.a] : [l.a, l.b];
    for (const e of ends) {
      if (e.state !== 'up') {
        out.push({
          kind: 'link-down',
          message: `${end(e.node, e.cage)} holds the cable ${l.id} but its link is down`,
          fix: `reseat the cable at both ends of ${l.id}; \`ethtool ${e.rails[0]?.netdev ?? '<netdev>'}\` should say Link detected: yes`,
          nodes: [e.node],
          link: l.id,
        });
        continue;
      }
      if (l.b.cage !== -1 && e.speedMbps !== null && e.speedMbps < SPARK_SPEED_MBPS)
        out.push({
          kind: 'speed',
          message: `${end(e.node, e.cage)} runs ${l.id} at ${e.speedMbps} Mb/s: a Spark's 200G cable trains at ${SPARK_SPEED_MBPS}`,
          fix: `reseat the cable; if it stays below 200G, qualify it (cablequal run) or replace it`,
          nodes: [e.node],
          link: l.id,
        });
    }
    if (l.b.cage !== -1 && l.a.mtu !== null && l.b.mtu !== null && l.a.mtu !== l.b.mtu) {
      const [lo, hi] = l.a.mtu < l.b.mtu ? [l.a, l.b] : [l.b, l.a];
      out.push({
        kind: 'mtu-mismatch',
        message: `${l.id}: MTU ${l.a.mtu} at ${l.a.node}, ${l.b.mtu} at ${l.b.node}: RoCE stalls when the two ends differ`,
        fix: `set the same MTU at both ends, e.g. at ${lo.node}: ${lo.rails.map((r) => `sudo ip link set dev ${r.netdev} mtu ${hi.mtu}`).join('; ')} (${topology === 'triangle' ? 'NVIDIA uses 1500 on a triangle' : 'NVIDIA uses 9000 between two direct nodes'})`,
        nodes: [lo.node],
        link: l.id,
      });
    }
    if (l.b.cage === -1) continue;
    l.a.rails.forEach((r, i) => {
      const there = l.b.rails[i]?.address;
      if (!r.address || !there) return;
      const tried = pings.filter((p) => p.node === l.a.node && p.netdev === r.netdev && p.target === addressOf(there));
      if (tried.length > 0 && !tried.some((p) => p.replied))
        out.push({
          kind: 'rail-unreachable',
          message: `${l.a.node} ${r.netdev} does not reach ${l.b.node} ${addressOf(there)} over its own interface (ping -I)`,
          fix: `check the addresses and routes of rail ${i} at both ends (ip addr; a firewall dropping ICMP shows the same)`,
          nodes: [l.a.node, l.b.node],
          link: l.id,
        });
    });
  }
  return out;
}

// Addresses: each cabled rail has one; no address on two rails; a subnet per rail of a node (equal ones: ARP flux).
function addressProblems(views: readonly NodeView[]): CablingProblem[] {
  const out: CablingProblem[] = [];
  const seen = new Map<string, string>();
  for (const v of views) {
    const subnets = new Map<string, string>();
    for (const p of v.ports) {
      if (!p.linkUp) continue;
      for (const r of p.rails) {
        if (r.addresses.length === 0) {
          out.push({
            kind: 'no-address',
            message: `${v.node} ${r.netdev} (cage ${p.cage}) is up with no IPv4 address`,
            fix: `give ${r.netdev} an address in a subnet of its own (netplan)`,
            nodes: [v.node],
          });
          continue;
        }
        for (const a of r.addresses) {
          const where = `${v.node} ${r.netdev}`;
          const other = seen.get(addressOf(a));
          if (other)
            out.push({
              kind: 'duplicate-address',
              message: `${addressOf(a)} is on ${other} and on ${where}`,
              fix: `give each rail an address of its own`,
              nodes: [v.node, other.split(' ')[0]!],
            });
          else seen.set(addressOf(a), where);
          const sn = subnetOf(a);
          const twin = sn ? subnets.get(sn) : undefined;
          if (sn && twin && twin !== r.netdev)
            out.push({
              kind: 'shared-subnet',
              message: `${v.node}: ${twin} and ${r.netdev} are both in ${sn}: two rails in one subnet cause ARP flux`,
              fix: `put each rail of ${v.node} in a subnet of its own`,
              nodes: [v.node],
            });
          else if (sn) subnets.set(sn, r.netdev);
        }
      }
    }
  }
  return out;
}

// Each node's NCCL device list: every RoCE device of its cabled ports and no other; on a pair or a switch, position
// i of every node's list is the same rail of the same cable (NCCL pairs devices by position across ranks).
function ncclProblems(views: readonly NodeView[], links: readonly CableLink[], topology: Topology): CablingProblem[] {
  const out: CablingProblem[] = [];
  const order: { node: string; seq: string[]; explicit: boolean }[] = [];
  for (const v of views) {
    const cabled = links.flatMap((l) => [l.a, l.b]).filter((e) => e.node === v.node && e.state === 'up');
    const active = cabled.sort((x, y) => x.cage - y.cage).flatMap((e) => e.rails.map((r) => r.rdmaDevice));
    const listed = v.nccl.devices;
    if (listed) {
      const missing = active.filter((d) => !listed.includes(d));
      const extra = listed.filter((d) => !active.includes(d));
      if (missing.length)
        out.push({
          kind: 'nccl-missing-device',
          message: `${v.node}'s NCCL_IB_HCA (${v.nccl.source}) lacks ${missing.join(', ')} of a cabled port`,
          fix: `list every RoCE device of the cabled ports in NCCL_IB_HCA: ${active.join(',')}`,
          nodes: [v.node],
        });
      if (extra.length)
        out.push({
          kind: 'nccl-extra-device',
          message: `${v.node}'s NCCL_IB_HCA (${v.nccl.source}) names ${extra.join(', ')}, down or on no cable: NCCL tries it against the peer and times out in ibv_modify_qp`,
          fix: `list only the devices of the cabled ports in NCCL_IB_HCA: ${active.join(',')}`,
          nodes: [v.node],
        });
    }
    const seq = (listed ?? active).map((d) => {
      const e = cabled.find((x) => x.rails.some((r) => r.rdmaDevice === d));
      const rail = e ? e.rails.findIndex((r) => r.rdmaDevice === d) : -1;
      const link = e ? links.find((l) => l.a === e || l.b === e)! : null;
      return topology === 'switch' ? `rail ${rail}` : `${link ? link.id : '?'} rail ${rail}`;
    });
    order.push({ node: v.node, seq, explicit: listed !== null });
  }
  if (topology !== 'pair' && topology !== 'switch') return out;
  const ref = order.find((o) => !o.explicit) ?? order[0];
  for (const o of order) {
    if (!ref || o === ref || !o.explicit || o.seq.length !== ref.seq.length) continue;
    if (o.seq.some((s, i) => s !== ref.seq[i]))
      out.push({
        kind: 'nccl-order',
        message: `${o.node}'s NCCL_IB_HCA (${views.find((v) => v.node === o.node)!.nccl.source}) does not pair with ${ref.node}'s list position by position: ${o.seq
          .map((s, i) => (s === ref.seq[i] ? null : `position ${i} is ${s} at ${o.node}, ${ref.seq[i]} at ${ref.node}`))
          .filter(Boolean)
          .join('; ')}; NCCL pairs the devices by position across ranks`,
        fix: `order ${o.node}'s NCCL_IB_HCA as ${ref.node}'s, rail 0 first: ${reorder(views, o.node, ref.seq, links, topology).join(',')}`,
        nodes: [o.node],
      });
  }
  return out;
}

// A node's devices in the order of another node's sequence (the same cable and rail at each position).
function reorder(views: readonly NodeView[], node: string, seq: string[], links: readonly CableLink[], topology: Topology): string[] {
  const v = views.find((x) => x.node === node)!;
  return seq.map((s) => {
    const rail = Number(/rail (-?\d+)$/.exec(s)?.[1] ?? -1);
    const id = s.replace(/ rail -?\d+$/, '');
    const l = topology === 'switch' ? links.find((x) => x.a.node === node) : links.find((x) => x.id === id);
    const e = l ? (l.a.node === node ? l.a : l.b) : null;
    return e?.rails[rail]?.rdmaDevice ?? v.ports[0]?.rails[rail]?.rdmaDevice ?? '?';
  });
}
