// BENCHMARKS.md from the bench results: one table per section, the machine, and a met / not met line per target.
import type { benchParse } from './parse-cost.js';
import type { benchFailingClone, benchGrade, makeTenHzJournal } from './sim-runs.js';
import type { benchSimCli, CliFigures } from './sim-cli.js';
import type { benchSsh } from './ssh-sampler.js';
import type { RunPageBenchResult } from './run-page.js';
import type { ColdStartResult } from './cold-start.js';
import type { SshSpeedResult } from './ssh-speed.js';
import type { StoreBenchResult } from './store.js';
import type { StoreBusyBenchResult } from './store-busy.js';
import type { ThroughputBenchResult } from './batch-throughput.js';
import type { WatchBenchResult } from './watch.js';
import { watchSection } from './watch-report.js';
import { fmt, fmtSummary, type Summary } from './stats.js';

// Everything run.ts measured.
export interface BenchResults {
  machine: { date: string; nproc: number; cpuModel: string; node: string; openssh: string; shared: string; loadAvgAtStart: number[]; loadAvgAtEnd: number[] };
  benchWallS: number;
  ssh: Awaited<ReturnType<typeof benchSsh>>;
  parse: Awaited<ReturnType<typeof benchParse>>;
  grade: ReturnType<typeof benchGrade> & { journal: Omit<Awaited<ReturnType<typeof makeTenHzJournal>>, 'runDir'> & { runDir?: undefined } };
  // Section 4: the CLI's full procedure and batch (bench/sim-cli.ts); results of earlier benches hold the in-process
  // figure instead (LegacyFull).
  full: Awaited<ReturnType<typeof benchSimCli>> | LegacyFull;
  clone: Awaited<ReturnType<typeof benchFailingClone>>;
  store?: StoreBenchResult;
  runPage?: RunPageBenchResult;
  coldStart?: ColdStartResult;
  sshSpeed?: SshSpeedResult;
  storeBusy?: StoreBusyBenchResult;
  throughput?: ThroughputBenchResult;
  watch?: WatchBenchResult;
  // `--only a,b` re-runs: which sections were measured again, when, under what load; the rest are from `machine.date`.
  reruns?: { date: string; sections: string[]; loadAvgAtStart: number[]; loadAvgAtEnd: number[]; note?: string }[];
  // The previous figures of the re-run sections, kept so the file shows before and after side by side.
  before?: {
    date: string;
    gradeWallMs?: Summary | null;
    gradeMaxRssMB?: Summary | null;
    gradeJournalBytes?: number;
    fullWallMs?: Summary | null;
    storeBusy?: StoreBusyBenchResult;
  };
}

// Section 4 as benches before bench/sim-cli.ts measured it: runQualification in process, no report writers.
interface LegacyFull {
  runs: { wallMs: number; outcome: string; ticks: number; simulatedS: number }[];
  wallMs: Summary | null;
}
const isCli = (f: BenchResults['full']): f is Awaited<ReturnType<typeof benchSimCli>> => 'after' in f;

const verdict = (met: boolean | null, target: string, because: string) =>
  `- **${target}: ${met === null ? 'not measured' : met ? 'met' : 'not met'}**, because ${because}`;

