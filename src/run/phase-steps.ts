// Each phase kind's steps (src/run/steps/), run by src/run/qualify.ts in the protocol's order, and how a phase ends
// when the sampling loop decides a certain FAIL while it runs (src/run/fail-stop.ts).
import type { Phase } from '../protocol/index.js';
import type { RunContext } from './context.js';
import { FailDecided, SetupError } from './run-errors.js';
import { bootIdOf, type SamplingLoop } from './sampling-loop.js';
import { preflight } from './steps/preflight.js';
import { identity } from './steps/identity.js';
import { loopback } from './steps/loopback.js';
import { ibWriteBw, nccl } from './steps/benchmarks.js';
import { soak } from './steps/soak.js';

// A phase, 'decided' when a FAIL was decided while it ran: its loads are stopped at once (the run's sleeps and load
// starts throw FailDecided from the decision on). A benchmark that failed is judged after the next ticks: when the sampler
// decides a FAIL meanwhile (the link went down under NCCL, which gave up at once), the load's failure is the cable's,
// not a setup fault of its own (its output is in the journal).
export async function runPhase(ctx: RunContext, phase: Phase, loop: SamplingLoop | null): Promise<'done' | 'decided'> {
  try {
    const status = await phaseSteps(ctx, phase, loop);
    return loop?.decision ? 'decided' : status;
  } catch (e) {
    if (e instanceof FailDecided) return 'decided';
    if (e instanceof SetupError && loop && !loop.setupFault && OVER_THE_CABLE.has(phase.kind)) {
      await untilNextTicks(ctx);
      if (loop.decision && !loop.setupFault) {
        ctx.log.warn({ reason: e.reason }, 'a load failed as the FAIL was decided: the FAIL stands');
        return 'decided';
      }
    }
    throw e;
  }
}

// The benchmarks whose loads cross the cable (the soaks give a load that ended by itself the time a link drop takes to
// be seen already: soak-loads.ts; loopback stays on the node).
const OVER_THE_CABLE: ReadonlySet<Phase['kind']> = new Set(['ib_write_bw', 'nccl']);

// Two sampling intervals, or less when a FAIL is decided first.
async function untilNextTicks(ctx: RunContext): Promise<void> {
  try {
    await ctx.sleep(2 * ctx.protocol.samplingIntervalS * 1000);
  } catch (e) {
    if (!(e instanceof FailDecided)) throw e;
  }
}

async function phaseSteps(ctx: RunContext, phase: Phase, loop: SamplingLoop | null): Promise<'done' | 'decided'> {
  switch (phase.kind) {
    case 'preflight':
      await preflight(ctx);
      return 'done';
    case 'identity':
      await identity(ctx);
      // Sampling starts after identity: what a counter reset will be told from a reboot by.
      for (const n of ctx.nodes) n.bootId = await bootIdOf(ctx, n);
      return 'done';
    case 'loopback':
      await loopback(ctx, phase);
      return 'done';
    case 'ib_write_bw':
      await ibWriteBw(ctx, phase);
      return 'done';
    case 'nccl':
      await nccl(ctx, phase);
      return 'done';
    case 'soak':
      // Unreachable for a loaded protocol: src/protocol/semantics.ts refuses a soak before identity (exit 2).
      if (!loop) throw new Error('soak before identity: the protocol must read the EEPROM first');
      return soak(ctx, phase, loop);
  }
}
