// A run against simulated nodes says so in every artifact from its first byte (issue 21 item 13): nodes reached as real
// ones (`sim serve` over SSH, here the lab's runners handed over as if they were) say what they are in their DMI
// strings, and the CLI reads those before the run starts.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliRunDeps, nodeDmi, saysSimulated } from '../../src/cli/run-command.js';
import { RunMetrics } from '../../src/metrics/run-metrics.js';
import { loadProtocol } from '../../src/protocol/index.js';
import { runQualification } from '../../src/run/qualify.js';
import { createLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { observedRunOf } from '../../src/store/run-observers.js';
import { cmd } from '../../src/transport/commands.js';
import { TransportError, type CommandRunner } from '../../src/transport/types.js';

const QUICK = join(process.cwd(), 'protocols', 'quick.json');

// A node that answers like real hardware where the DMI strings are asked (constructed, not recorded), else like the lab.
function realDmi(inner: CommandRunner): CommandRunner {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'run')
        return async (command: string, opts?: Parameters<CommandRunner['run']>[1]) =>
          command === cmd.dmi()
            ? {
                command,
                stdout: '/sys/class/dmi/id/sys_vendor:NVIDIA\n/sys/class/dmi/id/product_name:DGX Spark\n',
                stderr: '',
                exitCode: 0,
                signal: null,
                durationMs: 1,
              }
            : target.run(command, opts);
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
}

describe('the nodes say they are the simulated lab before the run starts', () => {
  it('nodeDmi: the lab’s nodes say so; a real node does not; a node that does not answer gives why and counts as not saying so', async () => {
    const lab = createLab({ scenario: 'good-qsfp56', clock: new VirtualClock() });
    const runners = new Map(lab.nodes.map((n) => [n, lab.runner(n)]));
    expect(saysSimulated(await nodeDmi(runners))).toBe(true);
    const real = new Map(lab.nodes.map((n) => [n, realDmi(lab.runner(n))]));
    const realFacts = await nodeDmi(real);
    expect(saysSimulated(realFacts)).toBe(false);
    expect(realFacts.get('spark-a')).toMatchObject({ sysVendor: 'NVIDIA', simulated: false });
    const gone: CommandRunner = {
      ...lab.runner('spark-b'),
      run: () => Promise.reject(new TransportError('spark-b', 'connect ECONNREFUSED', 'check the node')),
    };
    const facts = await nodeDmi(new Map([['spark-b', gone]]));
    expect(facts.get('spark-b')).toEqual({ unanswered: expect.stringContaining('ECONNREFUSED') });
    expect(saysSimulated(facts)).toBe(false);
  });

  it('a run on nodes that said so is simulated in its journal’s first line, its run.log, live state and metrics from the start', async () => {
    const clock = new VirtualClock(1_767_225_600_000);
    const lab = createLab({ scenario: 'good-qsfp56', clock });
    const runners = new Map<string, CommandRunner>(lab.nodes.map((n) => [n, lab.runner(n)]));
    const protocol = loadProtocol(QUICK);
    const deps = cliRunDeps({
      clock,
      runners,
      nodes: lab.nodes.map((name) => ({ name, host: name, cage: 'auto' as const })),
      protocol,
      protocolText: readFileSync(QUICK, 'utf8'),
      outDir: mkdtempSync(join(tmpdir(), 'cq-marks-')),
      label: 'served',
      signal: new AbortController().signal,
      // no --sim: nodes reached as real ones, which said what they are
      simulatedNodes: saysSimulated(await nodeDmi(runners)),
    });
    expect(deps.simulated).toBe(true);
    const metrics = new RunMetrics();
    // What the run observers hand the metrics when the run starts (src/store/run-observers.ts).
    const observed = observedRunOf(deps);
    metrics.started(observed.runId, { label: observed.label, protocol: observed.protocol.name, simulated: observed.simulated });
    expect(await metrics.prometheus.metrics()).toMatch(/^cablequal_run_info\{run="[^"]+",label="served",protocol="quick",simulated="true"\} 1$/m);

    // live.json (cablequal status) as written at the start, read when the first benchmark phase asks its gate (a point of
    // the run itself: a status tick is a wall-clock timer, and a virtual-time run may end before the first one).
    const live = join(deps.outDir, 'served', deps.runId, 'live.json');
    let liveAtStart: { simulated?: boolean } | null = null;
    const { record, runDir } = await runQualification({
      ...deps,
      benchmarkGate: async () => {
        if (liveAtStart === null && existsSync(live)) liveAtStart = JSON.parse(readFileSync(live, 'utf8')) as { simulated?: boolean };
        return () => undefined;
      },
    });
    expect(record.outcome).toBe('PASS');
    const first = JSON.parse(readFileSync(join(runDir, 'journal.jsonl'), 'utf8').split('\n')[0]!) as { type: string; simulated: boolean };
    expect(first).toMatchObject({ type: 'run-start', simulated: true });
    const started = readFileSync(join(runDir, 'run.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg: string; simulated?: boolean })
      .find((l) => l.msg === 'run started');
    expect(started).toMatchObject({ simulated: true });
    expect(liveAtStart).toMatchObject({ simulated: true });
    expect(record.simulated).toBe(true);
  });
});
