// The simulated lab the run orchestrator and the CLI drive: two Sparks and one cable in virtual (or real) time.
import type { Clock } from '../domain/clock.js';
import type { CommandRunner } from '../transport/types.js';
import { parseFault, type Fault } from './faults.js';
import { LabCore } from './lab-core.js';
import type { LabEvent, NodeState } from './model.js';
import { loadScenario, listScenarios, type ScenarioSpec } from './scenario.js';
import type { ProcessInfo } from './sim-process.js';
import { SimRunner } from './sim-runner.js';

export { listScenarios };
export type { ScenarioSpec, LabEvent, NodeState, ProcessInfo, Fault };

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
  // Snapshot of a node's physical state now.
  state(node: string): NodeState;
  // Seconds since the lab was created.
  timeS(): number;
}

export interface CreateLabOptions {
  scenario: string; // name under samples/scenarios/ or path to a .json file
  seed?: number;
  faults?: string[];
  clock: Clock;
}

// Build a lab from a scenario; the same scenario, seed and command sequence always give the same outputs.
export function createLab(opts: CreateLabOptions): SimLab {
  const spec = loadScenario(opts.scenario);
  const seed = opts.seed ?? 1;
  const faults = (opts.faults ?? []).map(parseFault);
  const core = new LabCore(spec, seed, faults, opts.clock);
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
    state(node) {
      check(node);
      core.reap();
      return core.model.state(node, core.now());
    },
    timeS: () => core.now(),
  };
}
