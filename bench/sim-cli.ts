// Section 4: the simulated lab as an operator runs it, `node bin/cablequal.js run --sim good-qsfp56` with every report
// written (journal, record, certificate, CSVs, run.log, the results store), and a 20-cable quick batch; wall time and
// the process's CPU time (user + system, all its threads) of each, with the load average around it: the 2 cores are
// shared with other work, so the CPU time is the figure that compares. `CQ_BENCH_BEFORE=<checkout>` measures that
// checkout's build the same way, interleaved with this one, as the before of a before/after (CQ_BENCH_BEFORE_NAME: what
// to call it in BENCHMARKS.md, default its path).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { summarize, type Summary } from './stats.js';

const ROOT = new URL('..', import.meta.url).pathname;
// Loaded into the measured process: at exit it prints its own resource usage as the last line of stderr (pipes are
// written synchronously on Linux, so the line gets out before the process is gone).
const USAGE_HOOK =
  'data:text/javascript,process.on("exit",()=>{const u=process.resourceUsage();process.stderr.write("\\n@@cq-usage "+JSON.stringify({cpuMs:(u.userCPUTime+u.systemCPUTime)/1e3,maxRssMB:u.maxRSS/1024})+"\\n")})';

interface Usage {
  wallMs: number;
  cpuMs: number;
  maxRssMB: number;
  code: number | null;
  stdout: string;
}

// One CLI command of a checkout in a fresh process, in `cwd`.
function measure(checkout: string, args: string[], cwd: string): Promise<Usage> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['--import', USAGE_HOOK, join(checkout, 'bin', 'cablequal.js'), ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = performance.now() - t0;
      const line = stderr.split('\n').find((l) => l.startsWith('@@cq-usage '));
      if (!line) return reject(new Error(`no resource usage from ${args.join(' ')} (exit ${code}): ${stderr.slice(-400)}`));
      const u = JSON.parse(line.slice('@@cq-usage '.length)) as { cpuMs: number; maxRssMB: number };
      resolve({ wallMs, ...u, code, stdout });
    });
  });
}

// One full default procedure, `run --sim good-qsfp56 --json`, into a fresh reports directory.
interface FullRun {
  wallMs: number;
  cpuMs: number;
  maxRssMB: number;
  outcome: string;
  ticks: number;
  simulatedS: number;
}

