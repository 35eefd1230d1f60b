// The simulated lab the run orchestrator and the CLI drive: two Sparks and one cable (or one per cage) in virtual (or
// real) time.
import type { Clock } from '../domain/clock.js';
import { UsageError } from '../domain/errors.js';
import type { CommandRunner } from '../transport/types.js';
import { parseFault, type Fault } from './faults.js';
import { LabCore } from './lab-core.js';
import type { LabEvent, SimNodeState } from './model.js';
import { loadScenario, listScenarios, secondCageIps, type ScenarioNode, type ScenarioSpec } from './scenario.js';
import type { ProcessInfo } from './sim-process.js';
import { SimRunner } from './sim-runner.js';

export { listScenarios };
export type { ScenarioSpec, LabEvent, SimNodeState, ProcessInfo, Fault };

export interface SimLab {
  readonly nodes: string[];
  readonly scenario: ScenarioSpec;
  readonly seed: number;
  readonly faults: Fault[];
  // Timeline so far (link drops, loads, reboots), in seconds since the lab was created.
  readonly events: LabEvent[];
  runner(node: string): CommandRunner;
  // Processes still running on a node (tests check that a run leaves nothing behind).
  processes(node: string): ProcessInfo[];
  // Snapshot of a node's physical state now, as the receiver of the cable in a cage (the first cable's by default).
  state(node: string, cage?: number): SimNodeState;
  // Seconds since the lab was created.
  timeS(): number;
  // Cable swaps (a batch campaign's operator): pull the cable (of one cage, or every cable), then plug another
  // scenario's cable into the same nodes (into a cage of a two-cable lab); `serial` overrides the simulated EEPROM
  // serial (generated, not a recording).
  unplug(cage?: number): void;
  plug(scenario: string, opts?: { serial?: string; cage?: number }): void;
  // The cable's scenario now (changes with plug()): the first cable's, or the one in a cage.
  readonly cable: ScenarioSpec;
  cableIn(cage: number): ScenarioSpec | null;
  // Someone at the node reboots it (`sudo systemctl reboot --no-block`): the operator of a manual-reboot batch.
  reboot(node: string): void;
}

export interface CreateLabOptions {
  scenario: string; // name under samples/scenarios/ or path to a .json file
  seed?: number;
  faults?: string[];
  clock: Clock;
  // Rename the two simulated nodes (several simulated pairs in one process).
  nodeNames?: [string, string];
  // The cage the cable is in on each node (e.g. --pair a:0,b:1): overrides the scenario's nodes' cage.
  cages?: [0 | 1 | undefined, 0 | 1 | undefined];
  // Override the simulated EEPROM serial of the first cable.
  serial?: string;
  // Each node's two rail addresses (a dry run mirrors real nodes' addresses): overrides the scenario's.
  railIps?: [[string, string], [string, string]];
  // Each node's interface names per cage, when known (a dry run mirrors real nodes' names).
  interfaces?: [ScenarioNode['interfaces'], ScenarioNode['interfaces']];
  // A second cable between the nodes, in another cage (a batch with --port both): another scenario's cable, with its
  // own serial when given; its rail addresses are two /24s above the first cable's.
  secondCable?: { scenario: string; serial?: string; cage: 0 | 1 };
  // Seconds a node told to reboot stays unreachable (the scenario's rebootS otherwise).
  rebootS?: number;
}

function withSerial(spec: ScenarioSpec, serial: string | undefined): ScenarioSpec {
  if (serial === undefined) return spec;
  return { ...spec, cable: { ...spec.cable, eeprom: { ...spec.cable.eeprom, vendorSn: serial } } };
}

// The scenario with its two nodes renamed; per-receiver lane curves follow their node (the second cable's too).
function renameNodes(spec: ScenarioSpec, names: [string, string]): ScenarioSpec {
  const rename = new Map(spec.nodes.map((n, i) => [n.name, names[i]!]));
  const renamed = (s: ScenarioSpec): ScenarioSpec => {
    const byReceiver = s.lanesByReceiver ? Object.fromEntries(Object.entries(s.lanesByReceiver).map(([k, v]) => [rename.get(k) ?? k, v])) : undefined;
    return {
      ...s,
      nodes: [
        { ...s.nodes[0], name: names[0] },
        { ...s.nodes[1], name: names[1] },
      ],
      ...(byReceiver ? { lanesByReceiver: byReceiver } : {}),
    };
  };
  const second = spec.secondCable;
  return { ...renamed(spec), ...(second ? { secondCable: { ...second, spec: renamed(second.spec) } } : {}) };
}