// Render the whole file.
export function renderMarkdown(r: BenchResults): string {
  const m = r.machine;
  const v = (i: number) => r.ssh.variants[i]!;
  const s = (i: number, f: string, d = 1) => fmtSummary(v(i).summary[f], d);
  const med = (x: Summary | null | undefined) => x?.median ?? null;
  const persistentRate = med(v(0).summary['ticksPerS']);
  const skew20 = med(v(2).summary['skewP99Ms']);
  const ratio = med(r.ssh.ratio);
  const gradeMs = med(r.grade.wallMs);
  const gradeRss = med(r.grade.maxRssMB);
  const cli = isCli(r.full) ? r.full : null;
  const c = r.clone.runs[0];
  const out: string[] = [];
  out.push('# Benchmarks', '');
  out.push(`Written by \`npm run bench\` (bench/run.ts) on ${m.date}; raw numbers in bench/results.json. Every figure is the`);
  out.push('median of several repetitions in this one bench run, with (min–max) beside it.', '');
  const loads = `load average ${m.loadAvgAtStart.map((x) => x.toFixed(1)).join(' / ')} at start, ${m.loadAvgAtEnd.map((x) => x.toFixed(1)).join(' / ')} at end`;
  // The load at the end is mostly the bench's own; the one at the start says whether other work was running.
  if ((m.loadAvgAtStart[0] ?? 0) > 1.0) {
    out.push('**The machine was shared**: other work ran on the same 2 cores during the run, so absolute times');
    out.push(`are noisy and pessimistic (${loads}).`, '');
  } else {
    out.push(`The machine ran nothing else during the run (${loads}; the bench itself loads it).`, '');
  }
  out.push('| machine | |', '|---|---|');
  out.push(
    `| CPU | ${m.cpuModel}, ${m.nproc} cores (nproc) |`,
    `| Node.js | ${m.node} |`,
    `| OpenSSH | ${m.openssh} |`,
    `| bench wall time | ${r.benchWallS.toFixed(0)} s |`,
    '',
  );

  out.push('## 1. Sampler over SSH: persistent shell vs a fresh exec per command', '');
  out.push('Two "nodes" = two real OpenSSH sshd on 127.0.0.1 (own keys/config in a temp dir, random ports), each in a private mount');
  out.push('namespace with GENERATED stand-ins rendered by the simulated lab (good-qsfp56): `ethtool` (`-S` = the 1,681-line mlx5');
  out.push('dump, link settings, FEC), `nvidia-smi`, and a 6-device `/sys/class/hwmon` tree bind-mounted over /sys/class.');
  out.push(
    `Stand-ins: ${r.ssh.standIns === 'c' ? 'one small C program compiled at bench start (bench/ssh-nodes.ts), one exec per call like the real tools; the last row runs `#!/bin/sh` + `cat` scripts instead (two execs and a shell start per call)' : '`#!/bin/sh` + `cat` scripts (no C compiler found), two execs and a shell start per call where the real tools cost one'}.`,
  );
  out.push('Client: SshRunner + src/sampling (measureSampling) with the sample set a run reads at 20 Hz (src/run/tick-source.ts runSampleSet,');
  out.push("periods in seconds): both rails' *_phy counters every tick (through the shell's persistent filter: one `ethtool` exec per rail),");
  out.push("node time from bash's `$EPOCHREALTIME`, FEC block counters every 20th tick (1 s), NIC/GPU gauges every 100th (5 s), link every 200th (10 s).");
  out.push('"1 Hz sample set" = the default protocol\'s tick (FEC every tick, gauges every 5th, link every 10th) read back to back.');
  out.push(
    'The naive way = the same items, each a fresh `runner.run()` (a new SSH exec channel, so sshd starts a new shell that reads the rc), with `ethtool -S | grep`.',
    '',
  );
  out.push(`**Login shell chosen**: bash with a ~/.bashrc (no interactive guard, as in rcs where tool inits were appended on top) sourcing`);
  out.push('four files: PATH, 20 aliases, `eval "$(dircolors -b)"`, and a tool init with three command substitutions (uname, hostname, tput);');
  out.push(`login shells reach it via ~/.bash_profile. Measured start-up on this machine: ${fmtSummary(r.ssh.rcStartupMs)} ms per \`bash\` (fork/exec is`);
  out.push(
    `slow here: one fork+exec of /bin/true costs ${fmtSummary(r.ssh.forkExecMs, 2)} ms). sshd sets HOME to the bench home (SetEnv), never the machine user's.`,
    '',
  );
  out.push('| variant | ticks/s | interval p50 ms | interval p99 ms | skew p99 ms | controller CPU ms/tick | missing / item errors |');
  out.push('|---|---|---|---|---|---|---|');
  for (let i = 0; i < r.ssh.variants.length; i++) {
    out.push(
      `| ${v(i).name} (${v(i).ticks} ticks × ${v(i).runs.length}) | ${s(i, 'ticksPerS', 2)} | ${s(i, 'intervalP50Ms')} | ${s(i, 'intervalP99Ms')} | ${s(i, 'skewP99Ms', 2)} | ${s(i, 'cpuPerTickMs', 2)} | ${v(i).runs.reduce((a, x) => a + x.missingSamples, 0)} / ${v(i).runs.reduce((a, x) => a + x.itemErrors, 0)} |`,
    );
  }
  out.push('');
  out.push(`Ratio persistent / naive (ticks/s, per repetition pair): **${fmtSummary(r.ssh.ratio, 2)}x**.`);
  out.push(
    `Round trip of the shell builtin \`:\` (nothing forked on the node): ${fmtSummary(r.ssh.emptyRoundTripMs.persistent, 2)} ms over the open shell, ${fmtSummary(r.ssh.emptyRoundTripMs.freshExec)} ms as a fresh exec.`,
    '',
  );
  out.push('## 2. Parse cost (controller CPU, µs per call)', '');
  out.push(`| input | µs per call |`, '|---|---|');
  out.push(
    `| \`ethtool -S\` full mlx5 dump (${r.parse.statsLines} lines, ${(r.parse.statsBytes / 1024).toFixed(0)} KiB, generated by src/sim/format-ethtool.ts) | ${fmtSummary(r.parse.fullStatsUs)} |`,
  );
  out.push(`| \`ethtool -S \\| grep _phy\` as the sampler reads it (${r.parse.phyLines} lines) | ${fmtSummary(r.parse.phyStatsUs)} |`);
  out.push(`| one node's full tick, assembleSample (time, 2× phy stats, 2× link, FEC, hwmon, GPU) | ${fmtSummary(r.parse.tickUs)} |`);
  out.push(`| the same with both full \`ethtool -S\` dumps (fullStats) | ${fmtSummary(r.parse.tickFullStatsUs)} |`, '');

  out.push('## 3. Grading a 70-minute 10 Hz two-node journal', '');
  const j = r.grade.journal;
  out.push(`Journal written by the real run code on the simulated lab (good-qsfp56, spark-burnin with samplingIntervalS 0.1): the two soaks are`);
  out.push(
    `70 minutes; the whole procedure ${j.simulatedS} simulated s, ${j.sampleLines} sample lines (both nodes), ${j.lines} lines, ${(j.bytes / 1e6).toFixed(1)} MB; writing it took ${(j.wallMs / 1000).toFixed(1)} s of wall time.`,
  );
  out.push('`gradeRunDir` (src/cli/grade-command.ts) in a fresh child process per repetition; RSS from `process.resourceUsage().maxRSS`.', '');
  out.push('| figure | value |', '|---|---|');
  out.push(`| wall time of gradeRunDir (ms) | ${fmtSummary(r.grade.wallMs, 0)} |`);
  if ('cpuMs' in r.grade && r.grade.cpuMs) out.push(`| CPU time of gradeRunDir, user + system (ms) | ${fmtSummary(r.grade.cpuMs, 0)} |`);
  out.push(`| peak RSS of the process (MB) | ${fmtSummary(r.grade.maxRssMB, 0)} |`);
  out.push(`| RSS before grading: node + tsx + code loaded (MB) | ${fmtSummary(r.grade.baselineRssMB, 0)} |`);
  out.push(`| outcome | ${r.grade.runs[0]?.outcome ?? 'n/a'} |`, '');

  out.push(...fullSection(r.full));

  out.push('## 5. failing-clone: anomaly → decision → link drop (simulated time)', '');
  if ('fecWindowFailDecades' in r.clone) {
    out.push(`Rules version 2. Anomaly = first tick where one lane's BER over that tick alone is certainly (95% lower bound) beyond the fec-window`);
    out.push(
      `FAIL line (${r.clone.fecWindowFailDecades} decade below 2.4e-4); decision = the journal's \`decision\` line (the watch needs a full ${r.clone.windowS}-s window beyond the`,
    );
    out.push(`line, held ${r.clone.holdS} s); link drop = the simulator's first \`link-down\` event in the same scenario run again with every early stop`);
    out.push(
      'but link-down unable to FAIL (the real run stops the loads at the decision, so the drop never comes in it). Deterministic: every repetition gives the same times.',
      '',
    );
  } else {
    out.push(
      'Rules version 1 (figures of an earlier bench run): anomaly = first tick with the per-tick lane ratio at the FAIL limit; decision after 5 ticks in a row.',
      '',
    );
  }
  out.push('| figure | value |', '|---|---|');
  out.push(
    `| anomaly / decision / link drop (s into the run) | ${c?.anomalyS ?? 'n/a'} / ${c?.decisionS ?? 'n/a'} / ${c?.linkDownS !== null && c?.linkDownS !== undefined ? fmt(c.linkDownS) : 'n/a'} |`,
  );
  out.push(`| anomaly → decision | ${c?.anomalyToDecisionS ?? 'n/a'} s |`);
  out.push(`| decision → link drop | ${c?.decisionToLinkDownS !== null && c?.decisionToLinkDownS !== undefined ? fmt(c.decisionToLinkDownS) : 'n/a'} s |`);
  out.push(`| outcome, rule / outcome without early stop | ${c?.outcome}, ${c?.rule} / ${c?.noEarlyStopOutcome} |`);
  out.push(
    `| wall time of the failing-clone run (s) | ${fmtSummary(r.clone.wallMs && { ...r.clone.wallMs, median: r.clone.wallMs.median / 1000, min: r.clone.wallMs.min / 1000, max: r.clone.wallMs.max / 1000 }, 2)} |`,
    '',
  );

  out.push('## Targets', '');
  const perTickForks = 'each tick still runs two execs per node (`ethtool -S` of each rail), which both ways pay';
  out.push(
    verdict(
      ratio === null ? null : ratio >= 10,
      'sampler >= 10x the naive way',
      `the ratio is ${fmt(ratio, 2)}x (${fmtSummary(r.ssh.ratio, 2)} over the repetitions). The persistent shell removes the per-command session and shell start-up (\`:\` round trip ${fmt(med(r.ssh.emptyRoundTripMs.persistent), 2)} ms vs ${fmt(med(r.ssh.emptyRoundTripMs.freshExec))} ms), but ${perTickForks}, and a fork+exec of /bin/true from Node.js costs ${fmt(med(r.ssh.forkExecMs), 2)} ms on this machine, so the node-side work bounds the ratio.`,
    ),
  );
  out.push(
    verdict(
      persistentRate === null ? null : persistentRate >= 20,
      '>= 20 ticks/s per node',
      `back to back the persistent sampler reached ${fmt(persistentRate, 2)} ticks/s per node (both nodes each tick), and ${fmt(med(v(2).summary['ticksPerS']), 2)} at the fixed ${fmt(1000 / v(2).intervalMs, 0)} Hz setting, with two nodes, their sshds, shells and filters and the controller on 2 cores.`,
    ),
  );
  out.push(
    verdict(
      skew20 === null ? null : skew20 <= 20,
      'cross-node skew p99 <= 20 ms',
      `p99 was ${fmt(skew20, 2)} ms at the fixed-rate setting (${fmt(med(v(0).summary['skewP99Ms']), 2)} ms back to back).`,
    ),
  );
  const gradeCpu = 'cpuMs' in r.grade && r.grade.cpuMs ? med(r.grade.cpuMs) : null;
  const lastRerun = r.reruns?.filter((x) => x.sections.includes('grade')).at(-1);
  const gradeLoad =
    gradeCpu !== null && lastRerun
      ? ` of wall time, with ${fmt(gradeCpu, 0)} ms of CPU time (median), on a machine at load average ${lastRerun.loadAvgAtStart[0]!.toFixed(1)} (2 cores)`
      : '';
  out.push(
    verdict(gradeMs === null ? null : gradeMs <= 2000, 'grading the 10 Hz journal <= 2 s', `gradeRunDir took ${fmt(gradeMs, 0)} ms (median)${gradeLoad}.`),
  );
  out.push(
    verdict(
      gradeRss === null ? null : gradeRss <= 300,
      'grading peak RSS <= 300 MB',
      `peak RSS was ${fmt(gradeRss, 0)} MB, of which ${fmt(med(r.grade.baselineRssMB), 0)} MB before reading the journal.`,
    ),
  );
  if (cli) {
    const wall = med(cli.after.wallMs);
    const cpu = med(cli.after.cpuMs);
    const load = `load average ${cli.loadAvgAtStart[0]!.toFixed(1)} at the start of the section (2 cores)`;
    out.push(
      verdict(
        wall === null || cpu === null ? null : wall <= 3000 && cpu <= 5000,
        'full simulated procedure (`run --sim good-qsfp56`, every report written) <= 3 s wall and <= 5 s CPU',
        `it took ${fmt(wall === null ? null : wall / 1000, 2)} s of wall time and ${fmt(cpu === null ? null : cpu / 1000, 2)} s of CPU time (medians), ${load}.`,
      ),
    );
    const b = cli.after.batch;
    out.push(
      verdict(
        b ? b.wallMs < 60_000 : null,
        `a batch of ${b ? Object.values(b.outcomes).reduce((x, y) => x + y, 0) : 20} simulated cables (quick protocol) < 1 minute`,
        `it took ${fmt(b ? b.wallMs / 1000 : null, 1)} s of wall time, ${fmt(b ? b.cpuMs / 1000 : null, 1)} s of CPU time, ${load}.`,
      ),
    );
  } else if (!isCli(r.full)) {
    const fullMs = med(r.full.wallMs);
    out.push(
      verdict(
        fullMs === null ? null : fullMs <= 5000,
        'full simulated procedure <= 5 s',
        `it took ${fmt(fullMs === null ? null : fullMs / 1000, 2)} s (median).`,
      ),
    );
  }
  out.push('');
  if (r.reruns?.length) {
    out.push('## Re-runs of single sections (`npm run bench -- --only <sections>`)', '');
    for (const x of r.reruns)
      out.push(
        `- ${x.date}: ${x.sections.join(', ')} (load average ${x.loadAvgAtStart.map((v) => v.toFixed(1)).join(' / ')} at start, ${x.loadAvgAtEnd.map((v) => v.toFixed(1)).join(' / ')} at end)${x.note ? `. ${x.note}` : ''}`,
      );
    out.push('');
  }
  const b = r.before;
  if (b) {
    out.push(`## Before / after (before = figures of ${b.date})`, '');
    out.push('| figure | before | after |', '|---|---|---|');
    if (b.gradeWallMs) out.push(`| grading the 10 Hz journal, wall ms | ${fmtSummary(b.gradeWallMs, 0)} | ${fmtSummary(r.grade.wallMs, 0)} |`);
    if (b.gradeMaxRssMB) out.push(`| grading peak RSS, MB | ${fmtSummary(b.gradeMaxRssMB, 0)} | ${fmtSummary(r.grade.maxRssMB, 0)} |`);
    if (b.gradeJournalBytes) out.push(`| 10 Hz journal size, MB | ${(b.gradeJournalBytes / 1e6).toFixed(1)} | ${(r.grade.journal.bytes / 1e6).toFixed(1)} |`);
    if (b.fullWallMs && !isCli(r.full))
      out.push(`| full simulated procedure, wall s | ${fmtSummary(scale(b.fullWallMs, 1e-3), 2)} | ${fmtSummary(scale(r.full.wallMs, 1e-3), 2)} |`);
    out.push('');
  }
  if (r.store) out.push(...storeSection(r.store));
  if (r.runPage) out.push(...runPageSection(r.runPage));
  if (r.coldStart) out.push(...coldStartSection(r.coldStart));
  if (r.sshSpeed) out.push(...sshSpeedSection(r.sshSpeed));
  if (r.storeBusy) out.push(...storeBusySection(r.storeBusy, r.before?.storeBusy ?? null));
  if (r.throughput) out.push(...throughputSection(r.throughput));
  if (r.watch) out.push(...watchSection(r.watch));
  return `${out.join('\n')}\n`;
}

