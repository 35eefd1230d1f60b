// Section 11: a batch's throughput, one cage against both (issue 25 item 3). Two simulated batches of good QSFP56 cables
// through the CLI (`cablequal batch --sim ... --db off`, in process, virtual time), the full default protocol, the
// simulated operator taking 2 min to swap each cable (--sim-swap 120) and the nodes 3 min to reboot (--sim-reboot 180):
// one cable per swap (--port 1), then two (--port both). Good cables only, so that every run is the whole procedure (a
// FAIL ends early and would flatter the pace). What each batch printed and recorded: cables qualified per hour over the
// batch and per pair per day, and its swap cycles' mean swap, reboot, settle and qualification times with the day they
// give per pair (the steady state: a batch's first cables are in from the start, with no swap and no reboot).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { BatchState } from '../src/batch/state.js';
import { throughputOf, type Throughput } from '../src/batch/throughput.js';
import { runCli } from '../test/helpers/cli.js';

// What section 11 runs: enough cables for two swap cycles after the first of each batch.
export const THROUGHPUT_PLAN = { swapS: 120, rebootS: 180, protocol: 'spark-burnin', cables: { one: 3, both: 6 } };

export interface ThroughputBenchResult {
  plan: typeof THROUGHPUT_PLAN;
  date: string;
  loadAvg: { start: number[]; end: number[] };
  one: ThroughputRun;
  both: ThroughputRun;
}

interface ThroughputRun {
  port: string;
  outcomes: string[];
  wallS: number; // real time the batch took in virtual time (the CLI's own cost)
  printed: string[]; // the lines the batch printed about its throughput
  throughput: Throughput;
}

async function batch(work: string, port: '1' | 'both', cables: number, log: (s: string) => void): Promise<ThroughputRun> {
  const cwd = mkdtempSync(join(work, `throughput-${port}-`));
  const box = Array.from({ length: cables }, (_, i) => `c${i + 1},good-qsfp56=SIMTP${port === 'both' ? 'B' : 'O'}${String(i + 1).padStart(2, '0')}`);
  writeFileSync(join(cwd, 'box.csv'), `label,scenario\n${box.join('\n')}\n`);
  const t0 = performance.now();
  const { swapS, rebootS, protocol } = THROUGHPUT_PLAN;
  const r = await runCli(
    ['batch', '--manifest', 'box.csv', '--sim', 'manifest', '--port', port, '--protocol', protocol, '--out', 'b', '--db', 'off'].concat([
      '--sim-swap',
      String(swapS),
      '--sim-reboot',
      String(rebootS),
    ]),
    { cwd },
  );
  const wallS = (performance.now() - t0) / 1000;
  if (r.code !== 0) throw new Error(`batch --port ${port} exited ${r.code}: ${r.err.slice(-600)}`);
  const state = JSON.parse(readFileSync(join(cwd, 'b', 'batch-state.json'), 'utf8')) as BatchState;
  const throughput = throughputOf(state)!;
  const printed = r.out.split('\n').filter((l) => l.startsWith('throughput: ') || l.startsWith('  a swap cycle'));
  for (const l of printed) log(`  --port ${port}: ${l.trim()}`);
  return { port, outcomes: state.cables.map((c) => c.outcome ?? c.status), wallS, printed, throughput };
}

// Section 11.
export async function benchBatchThroughput(work: string, log: (s: string) => void): Promise<ThroughputBenchResult> {
  const start = loadavg();
  const one = await batch(work, '1', THROUGHPUT_PLAN.cables.one, log);
  const both = await batch(work, 'both', THROUGHPUT_PLAN.cables.both, log);
  return { plan: THROUGHPUT_PLAN, date: new Date().toISOString(), loadAvg: { start, end: loadavg() }, one, both };
}
