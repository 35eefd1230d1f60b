import { join, relative } from 'node:path';
import type { Clock } from '../domain/clock.js';
import type { NodeSpec } from '../domain/node.js';
import { CABLE_VERDICTS, type Outcome } from '../domain/outcome.js';
import type { RunRecord } from '../domain/record.js';
import type { Phase, Protocol } from '../protocol/index.js';
import { readRunRecord, regressRecords } from '../report/index.js';
import { reasonLine } from '../report/summary-lines.js';
import { qualificationShortfalls } from '../rules/qualification.js';
import { resultOfRecord } from '../rules/result.js';
import { TransportError, type CommandRunner } from '../transport/types.js';
import { cmd } from '../transport/commands.js';
import type { ManifestCable } from './manifest.js';
import { NodeMutexes, NodeUse } from './mutex.js';
import type { Operator } from './operator.js';
import { pairReady, probeEnd } from './cable-ends.js';
import { unreachableReporter } from './reachability.js';
import { saveState, type BatchState, type CableState, type CycleRecord } from './state.js';
import { settleBench, type BenchLogEntry, type RebootMode, type SettleResult } from './settle.js';

// One bench: two nodes joined by the cable under test, or (both) by one cable in each cage.
export interface Bench {
  nodes: [NodeSpec, NodeSpec];
  runners: Map<string, CommandRunner>;
  // Both cages of these nodes (batch --port both): the cables go two at a time, one in cage 0 and one in cage 1, with
  // one swap and one reboot of both nodes for both, and are qualified at once (src/run/both-cages.ts).
  both?: boolean;
}

// What runs one cable (the CLI builds it from the same deps as `cablequal run`).
export interface CableRunRequest {
  pair: number;
  label: string;
  golden: boolean;
  outDir: string;
  // The nodes at the cage this cable is in (the bench's, or cage 0 / cage 1 of a two-cable bench).
  nodes: [NodeSpec, NodeSpec];
  sharedNodes: string[];
  benchmarkGate?: (phase: Phase) => Promise<() => void>;
  // How far above the default TCP ports this cable's link-load streams listen: each pair its own range, so that a node
  // in two pairs serves both pairs' soaks at once (a two-cable bench's second cable adds its own step to it).
  portOffset: number;
}
type CableResult = { record: RunRecord; runDir: string; report: string | null };
export type CableRunner = (req: CableRunRequest) => Promise<CableResult>;
// What runs the two cables of a two-cable bench at once (cage 0's first), as `cablequal run --port both` does.
export type CablesRunner = (reqs: [CableRunRequest, CableRunRequest]) => Promise<[CableResult, CableResult]>;

export interface BatchDeps {
  dir: string;
  clock: Clock;
  signal: AbortSignal;
  state: BatchState;
  manifest: ManifestCable[];
  benches: Bench[];
  protocol: Protocol;
  autoDetect: boolean;
  operator: Operator;
  runCable: CableRunner;
  // Two-cable benches: both cables of a swap at once (else each runs alone, one after the other).
  runCables?: CablesRunner;
  pollMs?: number; // auto-detect polling period (default 5 s)
  swapTimeoutMs?: number; // auto-detect: give up on a cable after this long (default 1 h)
  // A cable is asked for (the simulated lab's scripted operator swaps it here); `cage` on a two-cable bench.
  onPlugRequest?: (pair: number, cable: CableState, cage?: number) => void;
  // After each swap: reboot the nodes (auto) or tell the operator to (manual), then check them (the hot-plug trap).
  reboot: RebootMode;
  rebootWaitMs?: number; // default 15 min (auto), 60 min (manual)
  linkWaitMs?: number; // default 5 min
  benchLog: (e: BenchLogEntry) => void;
  // Manual mode on the simulated lab: its scripted operator reboots the nodes it is told to.
  onRebootRequest?: (pair: number, nodes: string[]) => void;
  // The nodes that are the machine this batch runs on (src/batch/controller.ts): the batch never reboots them.
  controllerNodes?: ReadonlySet<string>;
}

