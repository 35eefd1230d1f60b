// Which physical port and PCI function each netdev is, and which NIC each RDMA device belongs to, as the node's
// sysfs says (world-readable, no root): a netdev's `phys_port_name` (mlx5: `p<N>`, the QSFP port; udev appends it
// to the predictable name as `np<N>`), its PCI function (`device/uevent` PCI_SLOT_NAME, e.g. 0000:01:00.1) and the
// NIC's `sys_image_guid` (the same on all four functions of a Spark's ConnectX-7, docs/formats.md §0).
import { ParseError } from '../domain/errors.js';
import { clip } from './read.js';

const KIND = 'net-identity';

// What sysfs says about one netdev; null where the node printed nothing (attribute absent or unreadable).
export interface NetdevIdentity {
  pci: string | null; // domain:bus:device.function
  driver: string | null;
  physPortName: string | null;
}

export interface NetIdentity {
  netdevs: Map<string, NetdevIdentity>;
  sysImageGuid: Map<string, string>; // RDMA device -> NIC GUID
}

const NET = /^\/sys\/class\/net\/([^/\s]+)\/(phys_port_name|device\/uevent):(.*)$/;
const IB = /^\/sys\/class\/infiniband\/([^/\s]+)\/sys_image_guid:(.*)$/;
const PCI = /^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$/;
const TOKEN = /^[A-Za-z0-9_.:-]{1,64}$/;

// Parse `grep -H . /sys/class/net/*/phys_port_name /sys/class/net/*/device/uevent /sys/class/infiniband/*/sys_image_guid`.
// Values are untrusted: a PCI address or port name of the wrong shape is left out (null), never used.
export function parseNetIdentity(text: string): NetIdentity {
  const out: NetIdentity = { netdevs: new Map(), sysImageGuid: new Map() };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line.trim() === '') continue;
    const ib = IB.exec(line);
    if (ib) {
      const guid = ib[2]!.trim();
      if (TOKEN.test(guid)) out.sysImageGuid.set(ib[1]!, guid);
      continue;
    }
    const m = NET.exec(line);
    if (!m) throw new ParseError(KIND, i + 1, `not a "/sys/class/net/<if>/<attribute>:<value>" line: ${clip(line)}`);
    const [, netdev, attr, raw] = m as unknown as [string, string, string, string];
    let id = out.netdevs.get(netdev);
    if (!id) out.netdevs.set(netdev, (id = { pci: null, driver: null, physPortName: null }));
    const value = raw.trim();
    if (attr === 'phys_port_name') {
      if (TOKEN.test(value)) id.physPortName = value;
      continue;
    }
    const kv = /^([A-Z_]+)=(.*)$/.exec(value);
    if (!kv) continue; // uevent lines are KEY=value; anything else is not ours to read
    if (kv[1] === 'PCI_SLOT_NAME' && PCI.test(kv[2]!)) id.pci = kv[2]!.toLowerCase();
    if (kv[1] === 'DRIVER' && TOKEN.test(kv[2]!)) id.driver = kv[2]!;
  }
  return out;
}

// The PCIe domain of a PCI address (0000:01:00.1 => 0), or null.
export function pciDomain(pci: string | null | undefined): number | null {
  const m = pci ? /^([0-9a-f]{4,8}):/i.exec(pci) : null;
  return m ? parseInt(m[1]!, 16) : null;
}

// The PCI function number of a PCI address (0000:01:00.1 => 1), or null.
export function pciFunction(pci: string | null | undefined): number | null {
  const m = pci ? /\.([0-7])$/.exec(pci) : null;
  return m ? Number(m[1]) : null;
}