// Section 11: cables per pair per day, one cage and both (issue 25 item 3).
function throughputSection(t: ThroughputBenchResult): string[] {
  const la = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' / ');
  const runs = [t.one, t.both];
  const row = (name: string, f: (x: ThroughputBenchResult['one']) => string) => `| ${name} | ${runs.map(f).join(' | ')} |`;
  const cyc = (x: ThroughputBenchResult['one']) => x.throughput.cycle;
  const min = (s: number | null | undefined) => (s === null || s === undefined ? '–' : (s / 60).toFixed(1));
  const both = cyc(t.both)?.perPairPerDay ?? null;
  return [
    '## 11. Batch throughput: one cable per swap, and two (`--port both`)',
    '',
    `Two simulated batches through the CLI in process (bench/batch-throughput.ts; \`cablequal batch --sim ... --db off\`, virtual time): ${t.plan.cables.one} and ${t.plan.cables.both} good QSFP56 cables, the full default protocol (${t.plan.protocol}), the simulated operator taking ${t.plan.swapS / 60} min to swap each cable (\`--sim-swap ${t.plan.swapS}\`: ${(2 * t.plan.swapS) / 60} min for the two of a \`--port both\` swap) and the nodes ${t.plan.rebootS / 60} min to reboot (\`--sim-reboot ${t.plan.rebootS}\`). The figures are what each batch printed and recorded (src/batch/throughput.ts): over the whole batch, and for its swap cycles (a batch's first cables are in from the start, with no swap and no reboot, so the steady pace is the cycles'). Settle = from the cables seen in to the bench ready: the reboot, the links, and the loopback of every rail (both cages' with \`--port both\`).`,
    `Measured ${t.date}; load average ${la(t.loadAvg.start)} at the start, ${la(t.loadAvg.end)} at the end.`,
    '',
    '| | one cage (`--port 1`) | both cages (`--port both`) |',
    '|---|---|---|',
    row('cables, outcomes', (x) => `${x.outcomes.length}: ${[...new Set(x.outcomes)].join(', ')}`),
    row('qualified / hours of batch', (x) => `${x.throughput.qualified} / ${x.throughput.hours.toFixed(2)}`),
    row('cables per hour (whole batch)', (x) => x.throughput.perHour.toFixed(2)),
    row('cables per pair per day (whole batch)', (x) => x.throughput.perPairPerDay.toFixed(1)),
    row('swap cycles measured, cables each', (x) => (cyc(x) ? `${cyc(x)!.cycles}, ${cyc(x)!.cables}` : '–')),
    row('swap, min', (x) => min(cyc(x)?.swapS)),
    row('reboot, min', (x) => min(cyc(x)?.rebootS)),
    row('settle (reboot included), min', (x) => min(cyc(x)?.settleS)),
    row('qualification, min', (x) => min(cyc(x)?.runS)),
    row('**cables per pair per day (swap cycles)**', (x) => `**${cyc(x)?.perPairPerDay.toFixed(1) ?? '–'}**`),
    row('the batch took, real s', (x) => x.wallS.toFixed(1)),
    '',
    verdict(
      both === null ? null : both >= 34,
      'Target: >= 34 cables per pair per day with --port both',
      `its swap cycles give ${both?.toFixed(1) ?? '–'} (one cage: ${cyc(t.one)?.perPairPerDay.toFixed(1) ?? '–'}, the ~18 the issue expected)`,
    ),
    '',
  ];
}

