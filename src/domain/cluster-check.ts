// The cluster check of `run --cluster`: one NCCL collective across every node of the cluster, as NVIDIA's cluster
// setup script runs it to accept a cluster (dgx-spark-playbooks, spark_cluster_setup.py: `mpirun -np N -H ... -x
// NCCL_IB_SUBNET_AWARE_ROUTING=1 [-x NCCL_NET_PLUGIN=none on the 3-node ring] all_gather_perf -b 16G -e 16G -f 2`,
// its `# Avg bus bandwidth` held to 21.875 GB/s, 10 GB/s on the 3-node ring, a miss only warned of), with the
// environment the topology needs (../shared/CLUSTERS.md). It runs once, before the soaks, and every cable's journal
// keeps it. It is the cluster's figure, not a cable's: it never grades a cable (each cable is graded on its own
// benchmarks and its own two receivers); every output states it beside the cable's verdict.
import type { CablingMap, Topology } from './cabling.js';

// One rank of the collective: a node, the address the launching node reaches it by, the RoCE devices its rank lists.
export interface ClusterRank {
  node: string;
  host: string;
  devices: string[];
}

// What the run journals (a `cluster-check` line in every cable's journal): what ran and what it printed. The figures
// are read from the raw text by the record builder, never taken from the line.
export interface ClusterCheckLine {
  topology: Topology;
  collective: 'all_gather_perf';
  ranks: ClusterRank[];
  env: Record<string, string>;
  command: string;
  launcher: string; // the node mpirun ran on
  exitCode: number | null;
  stdout: string;
  stderr: string;
  stopped?: string; // why the run stopped it before it ended (timeout, aborted, decision)
}

// The record's reading of it: the figures parsed from the raw text, and what kept it from giving one.
export interface ClusterCheckRecord {
  topology: Topology;
  collective: 'all_gather_perf';
  nodes: string[];
  env: Record<string, string>;
  command: string;
  busbwGBs: number | null; // nccl-tests' `# Avg bus bandwidth`, GB/s (1e9 bytes/s)
  ranks: { node: string; network: string | null; devices: string[] }[];
  problem: string | null; // why there is no figure to hold to the limit (a failed launch, a rank on TCP, ...)
}

// The limit a topology's cluster check is held to, and where it comes from.
export interface ClusterLimit {
  minBusbwGBs: number;
  source: string;
}

// NVIDIA's script: 21.875 GB/s (175 Gb/s) for direct and switch clusters, 10 GB/s (80 Gb/s) for its "ring topology",
// which it detects as 3 nodes with 4 interfaces up (the triangle). A direct ring of 4 or more is wired as the triangle
// is (two neighbours per node, one per cage) and NVIDIA's script sets none for it: the triangle's figure is used (inferred).
export function clusterLimit(topology: Topology, nodes: number): ClusterLimit {
  if (topology === 'triangle' || (topology === 'ring' && nodes === 3))
    return { minBusbwGBs: 10, source: "NVIDIA's cluster setup (spark_cluster_setup.py) for the 3-node ring" };
  if (topology === 'ring')
    return { minBusbwGBs: 10, source: "the 3-node ring's figure of NVIDIA's cluster setup (it sets none for a direct ring of 4 or more)" };
  return { minBusbwGBs: 21.875, source: `NVIDIA's cluster setup (spark_cluster_setup.py) for ${topology === 'switch' ? 'a switch' : 'a direct'} cluster` };
}

// The environment each rank gets on a topology: NVIDIA's for every cluster (subnet-aware routing), plus the ring's
// (NCCL_ALGO=Ring: NCCL's own choice may connect non-neighbours and time out; NCCL_IB_MERGE_NICS=0; no net plugin)
// and the 3-node mesh's (every RoCE device listed, NCCL_CROSS_NIC=1) from the community's cluster setups
// (eugr/spark-vllm-docker cluster_topology.py; sparkrun #157).
export function clusterEnv(topology: Topology): Record<string, string> {
  const env: Record<string, string> = { NCCL_DEBUG: 'INFO', NCCL_IB_SUBNET_AWARE_ROUTING: '1' };
  if (topology === 'triangle') Object.assign(env, { NCCL_CROSS_NIC: '1', NCCL_NET_PLUGIN: 'none' });
  if (topology === 'ring') Object.assign(env, { NCCL_ALGO: 'Ring', NCCL_IB_MERGE_NICS: '0', NCCL_NET_PLUGIN: 'none' });
  return env;
}

