// Section 12: `cablequal watch`. (a) A day of watching in virtual time, in process as the CLI runs it (the simulated
// lab, the sampler, the rules over windows, every event and tick journaled): CPU and wall per simulated day, for the
// clone and the good cable. (b) What sampling costs a node: the watch's tick script (watchSampleSet: both rails'
// *_phy counters, link state, FEC, hwmon; no nvidia-smi) run by one persistent bash, as the node's shell runs it, with
// stand-in ethtool programs printing the simulated lab's outputs; the shell's `times` (its own and its children's
// user + system CPU) over the ticks, per tick and as a share of a core at the watch's 10 s interval. A real ethtool
// also costs the kernel's netlink and the mlx5 driver's register reads, which the stand-ins do not: that part is not
// in this figure.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { loadProtocol } from '../src/protocol/index.js';
import { createLab } from '../src/sim/lab.js';
import { VirtualClock } from '../src/sim/virtual-clock.js';
import { cmd } from '../src/transport/commands.js';
import { buildTickScript } from '../src/transport/tick-script.js';
import { sampleSetItems } from '../src/sampling/sample-set.js';
import { findCables } from '../src/watch/cables.js';
import { openWatchJournal } from '../src/watch/journal.js';
import { serviceSettingsOf } from '../src/watch/settings.js';
import { watchCables, watchSampleSet } from '../src/watch/watcher.js';
import { summarize, type Summary } from './stats.js';

const RAILS = ['enp1s0f1np1', 'enP2p1s0f1np1'];

export interface WatchBenchResult {
  day: { scenario: string; cpuS: Summary | null; wallS: Summary | null; ticks: number; alarms: number; drops: number }[];
  node: { ticks: number; cpuMsPerTick: Summary | null; pctOfCoreAt10s: Summary | null; standIns: 'sh'; clockTickMs: number };
  loadAvg: { start: number[]; end: number[] };
}

async function watchDay(scenario: string, work: string): Promise<{ cpuS: number; wallS: number; ticks: number; alarms: number; drops: number }> {
  const clock = new VirtualClock(Date.UTC(2026, 0, 1));
  const lab = createLab({ scenario, clock });
  const nodes = lab.nodes.map((name) => ({ name, runner: lab.runner(name) }));
  const settings = serviceSettingsOf(loadProtocol('protocols/spark-burnin.json'));
  const journal = openWatchJournal(mkdtempSync(join(work, 'watch-')));
  let alarms = 0;
  let drops = 0;
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  const { links } = await findCables(nodes);
  const r = await watchCables({
    nodes,
    links,
    clock,
    settings,
    forS: 86400,
    sinks: {
      event: (e) => {
        journal.sinks.event(e);
        if (e.type === 'alarm') alarms++;
        if (e.type === 'link-down') drops++;
      },
      tick: journal.sinks.tick,
    },
  });
  const c = process.cpuUsage(c0);
  return { cpuS: (c.user + c.system) / 1e6, wallS: (performance.now() - w0) / 1000, ticks: r.ticks, alarms, drops };
}

// The stand-ins: shell scripts printing the simulated lab's outputs of each command (generated, not recorded).
async function standIns(dir: string): Promise<string> {
  const lab = createLab({ scenario: 'in-service-good', clock: new VirtualClock(1_700_000_000_000) });
  const r = lab.runner('spark-b');
  const data = join(dir, 'data');
  const bin = join(dir, 'bin');
  mkdirSync(data, { recursive: true });
  mkdirSync(bin, { recursive: true });
  for (const rail of RAILS) {
    writeFileSync(join(data, `stats-${rail}.txt`), (await r.run(cmd.ethtoolStats(rail))).stdout);
    writeFileSync(join(data, `link-${rail}.txt`), (await r.run(cmd.ethtoolLink(rail))).stdout);
    writeFileSync(join(data, `fec-${rail}.txt`), (await r.run(cmd.ethtoolFec(rail))).stdout);
  }
  const script = `#!/bin/sh\n# GENERATED bench stand-in for ethtool: prints the simulated lab's outputs (not recorded output)\nd='${data}'\ncase "$1" in\n  -S) exec cat "$d/stats-$2.txt" ;;\n  -I) exec cat "$d/fec-$3.txt" ;;\n  *) exec cat "$d/link-$1.txt" ;;\nesac\n`;
  writeFileSync(join(bin, 'ethtool'), script);
  chmodSync(join(bin, 'ethtool'), 0o755);
  return bin;
}

// One bash fed `ticks` tick scripts; the CPU its `times` reports (user + system, itself and its children), in ms.
function shellCpuMs(bin: string, ticks: number): Promise<number> {
  const script = Array.from({ length: ticks }, (_, k) => buildTickScript(sampleSetItems(watchSampleSet(RAILS), k))).join('\n');
  return new Promise((resolve, reject) => {
    const sh = spawn('bash', ['--norc', '--noprofile'], { env: { PATH: `${bin}:/usr/bin:/bin`, LANG: 'C' }, stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    sh.stdout.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
    sh.on('error', reject);
    sh.on('exit', () => {
      // `times`: "0m0.010s 0m0.020s\n0m1.230s 0m0.560s" (the shell's user and system, then its children's)
      const t = [...out.matchAll(/(\d+)m([\d.]+)s/g)].slice(-4).map((m) => Number(m[1]) * 60 + Number(m[2]));
      if (t.length !== 4) return reject(new Error(`no times output: ${out.slice(-200)}`));
      resolve(t.reduce((a, b) => a + b, 0) * 1000);
    });
    sh.stdin.end(`${script}\ntimes\n`);
  });
}

export async function benchWatch(reps: number, work: string, log: (s: string) => void): Promise<WatchBenchResult> {
  const start = loadavg();
  const day: WatchBenchResult['day'] = [];
  for (const scenario of ['in-service-clone', 'in-service-good']) {
    const runs = [];
    for (let i = 0; i < reps; i++) runs.push(await watchDay(scenario, work));
    log(`  ${scenario}: a day in ${runs.map((r) => r.cpuS.toFixed(1)).join(', ')} s of CPU`);
    day.push({
      scenario,
      cpuS: summarize(runs.map((r) => r.cpuS)),
      wallS: summarize(runs.map((r) => r.wallS)),
      ticks: runs[0]!.ticks,
      alarms: runs[0]!.alarms,
      drops: runs[0]!.drops,
    });
  }
  const dir = mkdtempSync(join(tmpdir(), 'cq-bench-watch-node-'));
  try {
    const bin = await standIns(dir);
    const ticks = 500;
    const per: number[] = [];
    for (let i = 0; i < Math.max(3, reps); i++) per.push((await shellCpuMs(bin, ticks)) / ticks);
    log(`  node: ${per.map((x) => x.toFixed(2)).join(', ')} ms of CPU per tick`);
    const clockTickMs = 10; // times(1) resolution (USER_HZ 100)
    return {
      day,
      node: { ticks, cpuMsPerTick: summarize(per), pctOfCoreAt10s: summarize(per.map((x) => (x / 10_000) * 100)), standIns: 'sh', clockTickMs },
      loadAvg: { start, end: loadavg() },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
