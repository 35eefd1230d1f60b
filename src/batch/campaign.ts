import { join, relative } from 'node:path';
import type { Clock } from '../domain/clock.js';
import type { NodeSpec } from '../domain/node.js';
import { CABLE_VERDICTS, type Outcome } from '../domain/outcome.js';
import type { RunRecord } from '../domain/record.js';
import type { Phase, Protocol } from '../protocol/index.js';
import { readRunRecord, regressRecords } from '../report/index.js';
import { TransportError, type CommandRunner } from '../transport/types.js';
import { cmd } from '../transport/commands.js';
import type { ManifestCable } from './manifest.js';
import { NodeMutexes, NodeUse } from './mutex.js';
import type { Operator } from './operator.js';
import { pairReady, probeEnd } from './probe.js';
import { unreachableReporter } from './reachability.js';
import { saveState, type BatchState, type CableState } from './state.js';
import { settleBench, type BenchLogEntry, type RebootMode, type SettleResult } from './settle.js';

// One bench: two nodes joined by the cable under test.
export interface Bench {
  nodes: [NodeSpec, NodeSpec];
  runners: Map<string, CommandRunner>;
}

// What runs one cable (the CLI builds it from the same deps as `cablequal run`).
export interface CableRunRequest {
  pair: number;
  label: string;
  golden: boolean;
  outDir: string;
  sharedNodes: string[];
  benchmarkGate?: (phase: Phase) => Promise<() => void>;
}
export type CableRunner = (req: CableRunRequest) => Promise<{ record: RunRecord; runDir: string; report: string | null }>;

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
  pollMs?: number; // auto-detect polling period (default 5 s)
  swapTimeoutMs?: number; // auto-detect: give up on a cable after this long (default 1 h)
  // A cable is asked for (the simulated lab's scripted operator swaps it here).
  onPlugRequest?: (pair: number, cable: CableState) => void;
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
export function initialState(o: { manifestFile: string; manifest: ManifestCable[]; pairs: string[]; protocol: string; golden: string | null }): BatchState {
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
    protocol: o.protocol,
    golden: o.golden,
    cables,
    goldenDrift: null,
  };
}

// Nodes of bench i that another bench also uses (one cage each): their benchmarks must take turns.
export function sharedNodesOf(benches: Bench[], i: number): string[] {
  const names = benches[i]!.nodes.map((n) => n.name);
  return names.filter((n) => benches.some((b, j) => j !== i && b.nodes.some((x) => x.name === n)));
}