// Section 10: the longest tick interval while another process holds the store, before and after #22 item 7.
function storeBusySection(a: StoreBusyBenchResult, b: StoreBusyBenchResult | null): string[] {
  const la = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' / ');
  const runs = b ? [b, a] : [a];
  const row = (name: string, f: (x: StoreBusyBenchResult) => string) => `| ${name} | ${runs.map(f).join(' | ')} |`;
  const longestGap = (x: StoreBusyBenchResult) => Math.max(0, ...x.gaps.map((g) => g.toS - g.fromS));
  const interval = a.plan.samplingIntervalS * 1000;
  return [
    '## 10. Sampling while another process holds the results store',
    '',
    `One run in real time (speed 1) against \`sim serve\` (good-qsfp56: preflight, identity and one ${a.plan.soakS} s soak sampled every ${a.plan.samplingIntervalS} s), its embedded SQLite store held under \`BEGIN EXCLUSIVE\` by another process for ${a.plan.lockS} s from the soak's start (bench/store-busy.ts over test/helpers/store-lock.ts; test/store/store-busy.system.test.ts makes the same run with a 20 s lock and PostgreSQL's tables locked).`,
    "The longest tick interval is the longest time between a node's consecutive samples (controller clock) that overlaps the lock.",
    b
      ? `Before: the run's store written on its own thread (better-sqlite3, 15 s busy timeout per queued write), measured ${b.date}; after: written from a worker thread, every wait bounded, given up after the first failure (#22 item 7).`
      : '',
    `Load average at the start: ${runs.map((x) => `${x === b ? 'before' : 'after'} ${la(x.loadAvg.start)}`).join(', ')}.${runs.map((x) => (x.note ? ` ${x === b ? 'Before' : 'After'}: ${x.note}` : '')).join('')}`,
    '',
    `| | ${runs.map((x) => (x === b ? `before (${x.date.slice(0, 10)})` : `after (${x.date.slice(0, 10)})`)).join(' | ')} |`,
    `|---|${runs.map(() => '---|').join('')}`,
    row('lock held, s', (x) => x.lockS.toFixed(1)),
    row('**longest tick interval during the lock, ms**', (x) => `**${x.longestTickMs.toFixed(0)}**`),
    row('samples per node while the lock was held', (x) => String(x.ticksDuringLock)),
    row(`the ${a.plan.soakS} s soak took, s`, (x) => x.soakS.toFixed(1)),
    row('the whole run took, s', (x) => x.runWallS.toFixed(1)),
    row('outcome', (x) => x.outcome),
    row('warnings naming the store', (x) => String(x.storeWarnings)),
    row('sampling.gaps: count, longest (s)', (x) => `${x.gaps.length}, ${longestGap(x).toFixed(1)}`),
    '',
    verdict(
      a.longestTickMs < 2 * interval,
      'Target: sampling never waits on the store (no tick interval reaches two sampling intervals during the lock)',
      `the longest tick interval during the ${a.lockS.toFixed(0)} s lock was ${a.longestTickMs.toFixed(0)} ms${b ? ` (before: ${b.longestTickMs.toFixed(0)} ms)` : ''}.`,
    ),
    '',
  ].filter((l, i, xs) => l !== '' || xs[i - 1] !== '');
}

