// Ctrl-C at a chosen point of a run (interrupt-points.test.ts in process, its .system twin over SSH): the abort fires
// as the triggering command or load goes out, so each point is hit exactly.
import { fsyncSync, mkdtempSync, readFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { expect } from 'vitest';
import type { Clock } from '../../src/domain/clock.js';
import type { NodeSpec } from '../../src/domain/node.js';
import { parseProtocol } from '../../src/protocol/index.js';
import { runQualification } from '../../src/run/qualify.js';
import { persistentTickSource } from '../../src/run/tick-source.js';
import type { CommandRunner, RemoteProcess } from '../../src/transport/types.js';

// Why the test aborts, as the journal and the record say it.
export const WHY = 'interrupted by SIGINT (test)';

// What sets the interrupt off: a command about to run, a load about to start or to be stopped, or a moment of the
// run's clock (a soak in progress).
export type Trigger = { run?: RegExp; start?: RegExp; stop?: RegExp; atS?: number };

// Wrap a node's runner so that the abort fires as the triggering call goes out (the call then runs with the signal aborted).
function tripwire(inner: CommandRunner, trigger: Trigger, abort: () => void): CommandRunner {
  const hit = (re: RegExp | undefined, text: string) => {
    if (re?.test(text)) abort();
  };
  return {
    node: inner.node,
    simulated: inner.simulated,
    run: (c, o) => {
      hit(trigger.run, c);
      return inner.run(c, o);
    },
    openShell: () => inner.openShell(),
    close: () => inner.close(),
    start: async (c, o): Promise<RemoteProcess> => {
      hit(trigger.start, o.name);
      const p = await inner.start(c, o);
      return { name: p.name, pid: p.pid, done: p.done, output: () => p.output(), stop: (g) => (hit(trigger.stop, p.name), p.stop(g)) };
    },
  };
}

// What an interrupted run left: its outcome, reasons and journal lines.
export interface Interrupted {
  outcome: string;
  reasons: { rule: string; message: string }[];
  journal: { type: string; phase?: string; why?: string; cut?: string; reason?: { rule: string } }[];
}

// Run `protocolPath` and abort it when `trigger` goes off in `phase` (after `delayMs` if given).
export async function interrupt(o: {
  clock: Clock;
  runners: Map<string, CommandRunner>;
  nodes: NodeSpec[];
  protocolPath: string;
  phase: string;
  trigger: Trigger;
  simulated: boolean;
  delayMs?: number;
}): Promise<Interrupted> {
  const ac = new AbortController();
  const protocolText = readFileSync(o.protocolPath, 'utf8');
  // Armed when the journal says the phase started: a command an earlier phase also runs (preflight reads the
  // EEPROM too) does not set it off there.
  let armed = false;
  const journalIo = {
    writeSync: (fd: number, buf: Buffer, off: number, len: number) => {
      const text = buf.toString('utf8', off, off + len);
      if (text.includes('"type":"phase-start"') && text.includes(`"phase":${JSON.stringify(o.phase)}`)) armed = true;
      return writeSync(fd, buf, off, len);
    },
    fsyncSync,
  };
  let fired = false;
  const fire = () => {
    if (fired || !armed) return;
    fired = true;
    if (o.delayMs) setTimeout(() => ac.abort(WHY), o.delayMs);
    else ac.abort(WHY);
  };
  const runners = new Map([...o.runners].map(([n, r]) => [n, tripwire(r, o.trigger, fire)]));
  if (o.trigger.atS !== undefined) void o.clock.sleep(o.trigger.atS * 1000).then(fire);
  const { record, runDir } = await runQualification({
    clock: o.clock,
    runners,
    nodes: o.nodes,
    protocol: parseProtocol(protocolText, o.protocolPath),
    protocolText,
    outDir: mkdtempSync(join(tmpdir(), 'cq-int-')),
    label: 'interrupt',
    runId: `run-${Math.random().toString(16).slice(2, 8)}`,
    log: pino({ level: 'silent' }),
    signal: ac.signal,
    simulated: o.simulated,
    makeTickSource: (ns, intervalS) => persistentTickSource(ns, o.clock, { intervalS }),
    journalIo,
  });
  expect(ac.signal.aborted, 'the trigger never fired').toBe(true);
  const journal = readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Interrupted['journal'][number]);
  return { outcome: record.outcome, reasons: record.reasons, journal };
}

// The interrupted run ended ABORTED for the test's reason in `phase`, with no setup error and a run-end.
export function expectCleanAbort(r: Interrupted, phase: string): void {
  expect(r.outcome, JSON.stringify(r.reasons)).toBe('ABORTED');
  expect(r.reasons).toEqual([{ rule: 'aborted', message: `run stopped: ${WHY}` }]);
  expect(r.journal.filter((l) => l.type === 'setup-error')).toEqual([]);
  expect(r.journal.find((l) => l.type === 'aborted')).toMatchObject({ phase, why: WHY });
  expect(r.journal.at(-1)!.type).toBe('run-end');
}