// Fresh state: golden first and last on the first pair, manifest cables spread over the pairs in order.
export function initialState(o: {
  manifestFile: string;
  manifest: ManifestCable[];
  pairs: string[];
  protocol: string;
  golden: string | null;
  both?: boolean;
}): BatchState {
  const blank = (label: string, pair: number): CableState => ({
    label,
    pair,
    status: 'pending',
    serial: null,
    outcome: null,
    runDir: null,
    report: null,
    reason: null,
    warnings: [],
    attempts: 0,
  });
  const cables = o.manifest.map((c, i) => blank(c.label, i % o.pairs.length));
  if (o.golden) {
    cables.unshift({ ...blank('golden-first', 0), golden: 'first' });
    cables.push({ ...blank('golden-last', 0), golden: 'last' });
  }
  return {
    schema: 'cablequal.batch/1',
    manifest: o.manifestFile,
    labels: o.manifest.map((c) => c.label),
    pairs: o.pairs,
    ...(o.both ? { both: true } : {}),
    protocol: o.protocol,
    golden: o.golden,
    cables,
    goldenDrift: null,
  };
}

// Each pair's link-load TCP ports lie this far above the previous pair's (a run uses 4, a two-cable bench 14).
const PAIR_PORT_STEP = 20;

// Nodes of bench i that another bench also uses (one cage each): their benchmarks must take turns.
export function sharedNodesOf(benches: Bench[], i: number): string[] {
  const names = benches[i]!.nodes.map((n) => n.name);
  return names.filter((n) => benches.some((b, j) => j !== i && b.nodes.some((x) => x.name === n)));
}

const where = (nodes: readonly NodeSpec[]) => nodes.map((n) => `${n.name} cage ${n.cage === 'auto' ? '(auto)' : n.cage}`).join(' and ');

// The places a bench holds cables: its nodes at their cages, or both cages of a two-cable bench (cage 0 first).
export function slotsOf(b: Bench): [NodeSpec, NodeSpec][] {
  if (!b.both) return [b.nodes];
  return [0, 1].map((cage) => b.nodes.map((n) => ({ ...n, cage })) as [NodeSpec, NodeSpec]);
}

