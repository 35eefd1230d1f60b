// After a cable swap both Sparks are in the hot-plug trap (samples/other/spark-cx7-cable-hotplug-
// kernel-log.txt): the new cable comes up at ~13 Gb/s per rail with clean counters until both nodes reboot with it in.
// Before a cable is qualified its bench is brought into a measurable state: both nodes rebooted (by the batch, or by
// the operator when told), back on SSH with a new boot id, both rails Up with RS-FEC, and the loopback of both rails
// of both nodes at full speed. Every wait is bounded and ends in an ERROR that names the node and what to do.
import type { Clock } from '../domain/clock.js';
import type { NodeSpec } from '../domain/node.js';
import type { Reason } from '../domain/outcome.js';
import { ParseError } from '../domain/errors.js';
import { limitOf, type LoopbackPhase, type Protocol } from '../protocol/index.js';
import { parseEthtoolFec } from '../probes/ethtool-fec.js';
import { cagesFromLinks, parseIbdev2netdev, pickCage, type CageLinks } from '../probes/ibdev2netdev.js';
import { parseNetIdentity } from '../probes/net-identity.js';
import { parseIpAddr } from '../run/ip-addr.js';
import { loopbackFloorReason, measureLoopback, type LoopbackIo, type LoopbackResult } from '../run/steps/loopback.js';
import { cmd, ipAddrCommand } from '../transport/commands.js';
import { TransportError, type CommandResult, type CommandRunner } from '../transport/types.js';
import type { Operator } from './operator.js';

// How the nodes get rebooted after a swap: by the batch over SSH, or by the operator when told.
export type RebootMode = 'auto' | 'manual';

// The sudoers line the automatic reboot needs (with the one for `ethtool -m`).
export function rebootSudoersLine(user: string): string {
  return `${user} ALL=(root) NOPASSWD: /usr/bin/systemctl reboot --no-block`;
}

// One line of the batch's bench log (bench.jsonl): what was run on a node while settling it, and what came back.
export interface BenchLogEntry {
  pair: number;
  node?: string;
  step: string;
  command?: string;
  exitCode?: number | null;
  stdout?: string;
  stderr?: string;
  message?: string;
}

export interface SettleDeps {
  clock: Clock;
  signal: AbortSignal;
  operator: Operator;
  mode: RebootMode;
  protocol: Protocol;
  pollMs: number;
  rebootWaitMs: number; // both nodes back on SSH with a new boot id
  linkWaitMs: number; // then both rails Up with RS-FEC
  maxReboots: number; // reboots per cable before the bench is declared not measurable (once it took two)
  log: (e: BenchLogEntry) => void;
  // Manual mode on the simulated lab: its scripted operator reboots the nodes it is asked to.
  onRebootRequest?: (nodes: string[]) => void;
}

export interface SettleBench {
  pair: number;
  nodes: NodeSpec[];
  runners: Map<string, CommandRunner>;
  // The node that is the machine this batch runs on (src/batch/controller.ts): never rebooted by the batch.
  controller?: string;
  // The cages whose links and loopback are checked on every node (both, for a bench with a cable in each); default:
  // each node's own.
  cages?: number[];
}

// The batch rebooted the other node; the operator must reboot the controller node (its boot id then) and --resume.
export interface ControllerRebootNeeded {
  node: string;
  bootId: string;
}

export type SettleResult =
  // rebootS: seconds from each reboot command until the nodes answered with new boot ids, summed (0 without a reboot).
  | { ok: true; reboots: number; rebootS: number; loopback: LoopbackResult[] }
  | { ok: false; reboots: number; reason: Reason }
  | { ok: false; reboots: number; controllerReboot: ControllerRebootNeeded }
  | { ok: false; aborted: true };

class Aborted extends Error {}
class ControllerReboot extends Error {
  constructor(readonly need: ControllerRebootNeeded) {
    super(`${need.node} must be rebooted by the operator`);
  }
}
class NotMeasurable extends Error {
  constructor(readonly reason: Reason) {
    super(reason.message);
  }
}

const fail = (rule: string, message: string, extra: Partial<Reason> = {}): never => {
  throw new NotMeasurable({ rule, message, ...extra });
};

