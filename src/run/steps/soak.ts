import type { GpuLoad, SoakPhase } from '../../protocol/index.js';
import { renderGpuLoad } from '../../protocol/gpu-load.js';
import { cmd } from '../../transport/commands.js';
import type { RemoteProcess } from '../../transport/types.js';
import type { RunContext } from '../context.js';
import type { SamplingLoop } from '../sampling-loop.js';
import { SetupError } from '../run-errors.js';
import { startLinkLoad, stopLinkLoad, type LinkLoad } from './link-load.js';
import { SoakLoads } from './soak-loads.js';

// The command line of the protocol's GPU load for a soak of durationS: a program with its arguments quoted one by one
// (started in its cwd), or the one-line template of older protocols.
export function gpuLoadCommand(load: GpuLoad, durationS: number): string {
  const r = renderGpuLoad(load, durationS);
  return 'line' in r ? r.line : cmd.program(r);
}

// Full link load on both rails for the whole phase, with the GPU load on both nodes when asked. The loads are watched
// as the soak goes (soak-loads.ts: a link-load client that stops or stalls, a GPU load that stops, a load process that
// ends by itself make the run ERROR) and judged once it has run (each direction's median load, the GPUs' mean
// utilisation). Ends early when the sampler has decided FAIL (loads stopped, sampling goes on for the record).
export async function soak(ctx: RunContext, phase: SoakPhase, loop: SamplingLoop): Promise<'done' | 'decided'> {
  const startS = ctx.tS;
  const endS = startS + Math.min(phase.durationS, ctx.soakCapS ?? Infinity);
  ctx.phaseEndsAtS = endS;
  const loads = new SoakLoads(ctx, phase, loop, startS);
  let load: LinkLoad | null = null;
  const gpu: RemoteProcess[] = [];
  let ran = false;
  const judge = (final: boolean) => {
    const why = loads.check(final)[0];
    if (why) throw new SetupError(why);
  };
  try {
    if (phase.linkLoad) {
      load = await startLinkLoad(ctx, { msgSize: phase.msgSize, bidirectional: phase.bidirectional, tag: phase.name });
      loads.linkStarted(load);
    }
    if (phase.gpuLoad) {
      for (const n of ctx.nodes) {
        const command = gpuLoadCommand(ctx.protocol.commands.gpuLoad, phase.durationS + 60);
        // Two cables qualified at once soak under one GPU load per node, started by whichever run comes first.
        const p = ctx.together ? await ctx.together.gpuLoad(ctx, n, command, `${phase.name}-gpu`) : await ctx.startProcess(n, command, `${phase.name}-gpu`);
        gpu.push(p);
        loads.gpuStarted(n.spec.name, p);
      }
    }
    const step = ctx.protocol.samplingIntervalS * 1000;
    while (ctx.tS < endS) {
      // Whole milliseconds: a fractional remainder (float error in endS - tS) would sleep ~0 ms forever.
      const remainingMs = Math.round((endS - ctx.tS) * 1000);
      if (remainingMs <= 0) break;
      await ctx.sleep(Math.min(step, remainingMs));
      if (loop.setupFault) throw new SetupError(loop.setupFault);
      if (loop.decision) return 'decided';
      // A node that does not answer: its loads cannot be read or judged. The sampler's gap tolerance decides (node-lost
      // ERROR, or the node answers again and the loads are judged afresh, with what they printed meanwhile).
      if (loop.nodesInGap.length > 0) continue;
      await loads.noteSharing();
      await loads.readRows();
      await loads.noteExits();
      judge(false);
    }
    // The soak ran: its last rows, then the whole soak judged.
    await loads.readRows(true);
    await loads.noteExits();
    ran = true;
    judge(true);
    return 'done';
  } finally {
    // Nothing collected is lost: the rows printed since the last read (a soak cut short), then the stop.
    if (!ran) await loads.readRows(true);
    loads.stopping(!ran);
    if (load) await stopLinkLoad(ctx, load);
    if (gpu.length && ctx.together) await releaseShared(ctx, gpu);
    else if (gpu.length) await ctx.stopProcesses(gpu);
    ctx.phaseEndsAtS = null;
  }
}

// Let go of the GPU loads shared with the other cable's run: the last run to let go stops them.
async function releaseShared(ctx: RunContext, gpu: RemoteProcess[]): Promise<void> {
  await Promise.all(
    gpu.map((p) => ctx.together!.releaseGpu(p).catch((e: unknown) => ctx.log.warn({ err: e, process: p.name }, 'stopping a remote process failed'))),
  );
}
