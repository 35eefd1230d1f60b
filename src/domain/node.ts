// One PCIe function of a cage: on a Spark every QSFP cage appears twice, once per PCIe x4 link ("rail").
export interface Rail {
  netdev: string; // e.g. enp1s0f1np1
  rdmaDevice: string; // e.g. rocep1s0f1
  pci?: string; // the PCI function, e.g. 0000:01:00.1 (as the node reported it)
}

// A physical QSFP port (cage) with its two rails, as discovered by ibdev2netdev on the node.
export interface Cage {
  index: number; // 0 or 1 on a Spark
  rails: [Rail, Rail];
}

// What a node *is* (labgrid's resource): how to reach it and which cage the cable is in.
export interface NodeSpec {
  name: string; // label used in reports and logs
  host: string; // ssh host or alias (ignored by local and simulated transports)
  user?: string;
  sshPort?: number;
  cage: number | 'auto';
}

// Each end of the cable: the node and the cage it is plugged into.
export interface CableEnd {
  node: string;
  cage: number;
}

// The ends when they sit in different cages (the triangle wiring's a:0,b:1), else null. Allowed, recorded and said:
// NVIDIA's connect-two-sparks instructions use the same physical port on both nodes "to prevent issues with NCCL tests".
export function differentCages(ends: readonly CableEnd[]): CableEnd[] | null {
  return ends.length === 2 && ends[0]!.cage !== ends[1]!.cage ? ends.map((e) => ({ ...e })) : null;
}

// The one line an operator is told (and the certificate shows) when the ends sit in different cages.
export function differentCagesWarning(ends: readonly CableEnd[]): string {
  return `the cable's two ends are in different cages (${ends.map((e) => `${e.node} cage ${e.cage}`).join(', ')}): allowed and recorded, but NVIDIA's connect-two-sparks instructions use the same port on both nodes "to prevent issues with NCCL tests"`;
}
