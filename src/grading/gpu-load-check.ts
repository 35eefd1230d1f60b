// Were the GPUs loaded in a GPU-loaded soak? The rule gpu-util-min (a setup check: ERROR, never a cable grade), decided
// by this one pure function for the live run (src/run/steps/soak-loads.ts, as the soak goes) and for a re-grade
// (evidence.ts, from the journal). Rules version 3 on ('after-load-start'): only samples taken after each node's GPU
// load process started plus settleS count, over the whole loaded soak; the load must run to the soak's end, the
// utilisation may not stay below the limit longer than maxLowS, and its mean must reach the limit. Versions 1 and 2
// ('mean'), and journals written before the load's start was journaled: the mean from a fixed point into the soak.
import type { Limit } from '../domain/limit.js';
import type { Reason } from '../domain/outcome.js';
import type { GpuLoadRecord } from '../domain/record.js';
import type { SoakWindow } from './link-load-check.js';
import type { LoadExit } from './soak-evidence.js';
import { formatNumber } from '../domain/number-format.js';

// One sample's GPU utilisation on one node (mean of its GPUs; null: not read that tick), at the journal line's tS.
export interface GpuUtilSample {
  tS: number;
  pct: number | null;
}

// The mean utilisation of a sample's GPUs (null: none read).
export function meanGpuUtilPct(gpus: readonly { utilizationPct: number | null }[]): number | null {
  let sum = 0;
  let k = 0;
  for (const g of gpus) {
    if (g.utilizationPct === null) continue;
    sum += g.utilizationPct;
    k++;
  }
  return k ? sum / k : null;
}

export interface GpuLoadInput {
  soak: SoakWindow;
  final: boolean; // the soak ran to its end: the mean is judged too
  nodes: readonly string[];
  utilisation: ReadonlyMap<string, readonly GpuUtilSample[]>; // per node, in time order (filtered by time here)
  // When each node's GPU load process had been started; null: judged as versions 1 and 2 did (the rule's 'mean'
  // variant, or a journal written before the start was journaled).
  starts: ReadonlyMap<string, number> | null;
  exits: readonly LoadExit[];
  limit: Limit; // gpu-util-min: fail in %, params settleS and maxLowS ('after-load-start')
}

const ADVICE = 'check the GPU load command of the protocol on the node (gpu_burn, or a PyTorch matmul loop)';
// Versions 1 and 2: GPUs got a minute to ramp up (half the soak when shorter), then the samples from 30 s before that
// point (a quarter of the soak when shorter) to the soak's end counted.
const LEGACY_CHECK_AFTER_S = 60;
const LEGACY_WINDOW_S = 30;
const n = formatNumber;