// The loopback phase of the protocol (or the default guard: 10 s of 64 KiB writes).
function loopbackPhaseOf(p: Protocol): Pick<LoopbackPhase, 'msgSize' | 'durationS'> {
  return p.phases.find((x): x is LoopbackPhase => x.kind === 'loopback') ?? { msgSize: 65536, durationS: 10 };
}

// Bring one bench into a measurable state. `swapped`: the cable went in while the nodes ran (reboot first); otherwise
// the nodes are checked and rebooted only when the loopback shows them throttled.
export async function settleBench(bench: SettleBench, swapped: boolean, deps: SettleDeps): Promise<SettleResult> {
  let reboots = 0;
  let rebootMs = 0;
  try {
    if (swapped) {
      rebootMs += await reboot(bench, deps, 'the cable was plugged into running nodes (the hot-plug trap: ~13 Gb/s until both reboot with it in)');
      reboots++;
    }
    for (;;) {
      const cages = await awaitLinks(bench, deps);
      const results = await loopbackAll(bench, cages, deps);
      const reason = loopbackFloorReason(results, limitOf(deps.protocol, 'loopback-floor').fail);
      if (!reason) return { ok: true, reboots, rebootS: rebootMs / 1000, loopback: results };
      if (reboots >= deps.maxReboots) {
        throw new NotMeasurable({
          ...reason,
          message: `after ${reboots} reboot(s) of ${names(bench)}: ${reason.message}`,
          advice: `power the nodes off for 60 s (or check the PCIe links the advice names), then --resume. ${reason.advice ?? ''}`.trim(),
        });
      }
      rebootMs += await reboot(bench, deps, `the nodes are not at full speed: ${reason.message}`);
      reboots++;
    }
  } catch (e) {
    if (e instanceof Aborted) return { ok: false, aborted: true };
    if (e instanceof NotMeasurable) return { ok: false, reboots, reason: e.reason };
    if (e instanceof ControllerReboot) return { ok: false, reboots: reboots + 1, controllerReboot: e.need };
    throw e;
  }
}

const names = (b: SettleBench) => b.nodes.map((n) => n.name).join(' and ');

async function sleep(deps: SettleDeps, ms: number): Promise<void> {
  if (deps.signal.aborted) throw new Aborted();
  try {
    await deps.clock.sleep(ms, deps.signal);
  } catch {
    throw new Aborted();
  }
}

// Run a command on a node, keep it in the bench log; a lost connection is null (the node is down or rebooting).
async function runLogged(bench: SettleBench, deps: SettleDeps, node: string, step: string, command: string, timeoutMs = 30_000): Promise<CommandResult | null> {
  try {
    const r = await bench.runners.get(node)!.run(command, { timeoutMs, signal: deps.signal });
    deps.log({ pair: bench.pair, node, step, command, exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr });
    return r;
  } catch (e) {
    if (deps.signal.aborted) throw new Aborted();
    if (!(e instanceof TransportError)) throw e;
    deps.log({ pair: bench.pair, node, step, command, message: e.message });
    return null;
  }
}

const BOOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function bootId(bench: SettleBench, deps: SettleDeps, node: string): Promise<string | null> {
  const r = await runLogged(bench, deps, node, 'boot-id', cmd.bootId(), 20_000);
  const id = r?.exitCode === 0 ? r.stdout.trim() : '';
  return BOOT_ID.test(id) ? id : null;
}