// Section 7: the run page of a 75-minute run, loaded in Chromium until its charts are drawn.
function runPageSection(p: RunPageBenchResult): string[] {
  const la = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' / ');
  const j = p.journal;
  const cold = p.pageColdMs?.median ?? null;
  return [
    "## 7. The dashboard's run page of a 75-minute run",
    '',
    `One run of the default protocol (${p.plan.protocol}: ${(j.runS / 60).toFixed(0)} minutes, sampled at 1 Hz) on the simulated ${p.plan.scenario} lab, in virtual time (bench/run-page.ts): its journal has ${j.lines.toLocaleString('en')} lines, ${(j.bytes / 1e6).toFixed(1)} MB.`,
    `Its series come from the journal through TimeseriesBuilder (src/analysis/intervals.ts), ${j.rawPointsPerReceiver.join(' and ')} points per receiver, served downsampled to ${j.servedPointsPerReceiver.join(' and ')} (at most ${2000}, each a bucket's maximum): ${(j.seriesJsonBytes / 1e3).toFixed(0)} kB of JSON; the page's HTML is ${(p.htmlBytes / 1e3).toFixed(0)} kB.`,
    "Page load: one headless Chromium tab navigated to the page, from `goto` until the charts are drawn (`body[data-ready]`), one load at a time. Cold: a dashboard just started, the journal read for the first time; warm: the same dashboard again (the journal already read; only its size is checked). The browser keeps uPlot and the script cached between loads, as a person's does; the very first load (a new tab, nothing cached) is shown apart.",
    `Load average ${la(p.loadAvg.start)} at the start, ${la(p.loadAvg.end)} at the end.`,
    '',
    '| | median (min–max), ms |',
    '|---|---|',
    `| run page, the first load in a new tab (cold) | ${p.firstTabMs === null || p.firstTabMs === undefined ? 'n/a' : p.firstTabMs.toFixed(0)} |`,
    `| run page, cold (${p.pageColdMs?.n ?? 0} loads) | ${fmtSummary(p.pageColdMs, 0)} |`,
    `| run page, warm (${p.pageWarmMs?.n ?? 0} loads) | ${fmtSummary(p.pageWarmMs, 0)} |`,
    `| /api/runs/<id>/series, cold (${p.seriesColdMs?.n ?? 0}) | ${fmtSummary(p.seriesColdMs, 0)} |`,
    `| /api/runs/<id>/series, warm (${p.seriesWarmMs?.n ?? 0}) | ${fmtSummary(p.seriesWarmMs, 0)} |`,
    '',
    verdict(
      cold === null ? null : (p.pageColdMs?.max ?? Infinity) < p.plan.targetMs,
      `Target: the run page of a 75-minute 1 Hz run loads in under ${p.plan.targetMs / 1000} s`,
      cold === null
        ? 'it was not measured.'
        : `the slowest cold load in an open tab took ${p.pageColdMs!.max.toFixed(0)} ms (median ${cold.toFixed(0)} ms), warm ${p.pageWarmMs!.median.toFixed(0)} ms; the very first load, with the browser starting the tab's renderer and fetching uPlot, took ${p.firstTabMs?.toFixed(0) ?? 'n/a'} ms at the load average above.`,
    ),
    '',
  ];
}

