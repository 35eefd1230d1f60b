// What the PHY says at a link drop: `ethtool <if>`, `ethtool -S <if>` and `ethtool -m <if>` of one receiver read at
// once, through the node's CommandRunner, the moment a sample sees its link go down (or link_down_events_phy rise).
// mlx5 reports why a link is down (`Link detected: no (Cable issue)`, from the port's PDDR status) only while it is
// down (mlx5 en_ethtool.c, get_link_ext_state; CLUSTERS.md "In service"), so a later tick would read `yes` and no
// reason. The run (src/run/sampling-loop.ts) and `cablequal watch` take the same snapshot; the caller journals it.
import type { Clock } from '../domain/clock.js';
import { ParseError } from '../domain/errors.js';
import { commandText } from '../domain/text.js';
import { cmd } from '../transport/commands.js';
import { CommandAbortedError, TransportError, type CommandResult, type CommandRunner } from '../transport/types.js';
import { parseEthtoolLink } from './ethtool-link.js';

// One command's answer as read: its stdout whole (nothing collected is lost), stderr when it said something, its exit
// status, or why there is no answer (the node did not answer in time, the command could not be run).
export interface SnapshotRead {
  command: string;
  raw: string;
  stderr?: string;
  exitCode: number | null;
  error?: string;
}

export interface LinkSnapshot {
  node: string;
  netdev: string;
  // When the reads were issued: seconds since the caller's origin (a run's start) and the clock's ISO time.
  atS: number;
  at: string;
  // `ethtool <if>` with what it says of the link: detected (null: unreadable) and the reason it printed (null: none).
  link: SnapshotRead & { detected: boolean | null; reason: string | null };
  stats: SnapshotRead;
  module: SnapshotRead;
}

export interface SnapshotOptions {
  // The clock time atS counts from (default 0: atS is the clock's own seconds).
  originMs?: number;
  // Each read's limit (default 10 s: a snapshot is three short ethtool calls).
  timeoutMs?: number;
  signal?: AbortSignal;
}

// The three commands of a snapshot of one netdev (module EEPROM through sudo -n, as identity reads it).
export function linkSnapshotCommands(netdev: string): { link: string; stats: string; module: string } {
  return { link: cmd.ethtoolLink(netdev), stats: cmd.ethtoolStats(netdev), module: cmd.ethtoolModule(netdev) };
}

// Read the three at once (one round trip each, in parallel: the reason lasts only while the link is down). A node that
// does not answer leaves the read's error in its place; only an abort (Ctrl-C) or a harness bug throws.
export async function takeLinkSnapshot(runner: CommandRunner, netdev: string, clock: Clock, opts: SnapshotOptions = {}): Promise<LinkSnapshot> {
  const nowMs = clock.now();
  const commands = linkSnapshotCommands(netdev);
  const runOpts = { timeoutMs: opts.timeoutMs ?? 10_000, ...(opts.signal ? { signal: opts.signal } : {}) };
  const read = async (command: string): Promise<SnapshotRead> => {
    try {
      return answered(await runner.run(command, runOpts));
    } catch (e) {
      if (e instanceof CommandAbortedError || !(e instanceof TransportError)) throw e;
      return { command, raw: '', exitCode: null, error: commandText(e.message, 300) };
    }
  };
  const [link, stats, module] = await Promise.all([read(commands.link), read(commands.stats), read(commands.module)]);
  return {
    node: runner.node,
    netdev,
    atS: Math.round(nowMs - (opts.originMs ?? 0)) / 1000,
    at: new Date(nowMs).toISOString(),
    link: { ...link, ...linkState(link) },
    stats,
    module,
  };
}

function answered(r: CommandResult): SnapshotRead {
  return {
    command: r.command,
    raw: r.stdout,
    ...(r.stderr.trim() ? { stderr: r.stderr } : {}),
    exitCode: r.exitCode,
    ...(r.timedOut ? { error: 'timed out' } : {}),
  };
}

// What `ethtool <if>` said of the link: its stdout with the permission notices of stderr (as a pipe merges them), else
// its stdout alone; unreadable: unknown, no reason.
export function linkState(read: Pick<SnapshotRead, 'raw' | 'stderr'>): { detected: boolean | null; reason: string | null } {
  for (const text of read.stderr ? [`${read.raw}\n${read.stderr}`, read.raw] : [read.raw]) {
    try {
      const l = parseEthtoolLink(text);
      return { detected: l.linkDetected, reason: l.linkDownReason };
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
    }
  }
  return { detected: null, reason: null };
}