// The GPU load of each node of a soak and, for each way it was not shown loaded, a reason (ERROR).
export function checkGpuLoad(input: GpuLoadInput): { figures: GpuLoadRecord[]; reasons: Reason[] } {
  const figures: GpuLoadRecord[] = [];
  const reasons: Reason[] = [];
  const settleS = input.limit.params?.['settleS'];
  const maxLowS = input.limit.params?.['maxLowS'];
  const legacy = input.starts === null || settleS === undefined || maxLowS === undefined;
  const { soak, limit } = input;
  const minPct = limit.fail;
  const base = { rule: limit.rule, phase: soak.name, unit: '%', limit: `>= ${minPct} %`, advice: ADVICE };
  for (const node of input.nodes) {
    const utils = input.utilisation.get(node) ?? [];
    if (legacy) {
      const checkAfterS = Math.min(LEGACY_CHECK_AFTER_S, soak.durationS / 2);
      // A soak stopped before the live run checked the GPUs was never checked: nothing to recompute.
      if (!input.final && soak.endS < soak.startS + checkAfterS) continue;
      const fromS = soak.startS + checkAfterS - Math.min(LEGACY_WINDOW_S, checkAfterS / 2);
      const w = windowOf(utils, fromS, soak.endS);
      figures.push({ node, phase: soak.name, fromS, samples: w.length, meanPct: meanOf(w) });
      const mean = meanOf(w);
      if (mean !== null && mean >= minPct) continue;
      reasons.push(
        mean === null
          ? { ...base, node, message: `${node} ${soak.name}: no GPU utilisation samples after the ramp-up in the journal: the GPUs were not shown loaded` }
          : {
              ...base,
              node,
              value: Number(mean.toFixed(1)),
              message: `${node} ${soak.name}: mean GPU utilisation ${mean.toFixed(0)} % after the ramp-up (${w.length} samples) < ${minPct} %: the GPUs were not loaded`,
            },
      );
      continue;
    }
    const startS = input.starts!.get(node);
    if (startS === undefined) {
      if (input.final)
        reasons.push({
          ...base,
          node,
          message: `${node} ${soak.name}: the journal does not say when ${node}'s GPU load started: the GPUs were not shown loaded`,
        });
      continue;
    }
    // Half the rest of the soak when it is shorter than twice the settle time.
    const settle = Math.min(settleS!, Math.max(0, (soak.startS + soak.durationS - startS) / 2));
    const fromS = startS + settle;
    const w = windowOf(utils, fromS, soak.endS);
    const mean = meanOf(w);
    figures.push({ node, phase: soak.name, fromS, samples: w.length, meanPct: mean === null ? null : Number(mean.toFixed(2)) });
    const exit = input.exits.find((x) => x.load === 'gpu' && x.node === node && x.tS <= soak.endS);
    if (exit) {
      reasons.push({
        ...base,
        node,
        message: `${node} ${soak.name}: the GPU load (${exit.process}) ended by itself${exit.exitCode !== null ? ` (exit ${exit.exitCode})` : ''} at ${n(exit.tS)} s, ${n(exit.tS - soak.startS)} s into the soak: the GPUs were not loaded for the rest of it`,
      });
      continue;
    }
    const low = longestLow(w, minPct);
    if (low && low.s > maxLowS!) {
      reasons.push({
        ...base,
        node,
        value: Number(low.maxPct.toFixed(1)),
        message: `${node} ${soak.name}: GPU utilisation below ${minPct} % from ${n(low.fromS)} s to ${n(low.toS)} s into the run (${n(low.s)} s, at most ${n(low.maxPct)} %; ${n(maxLowS!)} s allowed) after the load started at ${n(startS)} s: the GPU load stopped or stalled`,
      });
      continue;
    }
    if (!input.final) continue;
    if (mean === null) {
      reasons.push({
        ...base,
        node,
        message: `${node} ${soak.name}: no GPU utilisation sample from ${n(fromS)} s (the load started at ${n(startS)} s, plus ${n(settle)} s to ramp up) to the soak's end in the journal: the GPUs were not shown loaded`,
      });
    } else if (mean < minPct) {
      reasons.push({
        ...base,
        node,
        value: Number(mean.toFixed(1)),
        message: `${node} ${soak.name}: mean GPU utilisation ${mean.toFixed(0)} % from ${n(fromS)} s (the load started at ${n(startS)} s, plus ${n(settle)} s to ramp up) to the soak's end (${w.length} samples) < ${minPct} %: the GPUs were not loaded`,
      });
    }
  }
  return { figures, reasons };
}

// The readings from fromS to toS (both inclusive).
function windowOf(utils: readonly GpuUtilSample[], fromS: number, toS: number): { tS: number; pct: number }[] {
  const out: { tS: number; pct: number }[] = [];
  for (const u of utils) if (u.pct !== null && u.tS >= fromS && u.tS <= toS) out.push({ tS: u.tS, pct: u.pct });
  return out;
}

const meanOf = (w: readonly { pct: number }[]): number | null => (w.length ? w.reduce((a, x) => a + x.pct, 0) / w.length : null);

// The longest run of consecutive readings below the limit, from its first to its last reading, and its highest value.
function longestLow(w: readonly { tS: number; pct: number }[], minPct: number): { s: number; fromS: number; toS: number; maxPct: number } | null {
  let best: { s: number; fromS: number; toS: number; maxPct: number } | null = null;
  let run: { fromS: number; maxPct: number } | null = null;
  for (const x of w) {
    if (x.pct >= minPct) {
      run = null;
      continue;
    }
    run = run ? { fromS: run.fromS, maxPct: Math.max(run.maxPct, x.pct) } : { fromS: x.tS, maxPct: x.pct };
    if (!best || x.tS - run.fromS > best.s) best = { s: x.tS - run.fromS, fromS: run.fromS, toS: x.tS, maxPct: run.maxPct };
  }
  return best;
}
