// The read-only network commands a cabling map asks each simulated node (`ip -j addr`, `ping -I`, `lldpctl -f
// json0`, `printenv`), answered from the lab's wiring in the real tools' layouts: samples/ip-addr/, samples/ping/ and
// samples/lldpctl/ (constructed from each tool's source where no recording was found; their first lines say so).
import type { LabCore, SimRail } from './lab-core.js';
import { isSwitchPort } from './scenario.js';
import { streamId, uniform } from './prng.js';
import { err, ok, type Answer } from './programs-host.js';

// A netdev's MAC address (generated per node and function; the NVIDIA OUI as a CX-7's).
function macOf(core: LabCore, node: string, r: SimRail): string {
  const h = Math.floor(uniform(core.seed, streamId(node), 73) * 2 ** 16);
  const bytes = [0x4c, 0xbb, 0x47, (h >> 8) & 0xff, h & 0xff, r.cage * 2 + r.rail];
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join(':');
}

const FOREVER = 4294967295;

// One interface of `ip -j addr show` (iproute2 ip/ipaddress.c print_linkinfo and print_addrinfo in JSON): flags,
// MTU, operstate and its IPv4 address (the rail's, /24) on a cabled cage.
function ipJsonEntry(core: LabCore, node: string, r: SimRail): Record<string, unknown> {
  const up = core.linkUpAt(node, r.cage);
  const ip = core.railIpsAt(node, r.cage)?.[r.rail];
  const flags = up ? ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'] : ['NO-CARRIER', 'BROADCAST', 'MULTICAST', 'UP'];
  const addr = ip
    ? [
        {
          family: 'inet',
          local: ip,
          prefixlen: 24,
          broadcast: ip.replace(/\.\d+$/, '.255'),
          scope: 'global',
          label: r.netdev,
          valid_life_time: FOREVER,
          preferred_life_time: FOREVER,
        },
      ]
    : [];
  return {
    ifindex: r.ifindex,
    ifname: r.netdev,
    flags,
    mtu: core.mtuAt(node, r.cage),
    qdisc: 'mq',
    operstate: up ? 'UP' : 'DOWN',
    group: 'default',
    txqlen: 1000,
    link_type: 'ether',
    address: macOf(core, node, r),
    broadcast: 'ff:ff:ff:ff:ff:ff',
    addr_info: addr,
  };
}

// `ip -j addr show [dev <if>]` (`ip -j a`, `ip -j -4 addr`): lo, then the CX-7 functions in interface-index order.
export function ipJson(core: LabCore, node: string, argv: string[]): Answer {
  const di = argv.indexOf('dev');
  const iface = di >= 0 ? argv[di + 1] : undefined;
  const fns = [...core.functions(node)].sort((x, y) => x.ifindex - y.ifindex);
  const chosen = iface === undefined ? fns : fns.filter((f) => f.netdev === iface);
  if (iface !== undefined && chosen.length === 0) return err(`Device "${iface}" does not exist.\n`);
  const lo = {
    ifindex: 1,
    ifname: 'lo',
    flags: ['LOOPBACK', 'UP', 'LOWER_UP'],
    mtu: 65536,
    qdisc: 'noqueue',
    operstate: 'UNKNOWN',
    group: 'default',
    txqlen: 1000,
    link_type: 'loopback',
    address: '00:00:00:00:00:00',
    broadcast: '00:00:00:00:00:00',
    addr_info: [{ family: 'inet', local: '127.0.0.1', prefixlen: 8, scope: 'host', label: 'lo', valid_life_time: FOREVER, preferred_life_time: FOREVER }],
  };
  const entries = [...(iface === undefined ? [lo] : []), ...chosen.map((r) => ipJsonEntry(core, node, r))];
  return ok(`${JSON.stringify(entries)}\n`);
}

// Whether an address answers an echo sent out of a node's interface: the cable in that interface's cage reaches the
// address's owner on the same rail (directly, or through the switch every Spark's cable reaches), with the link up.
function answers(core: LabCore, node: string, from: SimRail, ip: string): boolean {
  const owner = core.ownerOf(ip);
  if (!owner || owner.rail !== from.rail || !core.linkUpAt(node, from.cage)) return false;
  const far = core.farEnd(node, from.cage);
  if (!far) return false;
  if (isSwitchPort(far)) {
    const theirs = core.farEnd(owner.node, owner.cage);
    return theirs !== null && isSwitchPort(theirs) && theirs.switch === far.switch && core.linkUpAt(owner.node, owner.cage);
  }
  return far.node === owner.node && far.cage === owner.cage;
}