// Section 8: how long the CLI takes to start and how much it loads, against a bare `node -e 0` (target: within 3x).
function coldStartSection(c: ColdStartResult): string[] {
  const out: string[] = [];
  out.push('## 8. CLI cold start', '');
  out.push(`\`node bin/cablequal.js <command>\` (dist/ built from this source) started fresh ${c.reps} times per command, each round`);
  out.push('interleaved with a bare `node -e 0` of the same round (the ratio); modules = every module one start loads (ES modules');
  out.push('logged by a loader hook, test/fixtures/module-log.mjs). `verify` checks a certificate of test/fixtures/journals-v1');
  out.push("(good-qsfp56-quick): signature, journal hash, and the journal re-graded under its rules version and today's.", '');
  const rows = (label: string, cs: ColdStartResult['commands']) =>
    cs.map(
      (x) =>
        `| ${label}\`${x.name}\` | ${fmtSummary(x.wallMs, 0)} | ${fmt(x.ratio?.median ?? null, 2)}x | ${x.modules} | ${x.packages.filter((p) => !YARGS_DEPS.has(p)).join(', ') || '(yargs only)'} |`,
    );
  out.push(`bare \`node -e 0\`: ${fmtSummary(c.nodeMs, 0)} ms.`, '');
  out.push('| command | wall ms | × node | modules | npm packages besides yargs |', '|---|---|---|---|---|');
  out.push(...rows('', c.commands));
  if (c.before) out.push(...rows(`before (${c.before.label}): `, c.before.commands));
  out.push('');
  for (const x of c.commands) {
    const r = x.ratio?.median ?? null;
    const was = c.before?.commands.find((b) => b.name === x.name);
    const then = was ? ` (before: ${fmt(was.wallMs?.median ?? null, 0)} ms, ${fmt(was.ratio?.median ?? null, 2)}x, ${was.modules} modules)` : '';
    const why =
      x.name === 'verify' && r !== null && r > 3
        ? "; what remains is the work itself: in a CPU profile of this verify (448 ms), the journal re-graded twice (its rules version, then today's) takes 217 ms, of which 89 ms cross-check the raw ethtool -S dumps, and ajv compiling the recorded protocol's schema 63 ms (285 ms, profiled on a busier machine, before its meta-schema check and code optimiser were turned off); module loading about 60 ms"
        : '';
    out.push(
      verdict(
        r === null ? null : r <= 3,
        `\`${x.name}\` within 3x of \`node -e 0\``,
        `it took ${fmt(x.wallMs?.median ?? null, 0)} ms, ${fmt(r, 2)}x, loading ${x.modules} modules${then}${why}.`,
      ),
    );
  }
  out.push('');
  return out;
}

