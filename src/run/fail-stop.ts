// What stops a run at a certain FAIL (#33 item 3): the sampling loop decides, RunContext.decide() cuts every sleep and
// wait of the phase under way and refuses every load start from then on (FailDecided), the phase stops its loads, and
// the run samples the protocol's tail before it ends. Waits between phases (the benchmark gate of two cables at once,
// a soak waiting for the other cable) are cut the same way.
import type { RunContext } from './context.js';

// The FAIL is decided: every load stops, sampling goes on for the protocol's tail (earlyStop.keepSamplingS), and the
// phases from `from` on are journaled as skipped.
export async function decidedTail(ctx: RunContext, from: number): Promise<void> {
  await ctx.stopProcesses();
  await ctx.sleep(ctx.protocol.earlyStop.keepSamplingS * 1000, { pastDecision: true });
  for (const rest of ctx.protocol.phases.slice(from)) {
    ctx.journal.append({ type: 'phase-start', tS: ctx.tS, phase: rest.name, kind: rest.kind });
    ctx.journal.append({ type: 'phase-end', tS: ctx.tS, phase: rest.name, status: 'skipped', note: 'FAIL already decided' });
  }
}

// The benchmark gate's release once this run's turn comes, or null when a FAIL is decided first (the turn, when it
// comes, is handed on at once).
export async function untilDecided(ctx: RunContext, turn: Promise<() => void>): Promise<(() => void) | null> {
  if (ctx.decided.aborted) {
    void turn.then((release) => release());
    return null;
  }
  let onDecided!: () => void;
  const decided = new Promise<null>((resolve) => (onDecided = () => resolve(null)));
  ctx.decided.addEventListener('abort', onDecided, { once: true });
  try {
    const first = await Promise.race([turn, decided]);
    if (first === null) void turn.then((release) => release());
    return first;
  } finally {
    ctx.decided.removeEventListener('abort', onDecided);
  }
}

// A signal aborted when any of the given ones is; dispose() lets go of them (the run's signal lives for hours: a
// listener per sleep would pile up).
export function anySignal(signals: AbortSignal[]): { signal: AbortSignal; dispose(): void } {
  const ac = new AbortController();
  const abort = () => ac.abort();
  for (const s of signals) {
    if (s.aborted) ac.abort();
    else s.addEventListener('abort', abort, { once: true });
  }
  return { signal: ac.signal, dispose: () => signals.forEach((s) => s.removeEventListener('abort', abort)) };
}