// Build a lab from a scenario; the same scenario, seed and command sequence always give the same outputs.
export function createLab(opts: CreateLabOptions): SimLab {
  let spec = withSerial(loadScenario(opts.scenario), opts.serial);
  if (opts.nodeNames) spec = renameNodes(spec, opts.nodeNames);
  if (opts.cages) {
    const [a, b] = opts.cages;
    spec = {
      ...spec,
      nodes: [
        { ...spec.nodes[0], ...(a !== undefined ? { cage: a } : {}) },
        { ...spec.nodes[1], ...(b !== undefined ? { cage: b } : {}) },
      ],
    };
  }
  if (opts.railIps) {
    const [a, b] = opts.railIps;
    spec = {
      ...spec,
      nodes: [
        { ...spec.nodes[0], railIps: a },
        { ...spec.nodes[1], railIps: b },
      ],
    };
  }
  if (opts.interfaces) {
    const [a, b] = opts.interfaces;
    spec = {
      ...spec,
      nodes: [
        { ...spec.nodes[0], ...(a ? { interfaces: a } : {}) },
        { ...spec.nodes[1], ...(b ? { interfaces: b } : {}) },
      ],
    };
  }
  if (opts.secondCable) {
    const { scenario, serial, cage } = opts.secondCable;
    const cable = withSerial(loadScenario(scenario), serial);
    spec = {
      ...spec,
      secondCable: {
        scenario,
        cage,
        railIps: secondCageIps(spec.nodes),
        expected: cable.expected,
        spec: renameNodes(cable, [spec.nodes[0].name, spec.nodes[1].name]),
      },
    };
  }
  if (opts.rebootS !== undefined) spec = { ...spec, rebootS: opts.rebootS };
  const seed = opts.seed ?? 1;
  const faults = (opts.faults ?? []).map(parseFault);
  const names = spec.nodes.map((n) => n.name);
  const stray = faults.find((f) => f.node !== null && !names.includes(f.node));
  if (stray) throw new UsageError(`fault "${stray.text}": no simulated node "${stray.node}" (nodes: ${names.join(', ')})`);
  const core = new LabCore(spec, seed, faults, opts.clock);
  core.rebootS = opts.rebootS;
  const runners = new Map<string, SimRunner>(spec.nodes.map((n) => [n.name, new SimRunner(core, n.name)]));
  const check = (node: string) => {
    if (!runners.has(node)) throw new Error(`no simulated node "${node}" (nodes: ${[...runners.keys()].join(', ')})`);
  };
  return {
    nodes: spec.nodes.map((n) => n.name),
    scenario: spec,
    seed,
    faults,
    get events() {
      core.reap();
      return [...core.model.events].sort((a, b) => a.tS - b.tS);
    },
    runner(node) {
      check(node);
      return runners.get(node)!;
    },
    processes(node) {
      check(node);
      return core.running(node).map((p) => p.info());
    },
    state(node, cage) {
      check(node);
      core.reap();
      return core.model.state(node, core.now(), cage);
    },
    timeS: () => core.now(),
    unplug: (cage) => core.unplug(cage),
    plug: (scenario, o = {}) => {
      // The lab's node names (a batch renames them): the cable's per-receiver lanes follow them.
      const cable = renameNodes(withSerial(loadScenario(scenario), o.serial), [core.spec.nodes[0].name, core.spec.nodes[1].name]);
      core.plug(cable, o.cage);
    },
    get cable() {
      return core.spec;
    },
    cableIn(cage) {
      return core.model.links.find((l) => l.cages.includes(cage))?.spec ?? null;
    },
    reboot(node) {
      check(node);
      core.model.requestReboot(node, core.now());
    },
  };
}
