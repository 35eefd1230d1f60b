// `cablequal cabling`: read every node (read-only), build the map, print it and each problem with its fix.
// Exit 0 when the cabling is right, 1 when a problem was found, 2 bad usage, 3 when a node could not be read.
import type { CablingMap } from '../domain/cabling.js';
import { plannedPings } from '../domain/cabling-map.js';
import { buildCablingMap } from '../domain/cabling-rules.js';
import type { NodeView } from '../domain/cabling-view.js';
import { ParseError, UsageError } from '../domain/errors.js';
import { printable } from '../domain/text.js';
import { readNodeView, runPings } from '../probes/cabling-read.js';
import { createLab } from '../sim/lab.js';
import { VirtualClock } from '../sim/virtual-clock.js';
import { RemoteCommandError, TransportError, type CommandRunner } from '../transport/types.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';
import { parseNodeList } from './run-command.js';
import { makeRunners } from './transports.js';

export interface CablingArgs {
  nodes?: string;
  sim?: string;
  seed?: number;
  simFault?: string[];
  json: boolean;
  sshConfig?: string;
  acceptNewHostKeys: boolean;
}

async function runnersOf(args: CablingArgs, io: CliIo): Promise<{ names: string[]; runners: Map<string, CommandRunner>; simulated: boolean }> {
  if (args.sim !== undefined) {
    const lab = createLab({
      scenario: args.sim,
      clock: new VirtualClock(),
      faults: args.simFault ?? [],
      ...(args.seed !== undefined ? { seed: args.seed } : {}),
    });
    const names = args.nodes ? args.nodes.split(',').map((n) => n.trim()) : lab.nodes;
    const stray = names.find((n) => !lab.nodes.includes(n));
    if (stray) throw new UsageError(`--nodes: no simulated node "${printable(stray)}" in ${args.sim} (its nodes: ${lab.nodes.join(', ')})`);
    return { names, runners: new Map(names.map((n) => [n, lab.runner(n)])), simulated: true };
  }
  if (!args.nodes) throw new UsageError('cabling: give --nodes a,b[,...] (2 to 8 nodes) or --sim <scenario>');
  if (args.simFault?.length || args.seed !== undefined) throw new UsageError('cabling: --sim-fault and --seed apply to the simulated lab only (--sim)');
  const nodes = parseNodeList(args.nodes, undefined);
  if (nodes.length < 2 || nodes.length > 8) throw new UsageError(`--nodes: a cluster has 2 to 8 nodes, got ${nodes.length}`);
  if (new Set(nodes.map((n) => n.name)).size !== nodes.length) throw new UsageError('--nodes: every node must be named once');
  const runners = await makeRunners(nodes, {
    acceptNewHostKeys: args.acceptNewHostKeys,
    env: io.env,
    ...(args.sshConfig ? { sshConfig: args.sshConfig } : {}),
    warn: (l) => io.stderr(`${l}\n`),
  });
  return { names: nodes.map((n) => n.name), runners, simulated: false };
}

// What went wrong reading a node, in one line, or null for an error that is not the node's.
function unreadable(e: unknown): string | null {
  if (e instanceof TransportError || e instanceof RemoteCommandError || e instanceof ParseError) return printable(e.message);
  return null;
}

export async function cablingCommand(args: CablingArgs, io: CliIo, _signal?: AbortSignal): Promise<number> {
  const { names, runners, simulated } = await runnersOf(args, io);
  try {
    const views: NodeView[] = [];
    for (const n of names) {
      try {
        views.push(await readNodeView(runners.get(n)!, n));
      } catch (e) {
        const why = unreadable(e);
        if (why === null) throw e;
        io.stderr(`cablequal cabling: ${printable(n)} could not be read: ${why}\n`);
        return EXIT.error;
      }
    }
    const map = buildCablingMap(views, await runPings(runners, plannedPings(views)));
    if (args.json) io.stdout(`${JSON.stringify(map)}\n`);
    else io.stdout(describeMap(map, simulated));
    return map.problems.length > 0 ? EXIT.fail : EXIT.ok;
  } finally {
    for (const r of runners.values()) await r.close();
  }
}

// The map as an operator reads it: one line per link, then each problem and its fix.
export function describeMap(map: CablingMap, simulated: boolean): string {
  const p = printable;
  const lines = [
    `cabling of ${map.nodes.length} nodes (${map.nodes.map(p).join(', ')})${simulated ? ', simulated lab' : ''}: ${map.topology}, ${map.links.length} link${map.links.length === 1 ? '' : 's'}`,
  ];
  for (const l of map.links) {
    const far = l.b.cage === -1 ? `${p(l.b.node)}:${p(l.b.port ?? '?')}` : `${p(l.b.node)}:${l.b.cage}`;
    const serial = l.serial ?? (l.a.serial || l.b.serial ? `${l.a.serial ?? '?'}/${l.b.serial ?? '?'}` : 'serial unread');
    const speed = l.a.speedMbps !== null ? `${l.a.speedMbps} Mb/s` : 'no speed';
    const lanes = l.a.lanes !== null ? `${l.a.lanes} lanes` : '';
    lines.push(
      `  ${p(l.a.node)}:${l.a.cage} -- ${far}  ${p(serial)} ${p(l.partNumber ?? l.a.partNumber ?? '?')}  ${speed}${lanes ? ` ${lanes}` : ''} ${l.a.state} (by ${l.matchedBy})`,
    );
  }
  if (map.problems.length === 0) lines.push('the cabling is right: no problem found');
  for (const pr of map.problems) {
    lines.push(`problem (${pr.kind}): ${p(pr.message)}`);
    lines.push(`  fix: ${p(pr.fix)}`);
  }
  return `${lines.join('\n')}\n`;
}
