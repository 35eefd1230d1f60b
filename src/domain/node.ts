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