// Reboot both nodes (or tell the operator to) and wait until both answer with a new boot id; how long that took (ms).
// The machine the batch runs on is never rebooted by it: the other node is, then the operator is asked to reboot that
// one (ControllerReboot).
async function reboot(bench: SettleBench, deps: SettleDeps, why: string): Promise<number> {
  const others = bench.nodes.filter((n) => n.name !== bench.controller);
  const peers = { ...bench, nodes: others };
  const before = new Map<string, string>();
  for (const n of bench.nodes) {
    const id = await bootId(bench, deps, n.name);
    if (id === null)
      fail('bench-unreachable', `${n.name}: cannot read its boot id (/proc/sys/kernel/random/boot_id) before the reboot`, {
        node: n.name,
        advice: 'check SSH to the node, then --resume',
      });
    before.set(n.name, id!);
  }
  const waitMin = Math.round(deps.rebootWaitMs / 60_000);
  const askedMs = deps.clock.now();
  const notThis = bench.controller ? `; ${bench.controller} is the machine this batch runs on: the batch does not reboot it` : '';
  if (deps.mode === 'auto') {
    deps.operator.say(`[pair ${bench.pair + 1}] rebooting ${names(peers)}: ${why}${notThis}`);
    for (const n of others) {
      const r = await runLogged(bench, deps, n.name, 'reboot', cmd.reboot());
      // A null result: the connection dropped as the node went down; the boot id tells.
      if (r && r.exitCode !== 0) {
        const user = (await runLogged(bench, deps, n.name, 'whoami', cmd.whoami()))?.stdout.trim() || 'nvidia';
        fail('reboot-refused', `${n.name}: \`${cmd.reboot()}\` failed (exit ${r.exitCode}): ${r.stderr.trim().split('\n')[0] || 'no message'}`, {
          node: n.name,
          advice: `add this line with visudo on the node: ${rebootSudoersLine(user)} (or run the batch with --reboot manual), then --resume`,
        });
      }
    }
  } else {
    const each = others.length > 1 ? ' on each' : '';
    deps.operator.say(
      `[pair ${bench.pair + 1}] reboot ${names(peers)} now, with the cable in (e.g. \`sudo systemctl reboot --no-block\`${each}): ${why}. Waiting up to ${waitMin} min for ${others.length > 1 ? 'both' : 'it'} to come back${notThis}`,
    );
    deps.onRebootRequest?.(others.map((n) => n.name));
  }
  const deadline = deps.clock.now() + deps.rebootWaitMs;
  const back = new Set<string>();
  const last = new Map<string, string | null>();
  for (;;) {
    for (const n of others) {
      if (back.has(n.name)) continue;
      const id = await bootId(bench, deps, n.name);
      last.set(n.name, id);
      if (id !== null && id !== before.get(n.name)) back.add(n.name);
    }
    if (back.size === others.length) {
      deps.log({ pair: bench.pair, step: 'rebooted', message: `${names(peers)} back with new boot ids` });
      if (bench.controller) throw new ControllerReboot({ node: bench.controller, bootId: before.get(bench.controller)! });
      return deps.clock.now() - askedMs;
    }
    if (deps.clock.now() >= deadline) break;
    await sleep(deps, deps.pollMs);
  }
  const late = others.find((n) => !back.has(n.name))!.name;
  const same = last.get(late) === before.get(late);
  return fail('reboot-timeout', `${late}: ${same ? 'answers with the same boot id: it did not reboot' : 'did not come back on SSH'} within ${waitMin} min`, {
    node: late,
    advice: same
      ? deps.mode === 'auto'
        ? 'a plain reboot sometimes does nothing on a Spark: check that `sudo systemctl reboot --no-block` reboots the node, or power-cycle it; then --resume'
        : 'reboot the node (sudo systemctl reboot --no-block), then --resume'
      : 'check the node (power, boot) and its SSH path; then --resume',
  });
}

// The bench's cage on one node now: both rails Up with RS-FEC active, or why not.
async function cageReady(bench: SettleBench, deps: SettleDeps, node: NodeSpec): Promise<{ cage: CageLinks } | { problem: string }> {
  const links = await runLogged(bench, deps, node.name, 'ibdev2netdev', cmd.ibdev2netdev());
  const ids = await runLogged(bench, deps, node.name, 'net-identity', cmd.netIdentity());
  if (!links || !ids) return { problem: 'not reachable' };
  if (links.exitCode !== 0) return { problem: `ibdev2netdev failed: ${links.stderr.trim().split('\n')[0] ?? ''}` };
  let picked;
  try {
    picked = pickCage(cagesFromLinks(parseIbdev2netdev(links.stdout).links, parseNetIdentity(ids.stdout)), node.cage);
  } catch (e) {
    if (e instanceof ParseError) return { problem: e.message };
    throw e;
  }
  if ('problem' in picked) return picked;
  const cage = picked.cage;
  if (!cage.up) return { problem: `cage ${cage.index}: ${cage.rails.map((r) => `${r.netdev} ${r.state}`).join(', ')}` };
  for (const rail of cage.rails) {
    const f = await runLogged(bench, deps, node.name, 'fec', cmd.ethtoolFec(rail.netdev));
    let active = 'unknown';
    try {
      if (f?.exitCode === 0) active = parseEthtoolFec(f.stdout).active;
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
    }
    if (!/^RS/i.test(active)) return { problem: `${rail.netdev}: active FEC ${active}, expected RS` };
  }
  return { cage };
}

