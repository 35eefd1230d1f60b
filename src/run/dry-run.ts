// `--dry-run`: every command a run would execute on each node, in order, without running anything on the nodes but
// read-only discovery. The plan is not a second description of the procedure: the real run code executes the
// protocol against simulated nodes shaped like the real ones (their cages and rail addresses), in virtual time, and
// every command it sends is recorded. So the list cannot drift from what a run does. Each soak is sampled for its
// first PLAN_SOAK_S seconds only (its loads start as for the whole soak): after that its commands repeat, and the
// whole 75-minute procedure would cost ~25 s of CPU for nothing new.
import { mkdtempSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { Clock } from '../domain/clock.js';
import type { NodeSpec } from '../domain/node.js';
import type { Outcome } from '../domain/outcome.js';
import { ParseError } from '../domain/errors.js';
import type { Protocol } from '../protocol/index.js';
import { cagesFromLinks, parseIbdev2netdev, pickCage, type CageLinks } from '../probes/ibdev2netdev.js';
import { parseNetIdentity } from '../probes/net-identity.js';
import type { Rail } from '../domain/node.js';
import { parseTickScript } from '../transport/tick-script.js';
import { cmd, ipAddrCommand } from '../transport/commands.js';
import { buildAcquire, buildRelease } from '../transport/node-lock.js';
import { buildFindStale, RUN_ROOT } from '../transport/remote-process.js';
import type { CommandResult, CommandRunner, RemoteProcess, RunOptions, ShellSession, StartOptions } from '../transport/types.js';
import { runQualification } from './qualify.js';
import { parseIpv4 } from './ip-addr.js';
import { persistentTickSource } from './tick-source.js';

// One command of the plan: what the run executes on a node, in which phase, and how.
export interface PlannedCommand {
  node: string;
  phase: string;
  // run: a command the run waits for; start/stop: a load started detached and stopped later; sampler: what the
  // persistent sampling shell runs every tick (listed once); lock: the node lock and stale-process cleanup.
  kind: 'run' | 'start' | 'stop' | 'sampler' | 'lock';
  name?: string;
  command: string;
}

// A runner that records every command before handing it to the runner it wraps.
class RecordingRunner implements CommandRunner {
  constructor(
    private readonly inner: CommandRunner,
    private readonly record: (c: Omit<PlannedCommand, 'node' | 'phase'>) => void,
  ) {}

  get node(): string {
    return this.inner.node;
  }

  get simulated(): boolean {
    return this.inner.simulated;
  }

  private note(kind: 'run' | 'sampler', command: string): void {
    const items = parseTickScript(command);
    for (const c of items ? items.map((i) => i.command) : [command]) this.record({ kind, command: c });
  }

  run(command: string, opts?: RunOptions): Promise<CommandResult> {
    this.note('run', command);
    return this.inner.run(command, opts);
  }

  async start(command: string, opts: StartOptions): Promise<RemoteProcess> {
    this.record({ kind: 'start', name: opts.name, command });
    const p = await this.inner.start(command, opts);
    let stopped = false;
    return {
      name: p.name,
      pid: p.pid,
      done: p.done,
      output: () => p.output(),
      stop: async (graceMs?: number) => {
        if (!stopped) this.record({ kind: 'stop', name: opts.name, command: opts.name });
        stopped = true;
        await p.stop(graceMs);
      },
    };
  }

  async openShell(): Promise<ShellSession> {
    const s = await this.inner.openShell();
    return { run: (c, o) => (this.note('sampler', c), s.run(c, o)), close: () => s.close() };
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

// What the dry run found: the commands per node, and how far the run went (a run that ends early runs a prefix).
export interface RunPlan {
  commands: PlannedCommand[];
  outcome: Outcome;
  lastPhase: string | null;
  phases: string[];
}

// Seconds of each soak a dry run samples: several times the longest sampling period (`ethtool <if>` every 10 s,
// run/tick-source.ts), so that every command of the soak's ticks is seen.
export const PLAN_SOAK_S = 60;

// Execute the protocol against the given (simulated) runners in virtual time and record every command sent. An
// aborted `signal` (Ctrl-C) stops it as it stops a run: the plan is then incomplete (outcome ABORTED).
export async function planRun(o: {
  protocol: Protocol;
  protocolText: string;
  nodes: NodeSpec[];
  runners: Map<string, CommandRunner>;
  clock: Clock;
  scenario?: string;
  signal?: AbortSignal;
}): Promise<RunPlan> {
  const commands: PlannedCommand[] = [];
  let phase = 'setup';
  const runners = new Map(
    [...o.runners].map(([name, r]) => [
      name,
      new RecordingRunner(r, (c) => commands.push({ ...c, node: name, phase: c.kind === 'sampler' ? 'sampler' : phase })) as CommandRunner,
    ]),
  );
  const out = mkdtempSync(join(tmpdir(), 'cablequal-dry-run-'));
  try {
    const { record } = await runQualification({
      clock: o.clock,
      runners,
      nodes: o.nodes,
      protocol: o.protocol,
      protocolText: o.protocolText,
      outDir: out,
      label: 'dry-run',
      runId: 'dry-run',
      log: pino({ level: 'silent' }),
      signal: o.signal ?? new AbortController().signal,
      simulated: true,
      soakCapS: PLAN_SOAK_S,
      ...(o.scenario ? { scenario: o.scenario } : {}),
      makeTickSource: (ns, intervalS) => persistentTickSource(ns, o.clock, { intervalS }),
      // The journal's phase-start lines say which phase the commands that follow belong to.
      journalIo: {
        writeSync: (fd, buf, off, len) => {
          const text = buf.toString('utf8', off, off + len);
          if (text.startsWith('{"type":"phase-start"')) phase = String((JSON.parse(text) as { phase: string }).phase);
          if (text.startsWith('{"type":"phase-end"')) phase = 'end of the run';
          return writeSync(fd, buf, off, len);
        },
        fsyncSync: () => undefined,
      },
    });
    const ran = record.phases.filter((p) => p.status !== 'skipped');
    return { commands, outcome: record.outcome, lastPhase: ran.at(-1)?.name ?? null, phases: o.protocol.phases.map((p) => p.name) };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

// What read-only discovery found on a real node: the cabled cage, both rails' IPv4 addresses, and the node's names for
// the functions of both cages (udev may name them otherwise than DGX OS does).
export interface DiscoveredNode {
  name: string;
  cage: 0 | 1;
  railIps: [string, string];
  interfaces?: [[Rail, Rail], [Rail, Rail]];
}

// Discovery on real nodes, read-only and as preflight does it: ibdev2netdev and the sysfs identity of the netdevs
// (which cage is cabled), then `ip -o -4 addr` of its two rails.
export async function discoverNode(runner: CommandRunner, spec: NodeSpec): Promise<DiscoveredNode> {
  const fail = (why: string): never => {
    throw new Error(`${spec.name}: ${why}`);
  };
  const r = await runner.run(cmd.ibdev2netdev(), { timeoutMs: 20_000 });
  if (r.exitCode !== 0) fail(`ibdev2netdev failed (exit ${r.exitCode}): ${r.stderr.trim().split('\n')[0] ?? ''}`);
  const ids = await runner.run(cmd.netIdentity(), { timeoutMs: 20_000 });
  let cages: CageLinks[];
  try {
    cages = cagesFromLinks(parseIbdev2netdev(r.stdout).links, parseNetIdentity(ids.stdout));
  } catch (e) {
    if (e instanceof ParseError) fail(`cannot tell the cages apart: ${e.message}`);
    throw e;
  }
  const picked = pickCage(cages, spec.cage);
  if ('problem' in picked) return fail(picked.problem);
  const cage = picked.cage;
  if (cage.index !== 0 && cage.index !== 1) return fail(`cage ${cage.index}: a Spark has cages 0 and 1`);
  const ips: string[] = [];
  for (const rail of cage.rails) {
    const a = await runner.run(ipAddrCommand(rail.netdev), { timeoutMs: 20_000 });
    const ip = a.exitCode === 0 ? parseIpv4(a.stdout) : null;
    if (!ip) return fail(`${rail.netdev} has no IPv4 address (the run would stop at preflight-address)`);
    ips.push(ip.address);
  }
  const names = (c: CageLinks | undefined): [Rail, Rail] | null =>
    c
      ? [
          { netdev: c.rails[0].netdev, rdmaDevice: c.rails[0].rdmaDevice },
          { netdev: c.rails[1].netdev, rdmaDevice: c.rails[1].rdmaDevice },
        ]
      : null;
  const c0 = names(cages.find((c) => c.index === 0));
  const c1 = names(cages.find((c) => c.index === 1));
  return { name: spec.name, cage: cage.index, railIps: [ips[0]!, ips[1]!], ...(c0 && c1 ? { interfaces: [c0, c1] as [[Rail, Rail], [Rail, Rail]] } : {}) };
}

// What a real run adds on real nodes before and after the protocol: the node lock and stale-load cleanup.
export function lockCommands(node: string): PlannedCommand[] {
  const owner = { run: 'RUN-ID', label: 'cablequal run', host: 'CONTROLLER', pid: 0, started: '1970-01-01T00:00:00.000Z' };
  return [
    { node, phase: 'setup', kind: 'lock', command: buildAcquire(RUN_ROOT, owner) },
    { node, phase: 'setup', kind: 'lock', command: buildFindStale() },
    { node, phase: 'end', kind: 'lock', command: buildRelease(RUN_ROOT, 'RUN-ID') },
  ];
}

const sudo = (c: string) => (/^\s*sudo\s/.test(c) ? '[sudo] ' : '');

// `run --dry-run --json`: the plan as one JSON object (it printed the text before, #32 item 6): the protocol, the
// nodes with their cages, the phases planned, and every command in order with its node, phase and kind.
export function formatPlanJson(plan: RunPlan, nodes: { name: string; cage: number | 'auto' }[], protocol: Protocol, real: boolean): string {
  const doc = {
    schema: 'cablequal.dry-run/1',
    protocol: protocol.name,
    real,
    nodes,
    phases: plan.phases,
    outcome: plan.outcome,
    lastPhase: plan.lastPhase,
    commands: plan.commands.map((c) => ({ node: c.node, phase: c.phase, kind: c.kind, ...(c.name !== undefined ? { name: c.name } : {}), command: c.command })),
  };
  return `${JSON.stringify(doc)}\n`;
}

// The plan as text: per node, phase by phase, in the order the run executes it.
export function formatPlan(plan: RunPlan, nodes: { name: string; cage: number | 'auto' }[], o: { protocol: Protocol; real: boolean }): string {
  const out: string[] = [];
  out.push(`cablequal dry run: protocol ${o.protocol.name} (${o.protocol.file}), nodes ${nodes.map((n) => `${n.name} (cage ${n.cage})`).join(', ')}`);
  out.push('Every command the run executes on each node, in order. [sudo] marks a command run as root (sudo -n, never prompting).');
  out.push('"start NAME: ..." starts a load detached in its own process group under /tmp/cablequal/<run id>/ (pid, out, err and rc');
  out.push('files, polled with cat and kill -0); "stop NAME" sends TERM to that group, then KILL after 2 s.');
  out.push("mpirun on the first node starts the second node's NCCL rank itself, over SSH to the address after its -H.");
  if (!o.real) out.push('Simulated nodes: nothing was run anywhere.');
  else
    out.push(
      "Only read-only discovery (ibdev2netdev, the netdevs' sysfs identity, ip -o -4 addr) ran on the nodes; the list comes from the run code executed against simulated nodes with the discovered cages and addresses.",
    );
  if (plan.lastPhase !== plan.phases.at(-1)) {
    out.push(`NOTE: the run ended ${plan.outcome} in phase ${plan.lastPhase ?? '(none)'}: the phases after it are not listed.`);
  }
  for (const n of nodes) {
    out.push('', `== ${n.name} ==`);
    const mine = plan.commands.filter((c) => c.node === n.name);
    let phase: string | null = null;
    for (const c of mine.filter((x) => x.kind !== 'sampler')) {
      if (c.phase !== phase) {
        phase = c.phase;
        out.push(`${phase}:`);
      }
      const line = c.kind === 'start' ? `start ${c.name}: ${c.command}` : c.kind === 'stop' ? `stop ${c.name}` : c.command;
      out.push(`  ${sudo(c.command)}${line}`);
    }
    const sampler = [...new Set(mine.filter((c) => c.kind === 'sampler').map((c) => c.command))];
    if (sampler.length) {
      out.push('sampler (one persistent shell from the end of identity to the end of the run; these commands, each tick or every few ticks):');
      for (const c of sampler) out.push(`  ${sudo(c)}${c}`);
    }
  }
  return `${out.join('\n')}\n`;
}