// Run the whole batch: one queue per bench, concurrently; the state file is rewritten after every change.
export async function runBatch(deps: BatchDeps): Promise<BatchState> {
  const s = deps.state;
  const mutexes = new NodeMutexes();
  // A reboot needs its nodes alone: it waits for a cable run of another pair on a shared node, and holds the next.
  const use = new NodeUse();
  let stop = false;
  const save = () => saveState(deps.dir, s);
  // A cable interrupted mid-run starts again from the beginning.
  for (const c of s.cables) if (c.status === 'running') c.status = 'pending';
  save();

  const tested = (serial: string, self: CableState) =>
    s.cables.find((c) => c !== self && !c.golden && c.serial === serial && (c.status === 'done' || c.status === 'running'));

  const queue = async (pair: number): Promise<void> => {
    const bench = deps.benches[pair]!;
    const slots = slotsOf(bench);
    const shared = sharedNodesOf(deps.benches, pair);
    const controller = bench.nodes.find((n) => deps.controllerNodes?.has(n.name))?.name;
    // The serial seen in each slot last (a swap must bring another).
    const previous: (string | null)[] = slots.map(() => null);
    for (;;) {
      if (stop || deps.signal.aborted) break;
      // The cables of the next swap: as many pending cables as the bench has slots, in queue order.
      const group = s.cables.filter((x) => x.pair === pair && x.status === 'pending').slice(0, slots.length);
      if (!group.length) break;
      const cycle: CycleRecord = {
        pair,
        labels: group.map((c) => c.label),
        askedAt: stamp(deps.clock),
        swapped: false,
        inAt: null,
        settledAt: null,
        rebootS: null,
        endedAt: null,
        qualified: 0,
      };
      for (const [i, c] of group.entries()) {
        const m = deps.manifest.find((x) => x.label === c.label);
        const what = c.golden ? `the golden cable (serial ${s.golden})` : `cable "${c.label}"${m?.expectedPn ? ` (${m.expectedPn})` : ''}`;
        deps.operator.say(`[pair ${pair + 1}] plug ${what} into ${where(slots[i]!)}`);
        deps.onPlugRequest?.(pair, c, bench.both ? (slots[i]![0].cage as number) : undefined);
      }
      const got = await waitForCables(
        deps,
        bench,
        group.map((c, i) => ({ nodes: slots[i]!, previous: previous[i]!, expect: c.golden ? s.golden : null })),
      );
      if (got === 'quit') {
        stop = true;
        break;
      }
      if (got === 'skip' || got === 'timeout') {
        for (const c of group) {
          c.status = 'skipped';
          c.reason = got === 'skip' ? 'skipped by the operator' : 'no cable swap detected in time';
        }
        save();
        continue;
      }
      cycle.swapped = got.swapped;
      cycle.inAt = stamp(deps.clock);
      const live: { c: CableState; nodes: [NodeSpec, NodeSpec]; serial: string }[] = [];
      for (const [i, c] of group.entries()) {
        const seen = got.cables[i]!;
        previous[i] = seen.serial;
        c.serial = seen.serial;
        c.benchError = undefined;
        const dup = c.golden ? undefined : tested(seen.serial, c);
        if (dup || (!c.golden && seen.serial === s.golden)) {
          c.status = 'refused';
          c.outcome = 'ERROR';
          c.reason = dup ? `repeated serial: ${seen.serial} was already tested in this batch as "${dup.label}"` : `serial ${seen.serial} is the golden cable`;
          deps.operator.say(`[pair ${pair + 1}] ${c.label}: REFUSED, ${c.reason}`);
          save();
          continue;
        }
        const m = deps.manifest.find((x) => x.label === c.label);
        c.warnings = [];
        if (m?.expectedSerial && m.expectedSerial !== seen.serial)
          c.warnings.push(`manifest expects serial ${m.expectedSerial}, the EEPROM says ${seen.serial}`);
        if (m?.expectedPn && m.expectedPn !== seen.partNumber)
          c.warnings.push(`manifest expects part number ${m.expectedPn}, the EEPROM says ${seen.partNumber ?? '(none)'}`);
        for (const w of c.warnings) deps.operator.say(`[pair ${pair + 1}] ${c.label}: warning: ${w}`);
        live.push({ c, nodes: slots[i]!, serial: seen.serial });
      }
      save();
      if (!live.length) continue;
      // Resumed after the batch asked for the controller node's reboot: go on only once that node has rebooted.
      const asked = live.find((x) => x.c.controllerReboot)?.c.controllerReboot;
      if (asked) {
        const names = live.map((x) => x.c.label).join(' and ');
        if (!(await rebootedSince(bench, asked))) {
          deps.operator.say(
            `[pair ${pair + 1}] ${asked.node} has not rebooted since the batch asked (same boot id): reboot it with ${names} in (sudo systemctl reboot), then run the same command with --resume`,
          );
          stop = true;
          break;
        }
        for (const x of live) {
          x.c.controllerReboot = undefined;
          x.c.reason = null;
        }
        deps.operator.say(`[pair ${pair + 1}] ${asked.node} has rebooted: checking the bench with ${names} in`);
        save();
      }
      // The hot-plug trap: measure nothing until the nodes are rebooted with the cable(s) in and run at full speed.
      const releaseAlone = await use.take(
        bench.nodes.map((n) => n.name),
        true,
      );
      let settled: SettleResult;
      try {
        settled = await settleBench(
          // A two-cable bench checks the cages of this swap's cables (an odd cable out: its cage alone, the other may be empty).
          {
            pair,
            nodes: bench.nodes,
            runners: bench.runners,
            ...(controller ? { controller } : {}),
            ...(bench.both ? { cages: live.map((x) => x.nodes[0].cage as number) } : {}),
          },
          got.swapped,
          {
            clock: deps.clock,
            signal: deps.signal,
            operator: deps.operator,
            mode: deps.reboot,
            protocol: deps.protocol,
            pollMs: deps.pollMs ?? 5000,
            rebootWaitMs: deps.rebootWaitMs ?? (deps.reboot === 'auto' ? 15 : 60) * 60_000,
            linkWaitMs: deps.linkWaitMs ?? 5 * 60_000,
            maxReboots: 2,
            log: deps.benchLog,
            ...(deps.onRebootRequest ? { onRebootRequest: (nodes: string[]) => deps.onRebootRequest!(pair, nodes) } : {}),
          },
        );
      } finally {
        releaseAlone();
      }
      if (!settled.ok) {
        if ('aborted' in settled) break;
        if ('controllerReboot' in settled) {
          // The batch cannot reboot the machine it runs on: the operator does, after the batch has ended (the other
          // pairs finish their running cable first), then --resume qualifies this cable.
          const { node } = settled.controllerReboot;
          for (const x of live) {
            x.c.controllerReboot = settled.controllerReboot;
            x.c.reason = `waiting for ${node} (the machine this batch runs on) to be rebooted with the cable in, then --resume`;
          }
          deps.operator.say(
            `[pair ${pair + 1}] ${live.map((x) => x.c.label).join(' and ')}: ${node} is the machine this batch runs on, so the batch does not reboot it: once this batch has ended, reboot ${node} with the cable in (sudo systemctl reboot), then run the same command with --resume`,
          );
          stop = true;
          save();
          break;
        }
        // The bench, not the cable: the cable stays untested (--resume tries it again) and this pair stops.
        for (const x of live) {
          x.c.benchError = `${settled.reason.rule}: ${settled.reason.message}`;
          x.c.reason = `bench not measurable: ${x.c.benchError}${settled.reason.advice ? ` (${settled.reason.advice})` : ''}`;
          deps.operator.say(`[pair ${pair + 1}] ${x.c.label}: ERROR, ${x.c.reason}; this pair stops`);
        }
        save();
        break;
      }
      cycle.settledAt = stamp(deps.clock);
      cycle.rebootS = settled.reboots ? settled.rebootS : null;
      const benchName = bench.both ? `${bench.nodes.map((n) => n.name).join(' and ')} (both cages)` : where(bench.nodes);
      deps.operator.say(
        `[pair ${pair + 1}] ${benchName} ready${settled.reboots ? ` after ${settled.reboots} reboot(s)` : ''}: loopback ${settled.loopback.map((r) => `${r.node} ${bench.both ? r.device : `rail ${r.rail}`} ${r.gbps.toFixed(1)}`).join(', ')} Gb/s`,
      );
      for (const x of live) {
        x.c.status = 'running';
        x.c.attempts += 1;
      }
      save();
      // A protocol short of the burn-in runs set-up checks: they qualify no cable, and the batch says so.
      const setupCheck = qualificationShortfalls(deps.protocol.phases).length > 0 && !live.every((x) => x.c.golden);
      const together = live.length === 2 && deps.runCables ? ' at once (one per cage: benchmarks one after the other, soaks together)' : '';
      deps.operator.say(
        `[pair ${pair + 1}] ${live.map((x) => `${x.c.label} (serial ${x.serial})`).join(' and ')}: ${setupCheck ? 'set-up check (not a qualification)' : 'qualifying'}${together}${shared.length ? ` (sharing ${shared.join(', ')} with another pair: benchmarks take turns)` : ''}`,
      );
      const releaseUse = await use.take(
        bench.nodes.map((n) => n.name),
        false,
      );
      const request = (x: (typeof live)[number]): CableRunRequest => ({
        pair,
        label: x.c.label,
        golden: Boolean(x.c.golden),
        outDir: join(deps.dir, 'runs'),
        nodes: x.nodes,
        sharedNodes: shared,
        ...(shared.length ? { benchmarkGate: () => mutexes.lockAll(shared) } : {}),
        portOffset: pair * PAIR_PORT_STEP,
      });
      let results: CableResult[];
      try {
        results =
          live.length === 2 && deps.runCables
            ? await deps.runCables([request(live[0]!), request(live[1]!)])
            : await live.reduce<Promise<CableResult[]>>(async (acc, x) => [...(await acc), await deps.runCable(request(x))], Promise.resolve([]));
      } finally {
        releaseUse();
      }
      let interrupted = false;
      for (const [i, x] of live.entries()) {
        const res = results[i]!;
        const c = x.c;
        c.runDir = relative(deps.dir, res.runDir);
        c.report = res.report ? relative(deps.dir, res.report) : null;
        if (deps.signal.aborted || res.record.outcome === 'ABORTED') {
          c.reason = 'interrupted: re-run from the start on --resume';
          interrupted = true; // stays 'running'
          continue;
        }
        c.status = 'done';
        c.outcome = res.record.outcome;
        c.reason = res.record.reasons[0] ? `${res.record.reasons[0].rule}: ${res.record.reasons[0].message}` : null;
        // Counted as the result says (src/rules/result.ts): a qualified cable, or a set-up check apart; golden runs neither.
        const result = resultOfRecord(res.record);
        if (result.qualifies) cycle.qualified++;
        else if (result.judged && result.kind === 'setup-check' && result.role === 'cable') cycle.setupChecks = (cycle.setupChecks ?? 0) + 1;
        const first = res.record.reasons[0];
        deps.operator.say(
          `[pair ${pair + 1}] ${c.label} (serial ${x.serial}): ${c.outcome}${result.kind === 'setup-check' ? ' (set-up check)' : ''}${first ? ` - ${reasonLine(first, c.outcome)}` : ''}`,
        );
      }
      cycle.endedAt = stamp(deps.clock);
      (s.cycles ??= []).push(cycle);
      save();
      if (interrupted) break;
      if (deps.operator.stopRequested()) stop = true;
    }
  };
  await Promise.all(deps.benches.map((_, i) => queue(i)));
  s.goldenDrift = await goldenDrift(deps.dir, s, deps.protocol);
  save();
  return s;
}

