// `npm run bench`: every section, each figure the median of several repetitions with min and max; writes
// BENCHMARKS.md and bench/results.json. Not part of `npm test`. Cleans up its sshd nodes and temp run dirs.
import { execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchColdStart } from './cold-start.js';
import { benchParse } from './parse-cost.js';
import { renderMarkdown, type BenchResults } from './report.js';
import { benchFailingClone, benchGrade, makeTenHzJournal } from './sim-runs.js';
import { benchSimCli } from './sim-cli.js';
import { benchSsh } from './ssh-sampler.js';
import { benchRunPage } from './run-page.js';
import { benchSshSpeed } from './ssh-speed.js';
import { benchStore } from './store.js';
import { benchStoreBusy } from './store-busy.js';
import { benchBatchThroughput } from './batch-throughput.js';
import { benchWatch } from './watch.js';

const root = new URL('..', import.meta.url).pathname;
const log = (s: string) => process.stderr.write(`${s}\n`);
const quick = process.argv.includes('--quick');
const reps = quick ? 1 : 3;
// Section 1's plan, the same for a full run and for `--only ssh`.
const sshPlan = { reps, persistentTicks: 100, naiveTicks: 6, fixedRateTicks: 100, fixedRateIntervalMs: 50 };

const machine = {
  date: new Date().toISOString(),
  nproc: cpus().length,
  cpuModel: cpus()[0]?.model ?? 'unknown',
  node: process.version,
  loadAvgAtStart: loadavg(),
  openssh: (() => {
    try {
      return execSync('ssh -V 2>&1', { encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })(),
  shared: 'yes: 2 cores shared with other engineers running test suites during the bench',
};

const work = mkdtempSync(join(tmpdir(), 'cq-bench-runs-'));
const t0 = performance.now();
// The earlier build the cold-start section compares with (bench/cold-start.ts), if any.
const coldBefore = process.env.CQ_BENCH_BEFORE
  ? { root: process.env.CQ_BENCH_BEFORE, label: process.env.CQ_BENCH_BEFORE_LABEL ?? process.env.CQ_BENCH_BEFORE }
  : undefined;
// `--only grade,full`: re-run those sections (ssh, grade, full, clone, store, runpage, coldstart, sshspeed, storebusy,
// throughput, watch) into
// the existing results; the old figures of grade and storebusy are kept as `before` so BENCHMARKS.md shows both (full
// measures its own before: CQ_BENCH_BEFORE, bench/sim-cli.ts).
const onlyArg = process.argv.indexOf('--only');
const only = onlyArg >= 0 ? (process.argv[onlyArg + 1] ?? '').split(',').filter(Boolean) : null;
if (only) {
  try {
    const path = join(root, 'bench', 'results.json');
    const prev = JSON.parse(readFileSync(path, 'utf8')) as BenchResults;
    const startLoad = loadavg();
    const next: BenchResults = { ...prev };
    const before = { date: prev.machine.date, ...(prev.before ?? {}) };
    if (only.includes('full')) {
      log('full default procedure and a 20-cable batch, simulated, through the CLI');
      next.full = await benchSimCli(reps, work, log);
    }
    if (only.includes('clone')) next.clone = await benchFailingClone(reps, work, log);
    if (only.includes('store')) {
      log('results store and dashboard at 10,000 runs (SQLite and PostgreSQL)');
      next.store = await benchStore(join(work, 'store'), log);
    }
    if (only.includes('runpage')) {
      log('the run page of a 75-minute run (Chromium)');
      const rp = await benchRunPage(join(work, 'run-page'), log);
      if (rp) next.runPage = rp;
    }
    if (only.includes('sshspeed')) {
      log('full default protocol over SSH at x20 (sim serve)');
      next.sshSpeed = await benchSshSpeed(work, log);
    }
    if (only.includes('coldstart')) {
      log('CLI cold start (--help, status, verify)');
      next.coldStart = benchColdStart(quick ? 5 : 15, join(work, 'cold'), log, coldBefore);
    }
    if (only.includes('storebusy')) {
      log('sampling while another process holds the results store (real time, about 3 minutes)');
      if (prev.storeBusy) before.storeBusy ??= prev.storeBusy;
      next.storeBusy = await benchStoreBusy(join(work, 'store-busy'), log);
    }
    if (only.includes('throughput')) {
      log('batch throughput, one cage and both cages (simulated, full default protocol)');
      next.throughput = await benchBatchThroughput(work, log);
    }
    if (only.includes('watch')) {
      log('cablequal watch: a simulated day, and the tick script on a node');
      next.watch = await benchWatch(reps, work, log);
    }
    if (only.includes('ssh')) {
      log('sampler over SSH (real sshd on loopback, two nodes)');
      next.ssh = await benchSsh(sshPlan, log);
    }
    if (only.includes('grade')) {
      log('grading: generating the 10 Hz journal');
      const journal = await makeTenHzJournal(work);
      log(`  journal: ${journal.lines} lines, ${(journal.bytes / 1e6).toFixed(1)} MB, written in ${(journal.wallMs / 1000).toFixed(1)} s`);
      before.gradeWallMs ??= prev.grade.wallMs;
      before.gradeMaxRssMB ??= prev.grade.maxRssMB;
      before.gradeJournalBytes ??= prev.grade.journal.bytes;
      next.grade = { journal: { ...journal, runDir: undefined }, ...benchGrade(journal.runDir, 5, log) };
    }
    next.before = before;
    next.reruns = [
      ...(prev.reruns ?? []),
      {
        date: new Date().toISOString(),
        sections: only,
        loadAvgAtStart: startLoad,
        loadAvgAtEnd: loadavg(),
        note: process.env.CQ_BENCH_NOTE ?? 'machine possibly shared with other test runs: see the load averages',
      },
    ];
    writeFileSync(path, `${JSON.stringify(next, null, 2)}\n`);
    writeFileSync(join(root, 'BENCHMARKS.md'), renderMarkdown(next));
    log(`done in ${((performance.now() - t0) / 1000).toFixed(0)} s: BENCHMARKS.md, bench/results.json (${only.join(', ')})`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.exit(0);
}
try {
  log('1/5 sampler over SSH (real sshd on loopback, two nodes)');
  const ssh = await benchSsh(sshPlan, log);
  log('2/5 parse cost');
  const parse = await benchParse(5, 200);
  log('4/5 full default procedure and a 20-cable batch, simulated, through the CLI');
  const full = await benchSimCli(reps, work, log);
  log('5/5 failing-clone timing');
  const clone = await benchFailingClone(reps, work, log);
  log('3/5 grading: generating the 10 Hz journal');
  const journal = await makeTenHzJournal(work);
  log(
    `  journal: ${journal.lines} lines, ${(journal.bytes / 1e6).toFixed(1)} MB, ${journal.simulatedS} simulated s, written in ${(journal.wallMs / 1000).toFixed(1)} s`,
  );
  const grade = benchGrade(journal.runDir, 5, log);
  log('6/6 results store and dashboard at 10,000 runs (SQLite and PostgreSQL)');
  const store = await benchStore(join(work, 'store'), log);
  log('7/9 the run page of a 75-minute run (Chromium)');
  const runPage = (await benchRunPage(join(work, 'run-page'), log)) ?? undefined;
  log('8/10 CLI cold start (--help, status, verify)');
  const coldStart = benchColdStart(quick ? 5 : 15, join(work, 'cold'), log, coldBefore);
  log('9/10 full default protocol over SSH at x20 (sim serve)');
  const sshSpeed = await benchSshSpeed(work, log);
  log('10/11 sampling while another process holds the results store (real time)');
  const storeBusy = await benchStoreBusy(join(work, 'store-busy'), log);
  log('11/11 batch throughput, one cage and both cages (simulated, full default protocol)');
  const throughput = await benchBatchThroughput(work, log);
  log('12/12 cablequal watch: a simulated day, and the tick script on a node');
  const watch = await benchWatch(reps, work, log);
  const results = {
    machine: { ...machine, loadAvgAtEnd: loadavg() },
    benchWallS: (performance.now() - t0) / 1000,
    ssh,
    parse,
    grade: { journal: { ...journal, runDir: undefined }, ...grade },
    full,
    clone,
    store,
    runPage,
    coldStart,
    sshSpeed,
    storeBusy,
    throughput,
    watch,
  };
  writeFileSync(join(root, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(root, 'BENCHMARKS.md'), renderMarkdown(results));
  log(`done in ${results.benchWallS.toFixed(0)} s: BENCHMARKS.md, bench/results.json`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
