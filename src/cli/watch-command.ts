// `cablequal watch`: the composition of the watch (src/watch) with the real or simulated nodes, the clock, the
// journal under --out, stdout, the results store and the metrics.
import { join, resolve } from 'node:path';
import type { Clock } from '../domain/clock.js';
import { systemClock } from '../domain/clock.js';
import { UsageError } from '../domain/errors.js';
import { quoteInput } from '../domain/text.js';
import { ensureDir } from '../io/ensure-dir.js';
import { createLab } from '../sim/lab.js';
import { VirtualClock } from '../sim/virtual-clock.js';
import type { CommandRunner } from '../transport/types.js';
import { TransportError } from '../transport/types.js';
import { findCables, type WatchedNode } from '../watch/cables.js';
import { eventLine, type WatchEvent } from '../watch/events.js';
import { openWatchJournal } from '../watch/journal.js';
import { serviceSettingsOf } from '../watch/settings.js';
import { watchCables, type WatchSinks } from '../watch/watcher.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';
import { signalExitCode } from './io.js';
import { loadProtocolArg, parseNodeList } from './run-command.js';
import { makeRunners } from './transports.js';
import { serveMetrics, type MetricsServer } from '../metrics/serve.js';
import { ServiceMetrics } from '../metrics/service-metrics.js';
import { chooseStore, openStore, whereOf } from '../store/open-store.js';
import { StoreRecorder } from '../store/recorder.js';
import { serviceStoreSinks } from '../store/service.js';

