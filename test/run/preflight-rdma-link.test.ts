// A node without ibdev2netdev (no MLNX/DOCA tools) lists its RDMA ports with iproute2's `rdma link`, and an older
// rdma tool prints them as `<index>/<port>: <dev>/<port>: ...` (samples/rdma-link/): preflight places the rails from
// either (docs/formats.md §7). Simulated lab; the node's `rdma link show` answer is rewritten at test time into the
// older layout, in the shape the recorded MLNX_OFED 4.7 sample shows.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadProtocol } from '../../src/protocol/index.js';
import { runQualification } from '../../src/run/qualify.js';
import { persistentTickSource } from '../../src/run/tick-source.js';
import { createLab } from '../../src/sim/lab.js';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import type { CommandRunner } from '../../src/transport/types.js';

const QUICK = join(import.meta.dirname, '..', '..', 'protocols', 'quick.json');

// good-qsfp56 with spark-b missing the given programs.
function scenarioWithout(missing: string[]): string {
  const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8')) as { name: string; nodes: Record<string, unknown>[] };
  s.name = 'no-ibdev2netdev';
  s.nodes[1]!['missing'] = missing;
  const file = join(mkdtempSync(join(tmpdir(), 'cq-rdma-')), 'scenario.json');
  writeFileSync(file, JSON.stringify(s));
  return file;
}

// `link <dev>/<port> <attrs>` lines as the older rdma tool prints them: `<index>/<port>: <dev>/<port>: <attrs>`,
// optionally without the netdev the tools before iproute2 4.18 did not print.
const olderLayout = (text: string, netdev: boolean) =>
  text
    .split('\n')
    .map((l, i) => l.replace(/^link (\S+)\/(\d+) /, `${i}/$2: $1/$2: `).replace(netdev ? /$^/ : / netdev \S+/, ''))
    .join('\n');

// spark-b's runner with its `rdma link show` answer rewritten, recording every command it is asked.
function olderRdma(r: CommandRunner, seen: string[], netdev = true): CommandRunner {
  return new Proxy(r, {
    get(target, prop, recv) {
      if (prop !== 'run') return Reflect.get(target, prop, recv);
      return async (command: string, opts?: object) => {
        seen.push(command);
        const res = await target.run(command, opts);
        return command === 'rdma link show' ? { ...res, stdout: olderLayout(res.stdout, netdev) } : res;
      };
    },
  });
}

async function qualify(scenario: string, wrap: (r: CommandRunner) => CommandRunner) {
  const clock = new VirtualClock();
  const lab = createLab({ scenario, clock });
  const runners = new Map(lab.nodes.map((n) => [n, n === 'spark-b' ? wrap(lab.runner(n)) : lab.runner(n)]));
  return runQualification({
    clock,
    runners,
    nodes: lab.nodes.map((name) => ({ name, host: name, cage: 'auto' as const })),
    protocol: loadProtocol(QUICK),
    protocolText: readFileSync(QUICK, 'utf8'),
    outDir: mkdtempSync(join(tmpdir(), 'cq-rdma-run-')),
    label: 'rdma-link',
    runId: 'run1',
    log: pino({ level: 'silent' }),
    signal: new AbortController().signal,
    simulated: true,
    makeTickSource: (ns, intervalS) => persistentTickSource(ns, clock, { intervalS }),
  });
}

describe('preflight on a node whose only link lister is the older rdma tool', () => {
  it('places the rails from the index-prefixed `rdma link` and the run qualifies the cable', async () => {
    const seen: string[] = [];
    const { record } = await qualify(scenarioWithout(['ibdev2netdev']), (r) => olderRdma(r, seen));
    expect(record.outcome, JSON.stringify(record.reasons)).toBe('PASS');
    expect(seen).toContain('rdma link show');
    expect(seen).not.toContain('ibdev2netdev');
    const b = record.nodes.find((n) => n.name === 'spark-b')!;
    expect(b.cage?.rails.map((r) => [r.netdev, r.rdmaDevice])).toEqual([
      ['enp1s0f1np1', 'rocep1s0f1'],
      ['enP2p1s0f1np1', 'roceP2p1s0f1'],
    ]);
  });

  it('ends ERROR preflight-rails, saying what to install, when that rdma tool prints no netdev', async () => {
    const { record } = await qualify(scenarioWithout(['ibdev2netdev']), (r) => olderRdma(r, [], false));
    expect(record.outcome).toBe('ERROR');
    expect(record.reasons).toEqual([
      expect.objectContaining({
        rule: 'preflight-rails',
        node: 'spark-b',
        message: 'spark-b: rdma link names no netdev for its 4 port(s): this rdma tool is too old to place the rails',
      }),
    ]);
  });

  it('ends ERROR preflight-tools naming ibdev2netdev and the rdma fallback when neither is there', async () => {
    const { record } = await qualify(scenarioWithout(['ibdev2netdev', 'rdma']), (r) => r);
    expect(record.outcome).toBe('ERROR');
    expect(record.reasons).toEqual([
      expect.objectContaining({
        rule: 'preflight-tools',
        node: 'spark-b',
        message: 'spark-b: missing ibdev2netdev (not on the PATH of a non-interactive SSH session)',
      }),
    ]);
    expect(JSON.stringify(record.reasons)).toContain('without it cablequal reads `rdma link`');
  });
});