// The cables found (one per slot asked for), and whether any went in while the batch waited (plugged into running
// nodes: the hot-plug trap).
type Wait = { cables: { serial: string; partNumber: string | null }[]; swapped: boolean } | 'skip' | 'quit' | 'timeout';

// What the batch waits for in one slot: a cable up on both ends with a readable serial, not the one seen there last
// (and the golden serial when the golden cable is asked for).
interface SlotWanted {
  nodes: readonly NodeSpec[];
  previous: string | null;
  expect: string | null;
}

// Wait for the swap: in each slot asked for, the old cable gone and one new cable up on both ends with a readable serial.
async function waitForCables(deps: BatchDeps, bench: Bench, slots: SlotWanted[]): Promise<Wait> {
  const pair = deps.benches.indexOf(bench);
  const unreachable = unreachableReporter(deps.clock, (l) => deps.operator.say(l), `[pair ${pair + 1}] `);
  const look = async () => {
    const seen = [];
    for (const slot of slots) {
      const ends = await Promise.all(slot.nodes.map((n) => probeEnd(bench.runners.get(n.name)!, n.cage)));
      unreachable(
        slot.nodes.map((n) => n.name),
        ends,
      );
      seen.push(pairReady(ends));
    }
    return seen;
  };
  const acceptable = (r: { serial: string } | null, slot: SlotWanted) =>
    r !== null && r.serial !== slot.previous && (slot.expect === null || r.serial === slot.expect);
  const allIn = (rs: ({ serial: string; partNumber: string | null } | null)[]) => rs.every((r, i) => acceptable(r, slots[i]!));
  const pollMs = deps.pollMs ?? 5000;
  // Already in when asked for (the first cables of a batch, resumed ones): not plugged into running nodes by this batch.
  const first = await look();
  const swapped = !allIn(first);
  const found = (rs: ({ serial: string; partNumber: string | null } | null)[]): Wait => ({ cables: rs.map((r) => r!), swapped });
  if (deps.autoDetect) {
    if (!swapped) return found(first);
    const deadline = deps.clock.now() + (deps.swapTimeoutMs ?? 3_600_000);
    while (deps.clock.now() < deadline) {
      if (deps.signal.aborted) return 'quit';
      const rs = await look();
      if (allIn(rs)) return found(rs);
      try {
        await deps.clock.sleep(pollMs, deps.signal);
      } catch {
        return 'quit';
      }
    }
    return 'timeout';
  }
  for (;;) {
    const a = await deps.operator.ask(slots.length > 1 ? 'cables in?' : 'cable in?');
    if (a !== 'continue') return a;
    let rs: Awaited<ReturnType<typeof look>> = slots.map(() => null);
    // The link takes a few seconds to train after the plug.
    for (let i = 0; i < 12 && !allIn(rs); i++) {
      rs = await look();
      if (!allIn(rs)) await deps.clock.sleep(pollMs, deps.signal).catch(() => undefined);
    }
    if (allIn(rs)) return found(rs);
    for (const [i, slot] of slots.entries()) {
      const r = rs[i]!;
      if (acceptable(r, slot)) continue;
      const at = slots.length > 1 ? `${where(slot.nodes)}: ` : '';
      deps.operator.say(
        at +
          (r === null
            ? 'no cable seen: both rails must be Up on both nodes and the EEPROM readable'
            : r.serial === slot.previous
              ? `still the previous cable (serial ${r.serial})`
              : `serial ${r.serial} is not the expected ${slot.expect}`),
      );
    }
  }
}