export interface WatchArgs {
  nodes?: string;
  for?: string;
  intervalS?: number;
  json: boolean;
  out: string;
  protocol: string;
  db?: string;
  metricsPort?: number;
  metricsHost?: string;
  acceptNewHostKeys: boolean;
  sshConfig?: string;
  sim?: string;
  simFault?: string[];
  seed?: number;
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

// "90s", "30m", "24h", "7d" or a number of seconds; at most 366 days.
export function parseDuration(text: string, what = '--for'): number {
  const m = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(text.trim());
  const s = m ? Number(m[1]) * UNITS[m[2] || 's']! : NaN;
  if (!(s > 0 && s <= 366 * 86400))
    throw new UsageError(`${what}: expected a duration such as 90s, 30m, 24h or 7d (at most 366d), got ${quoteInput(text, 40)}`);
  return s;
}

// The nodes to watch with their runners and clock: the simulated lab's, or the named ones over SSH.
// A simulated lab resumed from a journal starts where the journal ends (a controller restart: the lab's own clock
// would otherwise start again at the wall clock, before the journal's last line).
async function watchedNodes(
  args: WatchArgs,
  io: CliIo,
  resumeAtMs: number | null,
): Promise<{ nodes: WatchedNode[]; clock: Clock; close: () => Promise<void> }> {
  if (args.sim) {
    const clock = new VirtualClock(Math.max(Math.floor(Date.now() / 1000) * 1000, resumeAtMs ?? 0));
    const names = args.nodes ? parseNodeList(args.nodes, undefined).map((n) => n.name) : undefined;
    if (names && names.length !== 2) throw new UsageError(`--nodes with --sim: the simulated lab has two nodes, got ${names.length}`);
    const lab = createLab({
      scenario: args.sim,
      ...(args.seed !== undefined ? { seed: args.seed } : {}),
      faults: args.simFault ?? [],
      clock,
      ...(names ? { nodeNames: names as [string, string] } : {}),
    });
    return { nodes: lab.nodes.map((name) => ({ name, runner: lab.runner(name) })), clock, close: async () => undefined };
  }
  const specs = parseNodeList(args.nodes!, undefined);
  if (specs.length < 2) throw new UsageError(`--nodes: a cable joins two nodes: name at least two, got ${specs.length}`);
  const dup = specs.find((n, i) => specs.findIndex((x) => x.name === n.name) !== i);
  if (dup) throw new UsageError(`--nodes: ${quoteInput(dup.name)} named twice`);
  const runners: Map<string, CommandRunner> = await makeRunners(specs, {
    acceptNewHostKeys: args.acceptNewHostKeys,
    env: io.env,
    warn: (l) => io.stderr(`${l}\n`),
    ...(args.sshConfig ? { sshConfig: resolve(io.cwd, args.sshConfig) } : {}),
  });
  return {
    nodes: specs.map((n) => ({ name: n.name, runner: runners.get(n.name)! })),
    clock: systemClock,
    close: async () => void (await Promise.all([...runners.values()].map((r) => r.close().catch(() => undefined)))),
  };
}

export async function watchCommand(args: WatchArgs, io: CliIo, signal: AbortSignal): Promise<number> {
  if (!args.sim && !args.nodes) throw new UsageError('watch: give --nodes a,b[,c...] (or --sim <scenario>)');
  if (!args.sim && (args.simFault?.length || args.seed !== undefined))
    throw new UsageError('watch: --sim-fault and --seed apply to the simulated lab only (--sim)');
  const forS = args.for !== undefined ? parseDuration(args.for) : args.sim ? 86400 : undefined;
  const { protocol } = loadProtocolArg(args.protocol, io.cwd);
  const settings = { ...serviceSettingsOf(protocol), ...(args.intervalS !== undefined ? { intervalS: args.intervalS } : {}) };
  const outDir = ensureDir(resolve(io.cwd, args.out), '--out');
  const journal = openWatchJournal(join(outDir, 'watch'));
  io.onStop?.('stopping the watch (nothing runs on the nodes but reads)');
  const { nodes, clock, close } = await watchedNodes(args, io, journal.resume ? journal.resume.lastMs + settings.intervalS * 1000 : null);
  let failed = false;
  const print = (e: WatchEvent) => {
    if ((e.type === 'alarm' && e.grade === 'FAIL') || (e.type === 'link-down' && e.cause === 'cable')) failed = true;
    if (args.json) io.stdout(`${JSON.stringify(e)}\n`);
    else io.stdout(`${eventLine(e, io.isTTY ? (io.columns?.() ?? 80) : null)}\n`);
  };
  // The results store (never waited on: given up, with one warning, after its first failed write) and the metrics.
  const db = args.db ?? io.env['CABLEQUAL_DB'];
  const store =
    db === 'off'
      ? null
      : (() => {
          const choice = chooseStore({ out: outDir, db, env: {}, cwd: io.cwd });
          const target = {
            where: whereOf(choice),
            open: () => openStore(choice, { writer: true }),
            importCommand: '',
            without: `the watch goes on without the store (its journal ${journal.path} holds every event and tick)`,
          };
          return serviceStoreSinks(new StoreRecorder(target, (l) => io.stderr(`${l}\n`)));
        })();
  const metrics = args.metricsPort !== undefined ? new ServiceMetrics() : null;
  let server: MetricsServer | null = null;
  const sinks: WatchSinks = {
    event: (e) => {
      journal.sinks.event(e);
      store?.event(e);
      if (metrics && (e.type === 'alarm' || e.type === 'clear')) metrics.alarmEvent(e);
      if (metrics && e.type === 'link-down') metrics.linkDown(e.serial, e.cable);
      print(e);
    },
    tick: (atS, at, f) => {
      journal.sinks.tick(atS, at, f);
      store?.tick?.(atS, at, f);
      if (metrics) for (const x of f) metrics.tick(x);
    },
  };
  try {
    if (metrics) {
      server = await serveMetrics(metrics, { port: args.metricsPort!, ...(args.metricsHost ? { host: args.metricsHost } : {}) });
      io.stderr(`cablequal: metrics at ${server.url}\n`);
    }
    if (journal.cutLines) io.stderr(`cablequal watch: ${journal.path}: ${journal.cutLines} line(s) cut short by a kill left out; resuming\n`);
    let found;
    try {
      found = await findCables(nodes);
    } catch (e) {
      if (e instanceof TransportError) {
        io.stderr(`cablequal watch: ${e.message}\n`);
        return EXIT.error;
      }
      throw e;
    }
    for (const p of found.problems) io.stderr(`cablequal watch: ${p.message}: ${p.fix}\n`);
    if (found.links.length === 0) {
      io.stderr(
        `cablequal watch: no cable found between ${nodes.map((n) => n.name).join(', ')} (two cabled ends reading one EEPROM serial): check the cabling, or name both nodes of each cable\n`,
      );
      return EXIT.error;
    }
    const summary = await watchCables({
      nodes,
      links: found.links,
      clock,
      settings,
      sinks,
      signal,
      ...(forS !== undefined ? { forS } : {}),
      ...(journal.resume ? { resume: journal.resume } : {}),
    });
    const reason = signal.aborted ? `stopped (${String(signal.reason ?? 'interrupted')})` : `--for ${args.for ?? `${forS} s`} passed`;
    sinks.event({
      type: 'end',
      atS: Math.round(clock.now() - summary.originMs) / 1000,
      at: new Date(clock.now()).toISOString(),
      reason,
      message: `watch ended: ${reason}; ${summary.ticks} sample(s) of every node${summary.missedDeadlines ? `, ${summary.missedDeadlines} interval(s) missed` : ''}; journal ${journal.path}`,
    });
  } finally {
    await store?.close(new Date(clock.now()).toISOString());
    await server?.close();
    await close();
  }
  if (signal.aborted) {
    const by = io.interruptedBy?.();
    return by ? signalExitCode(by) : EXIT.interrupted;
  }
  return failed ? EXIT.fail : EXIT.ok;
}
