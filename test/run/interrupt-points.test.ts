// Ctrl-C at every interrupt point of the protocol ends ABORTED, never ERROR: a command cut by the abort signal is the
// abort itself (its channel killed, its output cut short), not a transport or setup fault. Each point is hit exactly:
// the abort fires as the phase's command goes out (in flight when the signal comes). On the simulated lab in process,
// and over real SSH against `sim serve`, where a cut command used to surface as ERROR [transport].
import { fsyncSync, mkdtempSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRunners } from '../../src/cli/transports.js';
import type { NodeSpec } from '../../src/domain/node.js';
import { parseProtocol } from '../../src/protocol/index.js';
import { runQualification } from '../../src/run/qualify.js';
import { persistentTickSource } from '../../src/run/tick-source.js';
import { createLab } from '../../src/sim/lab.js';
import { serveSimLab, type SimServe } from '../../src/sim/serve.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { systemClock, type Clock } from '../../src/domain/clock.js';
import type { CommandRunner, RemoteProcess } from '../../src/transport/types.js';

const WHY = 'interrupted by SIGINT (test)';

// What sets the interrupt off: a command about to run, a load about to start or to be stopped, or a moment of the
// run's clock (a soak in progress).
type Trigger = { run?: RegExp; start?: RegExp; stop?: RegExp; atS?: number };

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

interface Interrupted {
  outcome: string;
  reasons: { rule: string; message: string }[];
  journal: { type: string; phase?: string; why?: string; cut?: string; reason?: { rule: string } }[];
}

async function interrupt(o: {
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

// Every phase of the quick protocol, each at the command or load that does its work.
const POINTS: Array<[phase: string, trigger: Trigger]> = [
  ['preflight', { run: /^ibdev2netdev/ }],
  ['identity', { run: /ethtool -m \S+ page 0 offset 0 length 128 hex on$/ }],
  ['loopback', { start: /^loopback-server-/ }],
  ['loopback', { run: /^ib_write_bw .* -D \d+ \d+\.\d+\.\d+\.\d+$/ }],
  ['ib-write-bw', { start: /^bw-client-/ }],
  ['ib-write-bw', { stop: /^bw-/ }],
  ['nccl', { run: /^mpirun / }],
  ['soak-idle', { start: /^soak-idle-/ }],
  ['soak-idle', { atS: 60 }],
  ['soak-idle', { stop: /^soak-idle-/ }],
  ['soak-loaded', { start: /^soak-loaded-gpu/ }],
  ['soak-loaded', { atS: 150 }],
];

function expectCleanAbort(r: Interrupted, phase: string): void {
  expect(r.outcome, JSON.stringify(r.reasons)).toBe('ABORTED');
  expect(r.reasons).toEqual([{ rule: 'aborted', message: `run stopped: ${WHY}` }]);
  expect(r.journal.filter((l) => l.type === 'setup-error')).toEqual([]);
  expect(r.journal.find((l) => l.type === 'aborted')).toMatchObject({ phase, why: WHY });
  expect(r.journal.at(-1)!.type).toBe('run-end');
}

describe('Ctrl-C at every interrupt point: ABORTED, loads stopped (simulated lab)', () => {
  const named = POINTS.map(
    ([phase, t]) =>
      [
        phase,
        t.atS !== undefined
          ? `${t.atS} s into the run`
          : t.run
            ? `command ${t.run.source}`
            : t.start
              ? `start of ${t.start.source}`
              : `stop of ${t.stop!.source}`,
        t,
      ] as const,
  );
  it.each(named)('%s: at %s', async (phase, _at, trigger) => {
    const clock = new VirtualClock(Date.UTC(2026, 5, 1));
    const lab = createLab({ scenario: 'good-qsfp56', seed: 7, faults: [], clock });
    const r = await interrupt({
      clock,
      runners: new Map(lab.nodes.map((n) => [n, lab.runner(n)])),
      nodes: lab.nodes.map((name) => ({ name, host: name, cage: 'auto' as const })),
      protocolPath: join(process.cwd(), 'protocols', 'quick.json'),
      phase,
      trigger,
      simulated: true,
    });
    expectCleanAbort(r, phase);
    for (const n of lab.nodes) expect(lab.processes(n)).toEqual([]);
  });
});

// Over SSH the abort kills the command's channel: the call rejects, and that must read as the abort.
describe('Ctrl-C with the command in flight over SSH (sim serve): ABORTED, never ERROR [transport]', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cq-int-ssh-'));
  let lab: SimServe;
  beforeAll(async () => {
    lab = await serveSimLab({ scenario: 'good-qsfp56', speed: 1, seed: 7, dir: join(dir, 'keys') });
  });
  afterAll(async () => {
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['loopback', { run: /^ib_write_bw .* -D \d+ \d+\.\d+\.\d+\.\d+$/ }],
    ['nccl', { run: /^mpirun / }],
  ] as Array<[string, Trigger]>)('%s: the command cut on its way', async (phase, trigger) => {
    const nodes: NodeSpec[] = lab.nodes.map((n) => ({ name: n.name, host: n.name, cage: 'auto' }));
    const runners = await makeRunners(nodes, { acceptNewHostKeys: false, env: {}, sshConfig: lab.files.config });
    try {
      // The abort comes a moment after the command went out: its SSH channel is open, running, and then killed.
      const r = await interrupt({
        clock: systemClock,
        runners,
        nodes,
        protocolPath: join(process.cwd(), 'test', 'fixtures', 'protocols', 'hangup-smoke.json'),
        phase,
        trigger,
        simulated: false,
        delayMs: 300,
      });
      expectCleanAbort(r, phase);
      const aborted = r.journal.find((l) => l.type === 'aborted')!;
      expect(aborted.cut).toMatch(/cut short by the abort signal/); // the command that was cut, kept as evidence
      // The killed channel's command ends on the node within moments (as the Ctrl-C test over OpenSSH allows, 5 s).
      for (let i = 0; i < 50 && lab.lab.nodes.some((n) => lab.lab.processes(n).length > 0); i++) await new Promise((res) => setTimeout(res, 100));
      for (const n of lab.lab.nodes) expect(lab.lab.processes(n), `${n} at ${lab.lab.timeS()} s`).toEqual([]);
    } finally {
      await Promise.all([...runners.values()].map((r) => r.close()));
    }
  });
});