// `ping -I <if> -c <n> [-W <s>] [-q] <addr>` in iputils' layout (ping/ping.c, ping_common.c: the PING line, one line
// per reply, the statistics); an address the interface cannot reach: "Destination Host Unreachable", exit 1.
export function ping(core: LabCore, node: string, argv: string[]): Answer {
  let iface: string | undefined;
  let count = 1;
  let quiet = false;
  let addr: string | undefined;
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i]!;
    if (w === '-I') iface = argv[++i];
    else if (w === '-c') count = Number(argv[++i]);
    else if (w === '-W' || w === '-w' || w === '-i') i++;
    else if (w === '-q') quiet = true;
    else if (!w.startsWith('-')) addr = w;
  }
  if (!addr) return err('ping: usage error: Destination address required\n', 2);
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(addr)) return err(`ping: ${addr}: Name or service not known\n`, 2);
  if (!Number.isInteger(count) || count < 1 || count > 100) return err(`ping: invalid argument: '${count}'\n`, 2);
  const from = iface === undefined ? core.functions(node)[0] : core.locate(node, iface);
  if (!from || (iface !== undefined && from.netdev !== iface)) return err(`ping: SO_BINDTODEVICE ${iface}: No such device\n`, 2);
  const src = core.railIpsAt(node, from.cage)?.[from.rail];
  if (!src) return err(`ping: connect: Network is unreachable\n`, 2);
  const head = `PING ${addr} (${addr}) from ${src} ${from.netdev}: 56(84) bytes of data.\n`;
  const ms = (i: number) => 0.08 + 0.06 * uniform(core.seed, streamId(node), 74, Math.floor(core.now()), i);
  const span = Math.max(0, count - 1) * 1000 + (count > 1 ? 2 : 0);
  if (answers(core, node, from, addr)) {
    const times = Array.from({ length: count }, (_x, i) => ms(i));
    const lines = quiet ? '' : times.map((t, i) => `64 bytes from ${addr}: icmp_seq=${i + 1} ttl=64 time=${t.toFixed(3)} ms\n`).join('');
    const avg = times.reduce((a, b) => a + b, 0) / count;
    const mdev = Math.sqrt(times.reduce((a, t) => a + (t - avg) ** 2, 0) / count);
    const rtt = `rtt min/avg/max/mdev = ${Math.min(...times).toFixed(3)}/${avg.toFixed(3)}/${Math.max(...times).toFixed(3)}/${mdev.toFixed(3)} ms\n`;
    return ok(`${head}${lines}\n--- ${addr} ping statistics ---\n${count} packets transmitted, ${count} received, 0% packet loss, time ${span}ms\n${rtt}`);
  }
  const lines = quiet ? '' : Array.from({ length: count }, (_x, i) => `From ${src} icmp_seq=${i + 1} Destination Host Unreachable\n`).join('');
  const tail = `\n--- ${addr} ping statistics ---\n${count} packets transmitted, 0 received, +${count} errors, 100% packet loss, time ${span}ms\n\n`;
  return { stdout: `${head}${lines}${tail}`, stderr: '', exitCode: 1 };
}

// `lldpctl -f json0` (lldpd src/client/json_writer.c with the json0 flag: every value an array of objects, whatever
// the number of interfaces or neighbours): the switch as the neighbour of each netdev whose cable reaches it (both
// functions of the port hear its advertisements). Not installed on a node whose scenario runs no lldpd.
export function lldpctl(core: LabCore, node: string, argv: string[]): Answer {
  if (!core.nodeSpec(node).lldpd) return err(`sh: 1: ${argv[0]}: not found\n`, 127);
  const fi = argv.indexOf('-f');
  if (fi < 0 || argv[fi + 1] !== 'json0') return err('lldpctl: only `lldpctl -f json0` is simulated\n', 1);
  const sw = core.spec.switch;
  const interfaces = [];
  for (const r of core.functions(node)) {
    const far = core.farEnd(node, r.cage);
    if (!sw || !far || !isSwitchPort(far) || !core.linkUpAt(node, r.cage)) continue;
    interfaces.push({
      name: r.netdev,
      via: 'LLDP',
      rid: String(interfaces.length + 1),
      age: '0 day, 00:42:17',
      chassis: [
        {
          id: [{ type: 'mac', value: sw.chassisMac }],
          name: [{ value: sw.name }],
          descr: [{ value: 'simulated switch (generated, not a machine)' }],
          capability: [
            { type: 'Bridge', enabled: true },
            { type: 'Router', enabled: false },
          ],
        },
      ],
      port: [{ id: [{ type: 'ifname', value: far.port }], descr: [{ value: far.port }], ttl: [{ value: '120' }] }],
    });
  }
  return ok(`${JSON.stringify({ lldp: [{ interface: interfaces }] }, null, 2)}\n`);
}

// `printenv <NAME>`: the non-interactive session's environment sets no NCCL variable (the run's own -x does).
export function printenv(argv: string[]): Answer {
  return argv.length > 1 ? { stdout: '', stderr: '', exitCode: 1 } : ok('PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n');
}