const where = (b: Bench) => b.nodes.map((n) => `${n.name} cage ${n.cage === 'auto' ? '(auto)' : n.cage}`).join(' and ');

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
    const shared = sharedNodesOf(deps.benches, pair);
    const controller = bench.nodes.find((n) => deps.controllerNodes?.has(n.name))?.name;
    let previous: string | null = null;
    for (const c of s.cables.filter((x) => x.pair === pair)) {
      if (c.status !== 'pending') continue;
      if (stop || deps.signal.aborted) break;
      const m = deps.manifest.find((x) => x.label === c.label);
      const what = c.golden ? `the golden cable (serial ${s.golden})` : `cable "${c.label}"${m?.expectedPn ? ` (${m.expectedPn})` : ''}`;
      deps.operator.say(`[pair ${pair + 1}] plug ${what} into ${where(bench)}`);
      deps.onPlugRequest?.(pair, c);
      const got = await waitForCable(deps, bench, previous, c.golden ? s.golden : null);
      if (got === 'quit') {
        stop = true;
        break;
      }
      if (got === 'skip' || got === 'timeout') {
        c.status = 'skipped';
        c.reason = got === 'skip' ? 'skipped by the operator' : 'no cable swap detected in time';
        save();
        continue;
      }
      previous = got.serial;
      c.serial = got.serial;
      c.benchError = undefined;
      const dup = c.golden ? undefined : tested(got.serial, c);
      if (dup || (!c.golden && got.serial === s.golden)) {
        c.status = 'refused';
        c.outcome = 'ERROR';
        c.reason = dup ? `repeated serial: ${got.serial} was already tested in this batch as "${dup.label}"` : `serial ${got.serial} is the golden cable`;
        deps.operator.say(`[pair ${pair + 1}] ${c.label}: REFUSED, ${c.reason}`);
        save();
        continue;
      }
      c.warnings = [];
      if (m?.expectedSerial && m.expectedSerial !== got.serial) c.warnings.push(`manifest expects serial ${m.expectedSerial}, the EEPROM says ${got.serial}`);
      if (m?.expectedPn && m.expectedPn !== got.partNumber)
        c.warnings.push(`manifest expects part number ${m.expectedPn}, the EEPROM says ${got.partNumber ?? '(none)'}`);
      for (const w of c.warnings) deps.operator.say(`[pair ${pair + 1}] ${c.label}: warning: ${w}`);
      save();
      // Resumed after the batch asked for the controller node's reboot: go on only once that node has rebooted.
      if (c.controllerReboot) {
        const asked = c.controllerReboot;
        if (!(await rebootedSince(bench, asked))) {
          deps.operator.say(
            `[pair ${pair + 1}] ${asked.node} has not rebooted since the batch asked (same boot id): reboot it with ${c.label} in (sudo systemctl reboot), then run the same command with --resume`,
          );
          stop = true;
          break;
        }
        c.controllerReboot = undefined;
        c.reason = null;
        deps.operator.say(`[pair ${pair + 1}] ${asked.node} has rebooted: checking the bench with ${c.label} in`);
        save();
      }
      // The hot-plug trap: measure nothing until the nodes are rebooted with this cable in and run at full speed.
      const releaseAlone = await use.take(
        bench.nodes.map((n) => n.name),
        true,
      );
      let settled: SettleResult;
      try {
        settled = await settleBench({ pair, nodes: bench.nodes, runners: bench.runners, ...(controller ? { controller } : {}) }, got.swapped, {
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
        });
      } finally {
        releaseAlone();
      }
      if (!settled.ok) {
        if ('aborted' in settled) break;
        if ('controllerReboot' in settled) {
          // The batch cannot reboot the machine it runs on: the operator does, after the batch has ended (the other
          // pairs finish their running cable first), then --resume qualifies this cable.
          const { node } = settled.controllerReboot;
          c.controllerReboot = settled.controllerReboot;
          c.reason = `waiting for ${node} (the machine this batch runs on) to be rebooted with the cable in, then --resume`;
          deps.operator.say(
            `[pair ${pair + 1}] ${c.label}: ${node} is the machine this batch runs on, so the batch does not reboot it: once this batch has ended, reboot ${node} with the cable in (sudo systemctl reboot), then run the same command with --resume`,
          );
          stop = true;
          save();
          break;
        }
        // The bench, not the cable: the cable stays untested (--resume tries it again) and this pair stops.
        c.benchError = `${settled.reason.rule}: ${settled.reason.message}`;
        c.reason = `bench not measurable: ${c.benchError}${settled.reason.advice ? ` (${settled.reason.advice})` : ''}`;
        deps.operator.say(`[pair ${pair + 1}] ${c.label}: ERROR, ${c.reason}; this pair stops`);
        save();
        break;
      }
      deps.operator.say(
        `[pair ${pair + 1}] ${where(bench)} ready${settled.reboots ? ` after ${settled.reboots} reboot(s)` : ''}: loopback ${settled.loopback.map((r) => `${r.node} rail ${r.rail} ${r.gbps.toFixed(1)}`).join(', ')} Gb/s`,
      );
      c.status = 'running';
      c.attempts += 1;
      save();
      deps.operator.say(
        `[pair ${pair + 1}] ${c.label} (serial ${got.serial}): qualifying${shared.length ? ` (sharing ${shared.join(', ')} with another pair: benchmarks take turns)` : ''}`,
      );
      const releaseUse = await use.take(
        bench.nodes.map((n) => n.name),
        false,
      );
      let res: Awaited<ReturnType<CableRunner>>;
      try {
        res = await deps.runCable({
          pair,
          label: c.label,
          golden: Boolean(c.golden),
          outDir: join(deps.dir, 'runs'),
          sharedNodes: shared,
          ...(shared.length ? { benchmarkGate: () => mutexes.lockAll(shared) } : {}),
        });
      } finally {
        releaseUse();
      }
      c.runDir = relative(deps.dir, res.runDir);
      c.report = res.report ? relative(deps.dir, res.report) : null;
      if (deps.signal.aborted || res.record.outcome === 'ABORTED') {
        c.reason = 'interrupted: re-run from the start on --resume';
        save(); // stays 'running'
        break;
      }
      c.status = 'done';
      c.outcome = res.record.outcome;
      c.reason = res.record.reasons[0] ? `${res.record.reasons[0].rule}: ${res.record.reasons[0].message}` : null;
      deps.operator.say(`[pair ${pair + 1}] ${c.label} (serial ${got.serial}): ${c.outcome}${c.reason ? ` - ${c.reason}` : ''}`);
      save();
      if (deps.operator.stopRequested()) stop = true;
    }
  };
  await Promise.all(deps.benches.map((_, i) => queue(i)));
  s.goldenDrift = await goldenDrift(deps.dir, s, deps.protocol);
  save();
  return s;
}

