import { join, relative } from 'node:path';
import type { Clock } from '../domain/clock.js';
import type { NodeSpec } from '../domain/node.js';
import { CABLE_VERDICTS, type Outcome } from '../domain/outcome.js';
import type { RunRecord } from '../domain/record.js';
import type { Phase, Protocol } from '../protocol/index.js';
import { readRunRecord, regressRecords } from '../report/index.js';
import type { CommandRunner } from '../transport/types.js';
import type { ManifestCable } from './manifest.js';
import { NodeMutexes } from './mutex.js';
import type { Operator } from './operator.js';
import { pairReady, probeEnd } from './probe.js';
import { unreachableReporter } from './reachability.js';
import { saveState, type BatchState, type CableState } from './state.js';

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
}

// Fresh state: golden first and last on the first pair, manifest cables spread over the pairs in order.
export function initialState(o: { manifestFile: string; manifest: ManifestCable[]; pairs: string[]; protocol: string; golden: string | null }): BatchState {
  const blank = (label: string, pair: number): CableState => ({ label, pair, status: 'pending', serial: null, outcome: null, runDir: null, report: null, reason: null, warnings: [], attempts: 0 });
  const cables = o.manifest.map((c, i) => blank(c.label, i % o.pairs.length));
  if (o.golden) {
    cables.unshift({ ...blank('golden-first', 0), golden: 'first' });
    cables.push({ ...blank('golden-last', 0), golden: 'last' });
  }
  return { schema: 'cablequal.batch/1', manifest: o.manifestFile, labels: o.manifest.map((c) => c.label), pairs: o.pairs, protocol: o.protocol, golden: o.golden, cables, goldenDrift: null };
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
      if (m?.expectedPn && m.expectedPn !== got.partNumber) c.warnings.push(`manifest expects part number ${m.expectedPn}, the EEPROM says ${got.partNumber ?? '(none)'}`);
      for (const w of c.warnings) deps.operator.say(`[pair ${pair + 1}] ${c.label}: warning: ${w}`);
      c.status = 'running';
      c.attempts += 1;
      save();
      deps.operator.say(`[pair ${pair + 1}] ${c.label} (serial ${got.serial}): qualifying${shared.length ? ` (sharing ${shared.join(', ')} with another pair: benchmarks take turns)` : ''}`);
      const res = await deps.runCable({
        pair,
        label: c.label,
        golden: Boolean(c.golden),
        outDir: join(deps.dir, 'runs'),
        sharedNodes: shared,
        ...(shared.length ? { benchmarkGate: () => mutexes.lockAll(shared) } : {}),
      });
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

type Wait = { serial: string; partNumber: string | null } | 'skip' | 'quit' | 'timeout';

// Wait for the swap: the old cable gone, then one new cable up on both ends with a readable serial.
async function waitForCable(deps: BatchDeps, bench: Bench, previous: string | null, expect: string | null): Promise<Wait> {
  const pair = deps.benches.indexOf(bench);
  const unreachable = unreachableReporter(deps.clock, (l) => deps.operator.say(l), `[pair ${pair + 1}] `);
  const look = async () => {
    const ends = await Promise.all(bench.nodes.map((n) => probeEnd(bench.runners.get(n.name)!, n.cage)));
    unreachable(bench.nodes.map((n) => n.name), ends);
    return pairReady(ends);
  };
  const acceptable = (r: { serial: string } | null) => r !== null && r.serial !== previous && (expect === null || r.serial === expect);
  const pollMs = deps.pollMs ?? 5000;
  if (deps.autoDetect) {
    const deadline = deps.clock.now() + (deps.swapTimeoutMs ?? 3_600_000);
    while (deps.clock.now() < deadline) {
      if (deps.signal.aborted) return 'quit';
      const r = await look();
      if (acceptable(r)) return r!;
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
    if (acceptable(r)) return r!;
    deps.operator.say(r === null ? 'no cable seen: both rails must be Up on both nodes and the EEPROM readable' : r.serial === previous ? `still the previous cable (serial ${r.serial})` : `serial ${r.serial} is not the expected ${expect}`);
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
  return res.ok ? { ok: true, detail: `golden runs agree (${res.rows.filter((r) => r.status === 'ok').length} metrics within tolerance)` } : { ok: false, detail: off.map((r) => `${r.metric} ${r.status} (delta ${r.delta?.toFixed(2) ?? '-'} ${r.deltaUnit}, tolerance ${r.tolerance})`).join('; ') };
}