// Each node's rank from the cabling map: the RoCE devices of its cabled ports that are up, cage 0 first and rail 0
// first in each (the list the map checks NCCL_IB_HCA against), reached by the address hostOf gives.
// On a ring the ranks go round it, each next to its neighbours by cable (NCCL_ALGO=Ring follows the rank order).
export function clusterRanks(map: CablingMap, hostOf: (node: string) => string): ClusterRank[] {
  return ringOrder(map).map((node) => ({
    node,
    host: hostOf(node),
    devices: map.links
      .flatMap((l) => [l.a, l.b])
      .filter((e) => e.node === node && e.state === 'up')
      .sort((x, y) => x.cage - y.cage)
      .flatMap((e) => e.rails.map((r) => r.rdmaDevice)),
  }));
}

// The nodes round the ring from the first, each followed by a neighbour not yet taken; the map's order otherwise (or
// when the links do not close a ring).
function ringOrder(map: CablingMap): string[] {
  if (map.topology !== 'ring' && map.topology !== 'triangle') return map.nodes;
  const order = [map.nodes[0]!];
  while (order.length < map.nodes.length) {
    const last = order.at(-1)!;
    const next = map.links.map((l) => (l.a.node === last ? l.b.node : l.b.node === last ? l.a.node : null)).find((n) => n !== null && !order.includes(n));
    if (!next) return map.nodes;
    order.push(next);
  }
  return order;
}

// Words that go on the mpirun line as they are: host names, addresses and device names of a node's own tools.
const PLAIN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

// Why a rank cannot go on a command line (a name read from a node is untrusted), or null.
export function rankProblem(r: ClusterRank): string | null {
  if (!PLAIN.test(r.host)) return `${r.node}'s address ${JSON.stringify(r.host)} is not a plain host name or address`;
  const bad = r.devices.find((d) => !PLAIN.test(d));
  if (bad !== undefined) return `${r.node} reported a RoCE device named ${JSON.stringify(bad)}, not a plain device name`;
  if (r.devices.length === 0) return `${r.node} has no cabled port that is up: no RoCE device for its rank`;
  return null;
}

// The mpirun line: one OpenMPI application context per node (each rank its own NCCL_IB_HCA), the launcher's rank
// first, as NVIDIA's script runs all_gather_perf; the bootstrap goes over the addresses the nodes reach each other by.
export function clusterCommand(ranks: readonly ClusterRank[], env: Record<string, string>): string {
  const vars = Object.entries(env).map(([k, v]) => `-x ${k}=${v}`);
  const contexts = ranks.map((r) =>
    ['-np 1', `-H ${r.host}:1`, '-x LD_LIBRARY_PATH', `-x NCCL_IB_HCA=${r.devices.join(',')}`, ...vars, 'all_gather_perf -b 16G -e 16G -f 2'].join(' '),
  );
  return `mpirun ${contexts.join(' : ')}`;
}

const fmt = (x: number) => String(Number(x.toFixed(3)));

// The one sentence every output states of a cable's cluster check, and whether the cluster met its limit (null: no
// figure to hold to it).
export function clusterCheckText(c: ClusterCheckRecord): { met: boolean | null; limit: ClusterLimit; text: string } {
  const limit = clusterLimit(c.topology, c.nodes.length);
  const what = `cluster check (${c.topology}, ${c.nodes.length} nodes: ${c.nodes.join(', ')}): ${c.collective}`;
  const figure = c.busbwGBs === null ? null : `bus bandwidth ${fmt(c.busbwGBs)} GB/s (${fmt(c.busbwGBs * 8)} Gb/s)`;
  if (c.problem !== null || figure === null || c.busbwGBs === null) {
    const why = c.problem ?? 'no "# Avg bus bandwidth" line';
    const stated = figure ? `${figure}, not held to its limit: ${why}` : `gave no figure: ${why}`;
    return { met: null, limit, text: `${what} ${stated}; the cables' own verdicts stand` };
  }
  const met = c.busbwGBs >= limit.minBusbwGBs;
  const held = `at least ${fmt(limit.minBusbwGBs)} GB/s by ${limit.source}`;
  return {
    met,
    limit,
    text: met ? `${what} ${figure}, ${held}: met` : `${what} ${figure}, below ${held}: missed (NVIDIA's setup only warns; each cable is graded on its own)`,
  };
}