async function fullRun(checkout: string, work: string): Promise<FullRun> {
  const cwd = mkdtempSync(join(work, 'full-'));
  try {
    const u = await measure(checkout, ['run', '--sim', 'good-qsfp56', '--out', 'reports', '--json'], cwd);
    const j = JSON.parse(u.stdout) as { outcome: string; runDir: string; sampling: { ticks: number } };
    const simulatedS = journalEndS(resolve(cwd, j.runDir, 'journal.jsonl'));
    return { wallMs: u.wallMs, cpuMs: u.cpuMs, maxRssMB: u.maxRssMB, outcome: j.outcome, ticks: j.sampling.ticks, simulatedS };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

// Seconds into the run of a journal's last line.
function journalEndS(path: string): number {
  const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
  return (JSON.parse(lines.at(-1)!) as { tS?: number }).tS ?? 0;
}

// The 20-cable box: the four kinds of cable of the shipped scenarios in turn, each with its own generated serial.
const BOX_SCENARIOS = ['good-qsfp56', 'failing-clone', 'good-qsfp112', 'marginal-qsfp112'];
export const BATCH_CABLES = 20;

interface BatchRun {
  wallMs: number;
  cpuMs: number;
  maxRssMB: number;
  code: number | null;
  outcomes: Record<string, number>;
}

async function batchRun(checkout: string, work: string): Promise<BatchRun> {
  const cwd = mkdtempSync(join(work, 'batch-'));
  try {
    const labels = Array.from({ length: BATCH_CABLES }, (_, i) => `c${i + 1}`);
    writeFileSync(join(cwd, 'box.csv'), `label\n${labels.join('\n')}\n`);
    const sim = labels.map((_, i) => `${BOX_SCENARIOS[i % BOX_SCENARIOS.length]}=BENCH${String(i + 1).padStart(3, '0')}`).join(',');
    const u = await measure(checkout, ['batch', '--manifest', 'box.csv', '--sim', sim, '--protocol', 'quick', '--out', 'b'], cwd);
    // The batch's own state: each cable's outcome (batch.csv quotes reasons and node facts that hold commas).
    const state = JSON.parse(readFileSync(join(cwd, 'b', 'batch-state.json'), 'utf8')) as { cables: { outcome?: string | null }[] };
    const outcomes: Record<string, number> = {};
    for (const c of state.cables) outcomes[c.outcome ?? 'untested'] = (outcomes[c.outcome ?? 'untested'] ?? 0) + 1;
    return { wallMs: u.wallMs, cpuMs: u.cpuMs, maxRssMB: u.maxRssMB, code: u.code, outcomes };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

// A 3-cable cluster, `run --sim triangle-one-bad --cluster --json` (the default protocol on every cable at once).
interface ClusterRun {
  wallMs: number;
  cpuMs: number;
  maxRssMB: number;
  code: number | null;
  outcomes: Record<string, number>;
}

async function clusterRun(checkout: string, work: string): Promise<ClusterRun> {
  const cwd = mkdtempSync(join(work, 'cluster-'));
  try {
    const u = await measure(checkout, ['run', '--sim', 'triangle-one-bad', '--cluster', '--out', 'reports', '--json'], cwd);
    const outcomes: Record<string, number> = {};
    for (const c of (JSON.parse(u.stdout) as { cables: { outcome: string }[] }).cables) outcomes[c.outcome] = (outcomes[c.outcome] ?? 0) + 1;
    return { wallMs: u.wallMs, cpuMs: u.cpuMs, maxRssMB: u.maxRssMB, code: u.code, outcomes };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

// The figures of one checkout.
export interface CliFigures {
  checkout: string;
  runs: FullRun[];
  wallMs: Summary | null;
  cpuMs: Summary | null;
  maxRssMB: Summary | null;
  batch: BatchRun | null;
  cluster?: ClusterRun | null;
}

const figures = (checkout: string, runs: FullRun[], batch: BatchRun | null): CliFigures => ({
  checkout,
  runs,
  wallMs: summarize(runs.map((r) => r.wallMs)),
  cpuMs: summarize(runs.map((r) => r.cpuMs)),
  maxRssMB: summarize(runs.map((r) => r.maxRssMB)),
  batch,
});

// Section 4: `reps` full procedures of this checkout (and of CQ_BENCH_BEFORE's, interleaved), then one batch of each.
export async function benchSimCli(reps: number, work: string, log: (s: string) => void) {
  const before = process.env['CQ_BENCH_BEFORE'] || null;
  const loadAvgAtStart = loadavg();
  const after: FullRun[] = [];
  const prior: FullRun[] = [];
  for (let i = 0; i < reps; i++) {
    if (before) {
      prior.push(await fullRun(before, work));
      log(
        `  before (${before}) rep ${i + 1}/${reps}: ${prior.at(-1)!.outcome} in ${(prior.at(-1)!.wallMs / 1000).toFixed(2)} s wall, ${(prior.at(-1)!.cpuMs / 1000).toFixed(2)} s CPU`,
      );
    }
    after.push(await fullRun(ROOT, work));
    log(
      `  full procedure rep ${i + 1}/${reps}: ${after.at(-1)!.outcome} in ${(after.at(-1)!.wallMs / 1000).toFixed(2)} s wall, ${(after.at(-1)!.cpuMs / 1000).toFixed(2)} s CPU`,
    );
  }
  const batch = await batchRun(ROOT, work);
  log(
    `  batch of ${BATCH_CABLES} (quick): ${(batch.wallMs / 1000).toFixed(1)} s wall, ${(batch.cpuMs / 1000).toFixed(1)} s CPU, ${JSON.stringify(batch.outcomes)}`,
  );
  const cluster = await clusterRun(ROOT, work);
  log(
    `  cluster of 3 cables (triangle-one-bad): ${(cluster.wallMs / 1000).toFixed(1)} s wall, ${(cluster.cpuMs / 1000).toFixed(1)} s CPU, ${JSON.stringify(cluster.outcomes)}`,
  );
  const beforeBatch = before ? await batchRun(before, work) : null;
  if (beforeBatch) log(`  before batch: ${(beforeBatch.wallMs / 1000).toFixed(1)} s wall, ${(beforeBatch.cpuMs / 1000).toFixed(1)} s CPU`);
  return {
    command: 'node bin/cablequal.js run --sim good-qsfp56 --json (default protocol, every report and the results store written)',
    batchCommand: `node bin/cablequal.js batch --manifest <${BATCH_CABLES} cables> --sim ${BOX_SCENARIOS.join(',')},... --protocol quick`,
    loadAvgAtStart,
    loadAvgAtEnd: loadavg(),
    after: { ...figures(ROOT, after, batch), cluster, checkout: 'this tree' },
    before: before ? { ...figures(before, prior, beforeBatch), checkout: process.env['CQ_BENCH_BEFORE_NAME'] || before } : null,
  };
}
