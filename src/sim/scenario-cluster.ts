// A cluster scenario (2-8 Sparks, `cables`): each cable another scenario's cable between two Spark cages, or from a
// Spark cage to a switch port. Loaded here: each node's own rail addresses and cage become those of its first cable
// (what a one-cable reading of the node sees first), each cable's per-receiver lanes follow its two ends.
import { UsageError } from '../domain/errors.js';
import { isSwitchPort, type CableEndSpec, type ClusterCable, type ScenarioNode, type ScenarioSpec, type SwitchPortSpec } from './scenario.js';

type Load = (nameOrPath: string) => ScenarioSpec;
type Validate = (raw: unknown, where: string) => ScenarioSpec;
type RawCable = Omit<ClusterCable, 'spec' | 'expected'> & { expected?: ClusterCable['expected'] };

// The cable's scenario with its two nodes' names replaced by its ends' (a switch end keeps the scenario's second
// name: no receiver of the lab is there).
function onEnds(spec: ScenarioSpec, ends: ClusterCable['ends']): ScenarioSpec {
  const names = [ends[0].node, isSwitchPort(ends[1]) ? spec.nodes[1].name : ends[1].node];
  const rename = new Map(spec.nodes.map((n, i) => [n.name, names[i] ?? n.name]));
  const byReceiver = spec.lanesByReceiver ? Object.fromEntries(Object.entries(spec.lanesByReceiver).map(([k, v]) => [rename.get(k) ?? k, v])) : undefined;
  const serialByNode = spec.cable.serialByNode
    ? Object.fromEntries(Object.entries(spec.cable.serialByNode).map(([k, v]) => [rename.get(k) ?? k, v]))
    : undefined;
  return {
    ...spec,
    cable: { ...spec.cable, ...(serialByNode ? { serialByNode } : {}) },
    ...(byReceiver ? { lanesByReceiver: byReceiver } : {}),
  };
}

export function loadCluster(raw: Record<string, unknown>, label: string, load: Load, validate: Validate): ScenarioSpec {
  const fail = (what: string): never => {
    throw new UsageError(`${label}: ${what}`);
  };
  const nodes = (raw['nodes'] ?? []) as Partial<ScenarioNode>[];
  const names = nodes.map((n) => n.name);
  const sw = raw['switch'] as ScenarioSpec['switch'];
  const cables = raw['cables'] as RawCable[];
  if (cables.length === 0) fail('cables: a cluster needs at least one cable');
  const taken = new Set<string>();
  const ips = new Set<string>();
  const firstEnd = new Map<string, CableEndSpec>();
  for (const [i, c] of cables.entries()) {
    const where = `cables[${i}]`;
    for (const [k, e] of c.ends.entries()) {
      if (isSwitchPort(e)) {
        if (k === 0) fail(`${where}: the switch port is the second end`);
        if (!sw || sw.name !== e.switch) fail(`${where}: switch "${(e as SwitchPortSpec).switch}" is not the scenario's switch`);
        continue;
      }
      if (!names.includes(e.node)) fail(`${where}: no node "${e.node}" (nodes: ${names.join(', ')})`);
      const cage = `${e.node}:${e.cage}`;
      if (taken.has(cage)) fail(`${where}: ${e.node} cage ${e.cage} already holds a cable`);
      taken.add(cage);
      for (const ip of e.railIps) {
        if (ips.has(ip)) fail(`${where}: address ${ip} is given twice: every rail needs an address of its own`);
        ips.add(ip);
      }
      if (!firstEnd.has(e.node)) firstEnd.set(e.node, e);
    }
  }
  const lonely = names.find((n) => n !== undefined && !firstEnd.has(n));
  if (lonely) fail(`nodes[${lonely}]: no cable reaches it`);
  // Each node as a one-cable reading sees it: its first cable's cage and addresses.
  const filled = nodes.map((n) => ({ ...n, railIps: firstEnd.get(n.name!)!.railIps, cage: firstEnd.get(n.name!)!.cage }));
  const spec = validate({ ...raw, nodes: filled }, label);
  const loaded: ClusterCable[] = cables.map((c, i) => {
    let cable = load(c.scenario);
    if (cable.secondCable || cable.cables) fail(`cables[${i}]: ${c.scenario} has more than one cable itself: name a one-cable scenario`);
    if (c.serial !== undefined) cable = { ...cable, cable: { ...cable.cable, eeprom: { ...cable.cable.eeprom, vendorSn: c.serial } } };
    let onCable = onEnds(cable, c.ends);
    if (c.serialByEnd) {
      const [a, b] = c.serialByEnd;
      const far = isSwitchPort(c.ends[1]) ? onCable.nodes[1].name : c.ends[1].node;
      onCable = { ...onCable, cable: { ...onCable.cable, serialByNode: { [c.ends[0].node]: a, [far]: b } } };
    }
    return { ...c, expected: c.expected ?? cable.expected, spec: onCable };
  });
  // The bench's own cable fields are the first cable's (what a one-cable reading of the lab, and its name, sees).
  return { ...spec, cable: loaded[0]!.spec.cable, cables: loaded, ...(sw ? { switch: sw } : {}) };
}
