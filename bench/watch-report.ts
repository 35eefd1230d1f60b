// BENCHMARKS.md's section 12 (bench/watch.ts measures it).
import { fmtSummary } from './stats.js';
import type { WatchBenchResult } from './watch.js';

// BENCHMARKS.md's section 12.
export function watchSection(w: WatchBenchResult): string[] {
  const la = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' / ');
  return [
    '## 12. `cablequal watch`: a day of service in virtual time, and what sampling costs a node',
    '',
    `A day (86,400 s, 8,640 ticks of 10 s) of \`watch\` in process as the CLI runs it (bench/watch.ts): the simulated lab stepped per second, both nodes sampled by the run's sampler, the rules over rolling windows, every event and tick journaled. Load average ${la(w.loadAvg.start)} at the start of the section, ${la(w.loadAvg.end)} at its end (2 cores, shared).`,
    '',
    '| scenario | CPU s per simulated day | wall s | ticks | alarms | link drops |',
    '|---|---|---|---|---|---|',
    ...w.day.map((d) => `| ${d.scenario} | ${fmtSummary(d.cpuS, 1)} | ${fmtSummary(d.wallS, 1)} | ${d.ticks} | ${d.alarms} | ${d.drops} |`),
    '',
    `What one node spends on the watch's tick script (both rails' \`ethtool -S\` through the *_phy filter, \`ethtool\` of both rails, \`ethtool -I --show-fec\`, hwmon): one bash fed ${w.node.ticks} tick scripts back to back, with ${w.node.standIns} stand-ins for ethtool printing the simulated lab's outputs; the CPU is bash's \`times\` (itself and its children, user + system; ${w.node.clockTickMs} ms resolution over the whole run). The kernel's netlink and the mlx5 driver's register reads behind a real ethtool are not in it.`,
    '',
    '| figure | value |',
    '|---|---|',
    `| node CPU per tick, ms | ${fmtSummary(w.node.cpuMsPerTick, 2)} |`,
    `| share of one core at the 10 s interval, % | ${fmtSummary(w.node.pctOfCoreAt10s, 3)} |`,
    '',
  ];
}