// Wait until both nodes show the cage (each cage of a two-cable bench) Up on both rails with RS-FEC.
async function awaitLinks(bench: SettleBench, deps: SettleDeps): Promise<{ node: NodeSpec; cage: CageLinks }[]> {
  const deadline = deps.clock.now() + deps.linkWaitMs;
  const wanted = bench.nodes.flatMap((n) => (bench.cages ?? [n.cage]).map((cage) => ({ ...n, cage })));
  for (;;) {
    const ready: { node: NodeSpec; cage: CageLinks }[] = [];
    let problem = '';
    for (const n of wanted) {
      const r = await cageReady(bench, deps, n);
      if ('cage' in r) ready.push({ node: n, cage: r.cage });
      else if (!problem) problem = `${n.name}: ${r.problem}`;
    }
    if (ready.length === wanted.length) return ready;
    if (deps.clock.now() >= deadline) {
      fail('link-timeout', `link not ready ${Math.round(deps.linkWaitMs / 1000)} s after the reboot: ${problem}`, {
        node: problem.split(':')[0]!,
        advice: 'reseat the cable at both ends; FEC None after a re-cable needs both nodes rebooted with the cable in; then --resume',
      });
    }
    await sleep(deps, deps.pollMs);
  }
}

// Loopback of both rails of every node's cage(s) (one after the other here: the batch is not timing-critical).
async function loopbackAll(bench: SettleBench, cages: { node: NodeSpec; cage: CageLinks }[], deps: SettleDeps): Promise<LoopbackResult[]> {
  const phase = loopbackPhaseOf(deps.protocol);
  const out: LoopbackResult[] = [];
  for (const { node: n, cage } of cages) {
    const runner = bench.runners.get(n.name)!;
    const io: LoopbackIo = {
      start: async (command, name) => {
        deps.log({ pair: bench.pair, node: n.name, step: 'loopback-server', command });
        return runner.start(command, { runDir: `/tmp/cablequal/batch-pair-${bench.pair + 1}`, name });
      },
      run: async (command, what, timeoutMs) => {
        const r = await runLogged(bench, deps, n.name, what, command, timeoutMs);
        if (!r)
          fail('bench-unreachable', `${n.name}: lost during the loopback check`, { node: n.name, advice: 'check the node and its SSH path; then --resume' });
        return r!;
      },
      stop: (p) => p.stop(),
      sleep: (ms) => sleep(deps, ms),
    };
    for (const [index, rail] of cage.rails.entries()) {
      const ipOut = await runLogged(bench, deps, n.name, 'ip-addr', ipAddrCommand(rail.netdev));
      let ip: string | null = null;
      try {
        ip = ipOut?.exitCode === 0 ? parseIpAddr(ipOut.stdout) : null;
      } catch (e) {
        if (!(e instanceof ParseError)) throw e;
      }
      if (!ip)
        fail('preflight-address', `${n.name}: ${rail.netdev} has no IPv4 address`, {
          node: n.name,
          advice:
            "give each rail a persistent address (netplan; two /24s) as in NVIDIA's connect-two-sparks playbook, so that it survives the reboots; then --resume",
        });
      const r = await measureLoopback(io, deps.protocol.commands, phase, { index, rdmaDevice: rail.rdmaDevice, ip: ip! });
      if ('error' in r)
        fail('loopback-failed', `${n.name}: ${r.error}`, {
          node: n.name,
          rail: index,
          advice: 'check perftest on the node and the RoCE GID index; then --resume',
        });
      else out.push({ node: n.name, rail: index, device: rail.rdmaDevice, ...(rail.pci ? { pci: rail.pci } : {}), gbps: r.gbps });
    }
  }
  deps.log({ pair: bench.pair, step: 'loopback', message: out.map((r) => `${r.node} rail ${r.rail} ${r.gbps.toFixed(1)} Gb/s`).join(', ') });
  return out;
}