// Section 9: the full protocol over real SSH at a speed-up, in real time.
function sshSpeedSection(x: SshSpeedResult): string[] {
  const budget = (2 * x.labS) / x.speed;
  return [
    `## 9. The full default protocol over SSH at x${x.speed}`,
    '',
    `\`cablequal sim serve --speed ${x.speed}\` (${x.scenario}, seed 7: two simulated nodes behind real SSH servers on loopback, in process) and`,
    `\`cablequal run --nodes ... --ssh-config ... --speed ${x.speed}\` against them, once (bench/ssh-speed.ts). The system test`,
    "(test/run/ssh-full-protocol.system.test.ts) checks the verdict, the sampling and that the run never outran the lab's clock; this is how fast it went.",
    '',
    '| figure | value |',
    '|---|---|',
    `| outcome | ${x.outcome} |`,
    `| simulated s / real s | ${x.labS.toFixed(0)} / ${x.realS.toFixed(0)} (x${(x.labS / x.realS).toFixed(1)}) |`,
    `| sampling ticks | ${x.ticks} |`,
    '',
    verdict(
      x.realS < budget,
      `under twice the scaled time (${budget.toFixed(0)} s)`,
      `the run took ${x.realS.toFixed(0)} s of real time for ${x.labS.toFixed(0)} simulated s.`,
    ),
    '',
  ];
}

// Section 4: the full procedure and a batch through the CLI (or, for results of earlier benches, the in-process figure).
function fullSection(f: BenchResults['full']): string[] {
  const out: string[] = [];
  const s = (x: Summary | null, k = 1e-3, d = 2) => fmtSummary(scale(x, k), d);
  if (!isCli(f)) {
    out.push('## 4. Full default procedure on the simulated lab (virtual time)', '');
    out.push(
      'good-qsfp56, protocols/spark-burnin.json (75 simulated minutes, 1 Hz), runQualification in-process (no report writers), module load excluded.',
      '',
    );
    out.push('| figure | value |', '|---|---|', `| wall time (s) | ${s(f.wallMs)} |`);
    out.push(`| ticks / simulated s / outcome | ${f.runs[0]?.ticks} / ${f.runs[0]?.simulatedS} / ${f.runs[0]?.outcome} |`, '');
    return out;
  }
  const la = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' / ');
  out.push('## 4. The simulated lab through the CLI: the full default procedure and a 20-cable batch', '');
  out.push(`\`${f.command}\`, a fresh process per repetition (module loading, protocol validation, the run in virtual time, the`);
  out.push('record, certificate, CSVs and store included); and once `' + f.batchCommand + '`. CPU time = user + system of the');
  out.push('process, all its threads (`process.resourceUsage()` at exit). Other work shares the 2 cores: wall times stretch with the');
  out.push(
    `load, CPU times much less. Load average ${la(f.loadAvgAtStart)} at the start of this section, ${la(f.loadAvgAtEnd)} at its end.` +
      (f.before ? ` Before = ${f.before.checkout}, measured the same way, each repetition right before this tree's.` : ''),
    '',
  );
  const cols: [string, CliFigures][] = f.before
    ? [
        ['before', f.before],
        ['after', f.after],
      ]
    : [['value', f.after]];
  out.push(`| figure | ${cols.map(([n]) => n).join(' | ')} |`, `|---|${cols.map(() => '---|').join('')}`);
  const row = (name: string, g: (c: CliFigures) => string) => out.push(`| ${name} | ${cols.map(([, c]) => g(c)).join(' | ')} |`);
  row('full procedure, wall time (s)', (c) => s(c.wallMs));
  row('full procedure, CPU time (s)', (c) => s(c.cpuMs));
  row('full procedure, peak RSS (MB)', (c) => s(c.maxRssMB, 1, 0));
  row('ticks / simulated s / outcome', (c) => `${c.runs[0]?.ticks} / ${c.runs[0]?.simulatedS} / ${c.runs[0]?.outcome}`);
  row('batch of 20, wall time (s)', (c) => fmt(c.batch ? c.batch.wallMs / 1000 : null, 1));
  row('batch of 20, CPU time (s)', (c) => fmt(c.batch ? c.batch.cpuMs / 1000 : null, 1));
  row('batch of 20, outcomes', (c) =>
    c.batch
      ? Object.entries(c.batch.outcomes)
          .map(([o, n]) => `${n} ${o}`)
          .join(', ')
      : 'n/a',
  );
  // Results from before the cluster figure have none.
  if (cols.some(([, c]) => c.cluster)) {
    row('3-cable cluster (`run --sim triangle-one-bad --cluster`), wall time (s)', (c) => fmt(c.cluster ? c.cluster.wallMs / 1000 : null, 1));
    row('3-cable cluster, CPU time (s)', (c) => fmt(c.cluster ? c.cluster.cpuMs / 1000 : null, 1));
    row('3-cable cluster, outcomes', (c) =>
      c.cluster
        ? Object.entries(c.cluster.outcomes)
            .map(([o, n]) => `${n} ${o}`)
            .join(', ')
        : 'n/a',
    );
  }
  out.push('');
  return out;
}
// yargs and the packages it brings (every command loads them).
const YARGS_DEPS = new Set([
  'yargs',
  'yargs-parser',
  'cliui',
  'y18n',
  'escalade',
  'get-caller-file',
  'string-width',
  'strip-ansi',
  'wrap-ansi',
  'ansi-regex',
  'ansi-styles',
  'emoji-regex',
  'get-east-asian-width',
]);