// The batch clock's time (virtual on the simulated lab), for the cycle records.
const stamp = (clock: Clock) => new Date(clock.now()).toISOString();

// The golden cable's two runs must agree within the protocol's regression tolerances, else the bench changed.
async function goldenDrift(dir: string, s: BatchState, protocol: Protocol): Promise<BatchState['goldenDrift']> {
  if (!s.golden) return null;
  const first = s.cables.find((c) => c.golden === 'first');
  const last = s.cables.find((c) => c.golden === 'last');
  if (first?.status !== 'done' || last?.status !== 'done' || !first.runDir || !last.runDir) return null;
  const judged = (o: Outcome | null) => o !== null && CABLE_VERDICTS.includes(o) && o !== 'FAIL';
  if (!judged(first.outcome) || !judged(last.outcome)) return { ok: false, detail: `golden cable runs ended ${first.outcome} and ${last.outcome}` };
  const res = regressRecords(await readRunRecord(join(dir, first.runDir)), [await readRunRecord(join(dir, last.runDir))], protocol.regression);
  const off = res.rows.filter((r) => r.status === 'out-of-tolerance' || r.status === 'missing');
  return res.ok
    ? { ok: true, detail: `golden runs agree (${res.rows.filter((r) => r.status === 'ok').length} metrics within tolerance)` }
    : {
        ok: false,
        detail: off.map((r) => `${r.metric} ${r.status} (delta ${r.delta?.toFixed(2) ?? '-'} ${r.deltaUnit}, tolerance ${r.tolerance})`).join('; '),
      };
}

// Whether the node the batch asked the operator to reboot answers with another boot id than when it asked.
async function rebootedSince(bench: Bench, asked: { node: string; bootId: string }): Promise<boolean> {
  const runner = bench.runners.get(asked.node);
  if (!runner) return false;
  try {
    const r = await runner.run(cmd.bootId(), { timeoutMs: 30_000 });
    const id = r.stdout.trim();
    return r.exitCode === 0 && id !== '' && id !== asked.bootId;
  } catch (e) {
    if (e instanceof TransportError) return false;
    throw e;
  }
}
