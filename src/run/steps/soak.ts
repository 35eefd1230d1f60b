import { mean } from 'simple-statistics';
import { limitOf, type GpuLoad, type SoakPhase } from '../../protocol/index.js';
import { renderGpuLoad } from '../../protocol/gpu-load.js';
import { cmd } from '../../transport/commands.js';
import { TransportError, type RemoteProcess } from '../../transport/types.js';
import type { RunContext } from '../context.js';
import type { SamplingLoop } from '../sampling-loop.js';
import { SetupError, setupReason } from '../run-errors.js';
import { deadLoadProcesses, latestPerDirection, linkLoadRows, startLinkLoad, stopLinkLoad, type LinkLoad } from './link-load.js';

// GPUs get a minute to ramp up (half the phase when it is shorter) before utilisation is checked.
const GPU_CHECK_AFTER_S = 60;
const GPU_WINDOW_S = 30;
const THROUGHPUT_EVERY_S = 30;

// The command line of the protocol's GPU load for a soak of durationS: a program with its arguments quoted one by one
// (started in its cwd), or the one-line template of older protocols.
export function gpuLoadCommand(load: GpuLoad, durationS: number): string {
  const r = renderGpuLoad(load, durationS);
  return 'line' in r ? r.line : cmd.program(r);
}

function gpuUtilMean(loop: SamplingLoop, node: string, phase: string, sinceS: number): number | null {
  const utils = loop
    .recent(node, phase, sinceS)
    .flatMap((s) => s.gpus.map((g) => g.utilizationPct))
    .filter((u): u is number => u !== null);
  return utils.length ? mean(utils) : null;
}

// Full link load on both rails for the whole phase, with the GPU load on both nodes when asked.
// Ends early when the sampler has decided FAIL (loads stopped, sampling goes on for the record).
export async function soak(ctx: RunContext, phase: SoakPhase, loop: SamplingLoop): Promise<'done' | 'decided'> {
  const startS = ctx.tS;
  const endS = startS + Math.min(phase.durationS, ctx.soakCapS ?? Infinity);
  ctx.phaseEndsAtS = endS;
  let load: LinkLoad | null = null;
  const gpu: RemoteProcess[] = [];
  try {
    if (phase.linkLoad) load = await startLinkLoad(ctx, { msgSize: phase.msgSize, bidirectional: phase.bidirectional, tag: phase.name });
    if (phase.gpuLoad) {
      for (const n of ctx.nodes) {
        gpu.push(await ctx.startProcess(n, gpuLoadCommand(ctx.protocol.commands.gpuLoad, phase.durationS + 60), `${phase.name}-gpu`));
      }
    }
    let gpuChecked = !phase.gpuLoad;
    const gpuCheckAfterS = Math.min(GPU_CHECK_AFTER_S, phase.durationS / 2);
    const gpuWindowS = Math.min(GPU_WINDOW_S, gpuCheckAfterS / 2);
    let rowsReadS = startS;
    let deadSinceS: number | null = null;
    const step = ctx.protocol.samplingIntervalS * 1000;
    while (ctx.tS < endS) {
      // Whole milliseconds: a fractional remainder (float error in endS - tS) would sleep ~0 ms forever.
      const remainingMs = Math.round((endS - ctx.tS) * 1000);
      if (remainingMs <= 0) break;
      await ctx.sleep(Math.min(step, remainingMs));
      if (loop.setupFault) throw new SetupError(loop.setupFault);
      if (loop.decision) return 'decided';
      if (load && loop.nodesInGap.length > 0) {
        // A node does not answer: its loads cannot be read or judged. The sampler's gap tolerance decides
        // (node-lost ERROR, or the node answers again and the loads are checked afresh; a drop does not stop them).
        deadSinceS = null;
      } else if (load) {
        // The clients' output grows all phase long: read the throughput rows now and then, not every tick.
        if (ctx.tS - rowsReadS >= THROUGHPUT_EVERY_S) {
          rowsReadS = ctx.tS;
          const rows = await linkLoadRows(load).catch((e: unknown) => {
            if (e instanceof TransportError) return []; // the sampler records the gap
            throw e;
          });
          const latest = [...latestPerDirection(rows).values()];
          if (latest.length) ctx.lastThroughputGbps = Math.min(...latest);
        }
        const dead = await deadLoadProcesses(load);
        if (dead.length && deadSinceS === null) deadSinceS = ctx.tS;
        // Give the sampler a few ticks to see a link drop before calling it a harness problem.
        if (deadSinceS !== null && ctx.tS - deadSinceS >= 5 * ctx.protocol.samplingIntervalS) {
          throw new SetupError(
            setupReason('load-died', `link load stopped by itself (${dead.join(', ')}) without a link-down event`, {
              phase: phase.name,
              advice: 'check ib_write_bw on both nodes (out files under the run directory on the node)',
            }),
          );
        }
      }
      if (!gpuChecked && ctx.tS - startS >= gpuCheckAfterS) {
        const minPct = limitOf(ctx.protocol, 'gpu-util-min').fail;
        const utils = ctx.nodes.map((n) => ({ n, u: gpuUtilMean(loop, n.spec.name, phase.name, ctx.tS - gpuWindowS) }));
        // GPU telemetry is read every few ticks: wait for a reading in the window, up to the end of the phase.
        const lastChance = ctx.tS >= endS - ctx.protocol.samplingIntervalS;
        if (utils.every((x) => x.u !== null) || lastChance) {
          gpuChecked = true;
          for (const { n, u } of utils) {
            if (u === null || u < minPct) {
              throw new SetupError(
                setupReason(
                  'gpu-util-min',
                  `${n.spec.name}: GPUs not loaded (mean utilisation ${u === null ? 'unknown' : `${u.toFixed(0)} %`} < ${minPct} %)`,
                  {
                    node: n.spec.name,
                    phase: phase.name,
                    value: u ?? 'unknown',
                    unit: '%',
                    limit: `>= ${minPct} %`,
                    advice: 'check the GPU load command of the protocol on the node (gpu_burn, or a PyTorch matmul loop)',
                  },
                ),
              );
            }
          }
        }
      }
    }
    return 'done';
  } finally {
    if (load) {
      const rows = await linkLoadRows(load).catch((e: unknown) => {
        if (e instanceof TransportError) return []; // node unreachable at the end: stop what can be stopped
        throw e;
      });
      ctx.journal.append({ type: 'throughput', tS: ctx.tS, phase: phase.name, startS, bidirectional: phase.bidirectional, rails: rows });
      await stopLinkLoad(ctx, load);
    }
    if (gpu.length) await ctx.stopProcesses(gpu);
    ctx.phaseEndsAtS = null;
  }
}