// Section 6: the results store and the dashboard at 10,000 runs, SQLite and PostgreSQL side by side.
function storeSection(s: StoreBenchResult): string[] {
  const out: string[] = [];
  const a = s.engines[0];
  const cols = s.engines.map((e) => e.version);
  out.push(`## 6. Results store and dashboard at ${s.plan.runs.toLocaleString('en')} runs`, '');
  out.push(`The ${s.plan.runs.toLocaleString('en')} runs are GENERATED (bench/store.ts), in ${s.generation.wallS.toFixed(0)} s: ${s.generation.how}.`);
  out.push(`Their record.json files total ${(s.generation.recordBytes / 1e6).toFixed(0)} MB. \`db import\` reads each record.json, the journal's first line`);
  out.push("(the protocol's tolerances) and hashes the certificate; one transaction per 200 runs. Latency: the dashboard on 127.0.0.1,");
  out.push(`${s.plan.requests} sequential requests per page after 5 warm-up requests, one keep-alive client, the whole response read.`);
  const la = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' / ');
  const shared = (s.loadAvg.start[0] ?? 0) > 1;
  out.push(
    `Load average ${la(s.loadAvg.start)} at the start of this section, ${la(s.loadAvg.end)} at its end${shared ? ': other work shared the 2 cores, so the p95 and max columns are pessimistic.' : '.'}`,
    '',
  );
  out.push(`| | ${cols.join(' | ')} |`, `|---|${cols.map(() => '---|').join('')}`);
  const row = (name: string, f: (e: StoreBenchResult['engines'][number]) => string) => out.push(`| ${name} | ${s.engines.map(f).join(' | ')} |`);
  row(`import ${s.plan.runs.toLocaleString('en')} runs, s`, (e) => e.importWallS.toFixed(1));
  row('import the same runs again (all unchanged), s', (e) => e.reimportWallS.toFixed(1));
  row('store size, MB', (e) => (e.storeBytes / 1e6).toFixed(1));
  row('rows: runs / cables / parts', (e) => `${e.counts['runs']} / ${e.counts['cables']} / ${e.counts['parts']}`);
  for (const page of Object.keys(a?.pages ?? {})) {
    row(`${page}: p50 / p95 / max, ms`, (e) => {
      const l = e.pages[page];
      return l ? `${l.p50Ms.toFixed(1)} / **${l.p95Ms.toFixed(1)}** / ${l.maxMs.toFixed(0)}` : 'n/a';
    });
  }
  out.push('');
  const target = (page: string) => s.engines.every((e) => (e.pages[page]?.p95Ms ?? Infinity) < 200);
  const list = 'run list page (/, newest 100)';
  const part = "a part's yield page (/parts/<pn>?simulated=1)";
  out.push(
    verdict(
      target(list) && target(part),
      "Target p95 < 200 ms for the run list and a part's yield page at 10,000 runs, both engines",
      `p95 ${s.engines.map((e) => `${e.engine} ${e.pages[list]?.p95Ms.toFixed(0)} ms (list), ${e.pages[part]?.p95Ms.toFixed(0)} ms (yield)`).join('; ')}.`,
    ),
  );
  out.push('');
  return out;
}

function scale(x: Summary | null, k: number): Summary | null {
  if (!x) return null;
  return { ...x, median: x.median * k, min: x.min * k, max: x.max * k, values: x.values.map((v) => v * k) };
}
