// `cablequal run --cluster`: every cable of a direct-cabled cluster of 2-8 Sparks qualified in place, from its
// cabling map (src/domain/cabling-rules.ts): the run refuses to start on a cabling problem, with the map's words; each
// cable is then one run between its two ends (its own journal, record, certificate and store row), all at once
// through the machinery of `--port both` (src/run/both-cages.ts runCables): the nodes taken once, each cable
// benchmarked alone, the soaks started together under one GPU load per node. The exit code is the worst cable's.
import type { CableLink, CablingMap, LinkEnd } from '../domain/cabling.js';
import { plannedPings } from '../domain/cabling-map.js';
import { buildCablingMap } from '../domain/cabling-rules.js';
import { clusterRanks } from '../domain/cluster-check.js';
import type { NodeView } from '../domain/cabling-view.js';
import { ParseError, UsageError } from '../domain/errors.js';
import type { NodeSpec } from '../domain/node.js';
import { printable } from '../domain/text.js';
import { readNodeView, runPings } from '../probes/cabling-read.js';
import { runCables } from '../run/both-cages.js';
import type { RunObservers } from '../store/run-observers.js';
import { RemoteCommandError, TransportError } from '../transport/types.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';
import { runPlannedCables, type CablePlan, type Prepared } from './run-both.js';
import { prepare, type RunArgs } from './run-command.js';

// The cluster's map as its nodes show it now, or the one line saying which node could not be read.
async function mapOf(prepared: Prepared): Promise<CablingMap | string> {
  const views: NodeView[] = [];
  for (const n of prepared.nodes) {
    try {
      views.push(await readNodeView(prepared.runners.get(n.name)!, n.name));
    } catch (e) {
      if (e instanceof TransportError || e instanceof RemoteCommandError || e instanceof ParseError) return `${n.name} could not be read: ${e.message}`;
      throw e;
    }
  }
  return buildCablingMap(views, await runPings(prepared.runners, plannedPings(views)));
}

// One cable's plan: its two ends as the run's two nodes, each at its cage.
function planOf(l: CableLink, prepared: Prepared, label: string | undefined): CablePlan {
  const at = (e: LinkEnd): NodeSpec => ({ ...prepared.nodes.find((n) => n.name === e.node)!, cage: e.cage });
  const ends = (e: LinkEnd) => ({ node: e.node, cage: e.cage });
  return {
    short: `${l.a.node}:${l.a.cage}-${l.b.node}:${l.b.cage}`,
    long: l.id,
    nodes: [at(l.a), at(l.b)],
    label: label !== undefined ? `${label}-${l.a.node}-${l.a.cage}-${l.b.node}-${l.b.cage}` : null,
    json: { link: l.id, a: ends(l.a), b: ends(l.b) },
  };
}

export async function runCluster(args: RunArgs, io: CliIo, signal: AbortSignal, observers: RunObservers): Promise<number> {
  if (args.port !== undefined) throw new UsageError('--cluster: leave --port out: the cabling map gives each cable its cages');
  if (args.dryRun) throw new UsageError('--cluster --dry-run: plan one cable with --dry-run --nodes a:0,b:1');
  const prepared = await prepare(args, io, 'run', observers);
  const closeAll = () => Promise.all([...prepared.runners.values()].map((r) => r.close().catch(() => undefined)));
  let map: CablingMap | string;
  try {
    map = await mapOf(prepared);
  } catch (e) {
    await closeAll();
    throw e;
  }
  const refuse = (lines: string[]) => {
    for (const l of lines) io.stderr(`${printable(l)}\n`);
    return closeAll().then(() => EXIT.error);
  };
  if (typeof map === 'string') return refuse([`cablequal: run --cluster: ${map}`]);
  if (map.problems.length > 0)
    return refuse([
      `cablequal: run --cluster: not started: the cabling of ${map.nodes.join(', ')} (${map.topology}) has ${map.problems.length} problem${map.problems.length === 1 ? '' : 's'} (cablequal cabling shows the map):`,
      ...map.problems.flatMap((p) => [`  ${p.kind}: ${p.message}`, `    fix: ${p.fix}`]),
    ]);
  if (map.topology === 'switch')
    return refuse([
      'cablequal: run --cluster: a switch cluster is mapped and checked (cablequal cabling) but not qualified by --cluster yet: qualify its cables two Sparks at a time through the switch with cablequal run --nodes a:1,b:1',
    ]);
  const plans = map.links.map((l) => planOf(l, prepared, args.label));
  return runPlannedCables(
    args,
    io,
    signal,
    observers,
    prepared,
    plans,
    (runs) =>
      runCables(
        {
          runs,
          cluster: {
            topology: map.topology,
            links: map.links.map((l) => l.id),
            // The cluster check's ranks: each node reached by the address --nodes gives it (mpirun runs on a node).
            check: { topology: map.topology, ranks: clusterRanks(map, (n) => prepared.nodes.find((x) => x.name === n)!.host) },
          },
          ...(args.breakLock ? { breakLock: true } : {}),
        },
        'cablequal run --cluster',
      ),
    {
      mode: 'cluster',
      topology: map.topology,
    },
  );
}