// The cable found, and whether it went in while the batch waited (plugged into running nodes: the hot-plug trap).
type Wait = { serial: string; partNumber: string | null; swapped: boolean } | 'skip' | 'quit' | 'timeout';

// Wait for the swap: the old cable gone, then one new cable up on both ends with a readable serial.
async function waitForCable(deps: BatchDeps, bench: Bench, previous: string | null, expect: string | null): Promise<Wait> {
  const pair = deps.benches.indexOf(bench);
  const unreachable = unreachableReporter(deps.clock, (l) => deps.operator.say(l), `[pair ${pair + 1}] `);
  const look = async () => {
    const ends = await Promise.all(bench.nodes.map((n) => probeEnd(bench.runners.get(n.name)!, n.cage)));
    unreachable(
      bench.nodes.map((n) => n.name),
      ends,
    );
    return pairReady(ends);
  };
  const acceptable = (r: { serial: string } | null) => r !== null && r.serial !== previous && (expect === null || r.serial === expect);
  const pollMs = deps.pollMs ?? 5000;
  // Already in when asked for (the first cable of a batch, a resumed one): not plugged into running nodes by this batch.
  const first = await look();
  const swapped = !acceptable(first);
  const found = (r: { serial: string; partNumber: string | null }) => ({ ...r, swapped });
  if (deps.autoDetect) {
    if (!swapped) return found(first!);
    const deadline = deps.clock.now() + (deps.swapTimeoutMs ?? 3_600_000);
    while (deps.clock.now() < deadline) {
      if (deps.signal.aborted) return 'quit';
      const r = await look();
      if (acceptable(r)) return found(r!);
      try {
        await deps.clock.sleep(pollMs, deps.signal);
      } catch {
        return 'quit';
      }
    }
    return 'timeout';
  }
  for (;;) {
    const a = await deps.operator.ask('cable in?');
    if (a !== 'continue') return a;
    let r: Awaited<ReturnType<typeof look>> = null;
    // The link takes a few seconds to train after the plug.
    for (let i = 0; i < 12 && !acceptable(r); i++) {
      r = await look();
      if (!acceptable(r)) await deps.clock.sleep(pollMs, deps.signal).catch(() => undefined);
    }
    if (acceptable(r)) return found(r!);
    deps.operator.say(
      r === null
        ? 'no cable seen: both rails must be Up on both nodes and the EEPROM readable'
        : r.serial === previous
          ? `still the previous cable (serial ${r.serial})`
          : `serial ${r.serial} is not the expected ${expect}`,
    );
  }
}

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
