import { cmd, ipAddrCommand } from '../../transport/commands.js';
import { cagesFromLinks, parseIbdev2netdev, pickCage } from '../../probes/ibdev2netdev.js';
import { parseNetIdentity } from '../../probes/net-identity.js';
import { readCableSerial } from '../../probes/eeprom-hex.js';
import { parseEthtoolLink } from '../../probes/ethtool-link.js';
import { parseEthtoolFec } from '../../probes/ethtool-fec.js';
import { parseDmi } from '../../probes/dmi.js';
import { parseEthtoolDriver } from '../../probes/ethtool-driver.js';
import { osReleaseText, parseOsRelease } from '../../probes/os-release.js';
import { parsePerftestVersion } from '../../probes/perftest-version.js';
import { ParseError } from '../../domain/errors.js';
import { parseIpAddr } from '../ip-addr.js';
import type { NodeState, RunContext } from '../context.js';
import { SetupError, setupReason } from '../run-errors.js';

const REQUIRED_TOOLS = ['ethtool', 'ib_write_bw', 'ibdev2netdev', 'nvidia-smi', 'mpirun'];

// The sudoers line an operator adds so that cablequal can read the module EEPROM (the only root command it needs).
export function sudoersLine(user: string): string {
  return `${user} ALL=(root) NOPASSWD: /usr/sbin/ethtool -m *`;
}

function fail(rule: string, node: NodeState, message: string, advice: string): never {
  throw new SetupError(setupReason(rule, `${node.spec.name}: ${message}`, { node: node.spec.name, advice }));
}

async function checkTools(ctx: RunContext, node: NodeState, gpuTool: string | null): Promise<void> {
  const tools = gpuTool ? [...REQUIRED_TOOLS, gpuTool] : REQUIRED_TOOLS;
  const missing: string[] = [];
  for (const t of tools) {
    const r = await node.runner.run(cmd.which(t), { timeoutMs: 20_000 });
    if (r.exitCode !== 0) missing.push(t);
  }
  if (missing.length) {
    fail('preflight-tools', node, `missing ${missing.join(', ')}`, 'install perftest, nccl-tests with MPI and the GPU load on the node (see docs/operator-guide.md)');
  }
}

// Find the cage the cable is in from what the node says (ibdev2netdev for devices and carrier, sysfs for which
// physical port and PCI function each one is): the requested cage, or with `auto` the one whose two rails are Up.
async function discoverCage(ctx: RunContext, node: NodeState): Promise<void> {
  const text = await ctx.runChecked(node, cmd.ibdev2netdev(), 'ibdev2netdev', 20_000);
  const ids = await ctx.runLogged(node, cmd.netIdentity(), 'net-identity', 20_000);
  let cages;
  try {
    cages = cagesFromLinks(parseIbdev2netdev(text).links, parseNetIdentity(ids.stdout));
  } catch (e) {
    if (e instanceof ParseError) fail('preflight-rails', node, `cannot tell the cages apart: ${e.message}`, 'check that the mlx5 driver is loaded, ibdev2netdev works and /sys/class/net/<if>/device points at the ConnectX-7');
    throw e;
  }
  const picked = pickCage(cages, node.spec.cage);
  if ('problem' in picked) fail('preflight-rails', node, picked.problem, 'plug the cable in fully, check ibdev2netdev, or pass --port');
  const cage = picked.cage;
  if (!cage.up) {
    fail('preflight-rails', node, `cage ${cage.index} rails not both Up: ${cage.rails.map((r) => `${r.netdev} ${r.state}`).join(', ')}`, 'a Spark cable carries 200G only over both PCIe rails; check the cable seating and the other end');
  }
  node.cage = cage;
  node.record.cage = { index: cage.index, rails: [{ ...cage.rails[0] }, { ...cage.rails[1] }] };
}

// Both functions of one cage read one cable: the same EEPROM serial on both rails (when sudo lets us read it).
async function confirmOneCable(ctx: RunContext, node: NodeState): Promise<void> {
  const [r0, r1] = node.cage!.rails;
  const read = (netdev: string) => readCableSerial((c) => ctx.runLogged(node, c, `eeprom-serial:${netdev}`, 20_000), netdev);
  const [a, b] = [await read(r0.netdev), await read(r1.netdev)];
  if (a && b && a !== b) {
    fail('preflight-rails', node, `cage ${node.cage!.index}: ${r0.netdev} reads cable serial ${a} but ${r1.netdev} reads ${b}: these two functions are not one cage`, 'check which netdevs belong to the cabled port (ibdev2netdev, /sys/class/net/<if>/phys_port_name) and pass --port');
  }
}

// What `ethtool <if>` may report as Speed on one PCIe function of a healthy Spark cable: 200000, or 100000
// depending on firmware and switch state (samples/ethtool-link/dgx-spark-playbooks-switch-speed-*.txt). The throughput decides speed.
export const SPARK_FUNCTION_SPEEDS_MBPS = [200000, 100000];

// Why a function's reported speed is not one a Spark cable link shows, or null when it is.
export function speedProblem(speedMbps: number | null): string | null {
  if (speedMbps !== null && SPARK_FUNCTION_SPEEDS_MBPS.includes(speedMbps)) return null;
  return `speed ${speedMbps ?? 'unknown'} Mb/s; a Spark PCIe function reports 200000 or 100000`;
}

// Both rails: link detected, a Spark function speed, 2 or 4 lanes, RS-FEC active; remember their IPv4 addresses.
async function checkRails(ctx: RunContext, node: NodeState): Promise<void> {
  const rails = node.cage!.rails;
  for (const [i, rail] of rails.entries()) {
    const link = parseEthtoolLink(await ctx.runChecked(node, cmd.ethtoolLink(rail.netdev), `ethtool-link:${rail.netdev}`, 20_000));
    if (link.linkDetected !== true) fail('preflight-link', node, `${rail.netdev}: link not detected`, 'check the cable at both ends');
    const slow = speedProblem(link.speedMbps);
    if (slow) fail('preflight-speed', node, `${rail.netdev}: ${slow}`, 'check the cable type and the peer port: the link trained below 200G (the ib_write_bw throughput is what judges its speed)');
    if (link.lanes !== null && link.lanes !== 2 && link.lanes !== 4) fail('preflight-lanes', node, `${rail.netdev}: ${link.lanes} lanes, expected 2 or 4`, 'check the cable family (QSFP56: 4 lanes, QSFP112: 2 lanes)');
    if (i === 0) {
      node.record.lanes = link.lanes;
      node.record.speedMbps = link.speedMbps;
    }
    const fec = parseEthtoolFec(await ctx.runChecked(node, cmd.ethtoolFec(rail.netdev), `ethtool-fec:${rail.netdev}`, 20_000));
    if (!/^RS/i.test(fec.active)) fail('preflight-fec', node, `${rail.netdev}: active FEC ${fec.active}, expected RS`, 'FEC None after a re-cable needs a reboot of both nodes with the cable attached');
    if (i === 0) node.record.fecActive = fec.active;
    const ip = parseIpAddr(await ctx.runChecked(node, ipAddrCommand(rail.netdev), `ip-addr:${rail.netdev}`, 20_000));
    if (!ip) fail('preflight-address', node, `${rail.netdev} has no IPv4 address`, 'give each rail its own /24 (e.g. 192.168.100.x and 192.168.101.x) as in NVIDIA\'s connect-two-sparks playbook');
    node.railIps[i] = ip;
  }
}

async function checkSudo(ctx: RunContext, node: NodeState, user: string): Promise<void> {
  const r = await ctx.runLogged(node, cmd.eepromLower(node.cage!.rails[0].netdev), 'sudo-check', 20_000);
  if (r.exitCode !== 0 && /sudo:/.test(r.stderr)) {
    fail('preflight-sudo', node, `sudo -n ethtool -m refused: ${r.stderr.trim().split('\n')[0]}`, `add this line with visudo on the node: ${sudoersLine(user)}`);
  }
}

async function readVersions(ctx: RunContext, node: NodeState): Promise<void> {
  // Kept raw in the journal: the certificate's conditions (machine, BIOS) and the simulated marking come from it.
  const dmi = await ctx.runLogged(node, cmd.dmi(), 'dmi', 10_000);
  try {
    const { simulated, ...facts } = parseDmi(dmi.stdout);
    node.record.dmi = facts;
    if (simulated) node.record.simulated = true;
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    ctx.log.warn({ node: node.spec.name, err: e.message }, 'DMI strings unreadable');
  }
  const kernel = await node.runner.run(cmd.uname(), { timeoutMs: 10_000 });
  if (kernel.exitCode === 0) node.record.kernel = kernel.stdout.trim();
  const eth = await node.runner.run(cmd.ethtoolVersion(), { timeoutMs: 10_000 });
  if (eth.exitCode === 0) node.record.ethtoolVersion = eth.stdout.trim().replace(/^ethtool version\s*/, '');
  // Traceability: what a lab compares between two batches. Each is kept raw in the journal; an unreadable one stays
  // unknown (a warning), never a reason to stop.
  const fact = async <T>(command: string, what: string, parse: (text: string) => T, apply: (v: T) => void) => {
    const r = await ctx.runLogged(node, command, what, 10_000);
    try {
      if (r.stdout.trim() === '') throw new ParseError(what, 1, `no output (exit ${r.exitCode}${r.stderr ? `: ${r.stderr.trim().split('\n')[0]}` : ''})`);
      apply(parse(r.stdout));
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      ctx.log.warn({ node: node.spec.name, what, err: e.message }, 'node fact unreadable');
    }
  };
  await fact(cmd.ethtoolDriver(node.cage!.rails[0].netdev), 'ethtool-driver', parseEthtoolDriver, (d) => {
    node.record.driver = [d.driver, d.version].filter(Boolean).join(' ');
    if (d.firmwareVersion) node.record.firmware = d.firmwareVersion;
  });
  await fact(cmd.osRelease(), 'os-release', (t) => osReleaseText(parseOsRelease(t)), (v) => {
    if (v) node.record.osRelease = v;
  });
  await fact(cmd.perftestVersion(), 'perftest-version', parsePerftestVersion, (v) => (node.record.perftestVersion = v));
}

// Preflight on every node: each failure is an ERROR that says what to do, never a cable verdict.
export async function preflight(ctx: RunContext, gpuTool: string | null): Promise<void> {
  const users = await Promise.all(
    ctx.nodes.map(async (n) => {
      const r = await n.runner.run(cmd.whoami(), { timeoutMs: 20_000 });
      if (r.exitCode !== 0) fail('preflight-ssh', n, `cannot run commands: ${r.stderr.trim()}`, 'check SSH access to the node');
      return r.stdout.trim();
    }),
  );
  if (new Set(users).size > 1) {
    throw new SetupError(setupReason('preflight-user', `user names differ between nodes (${users.join(', ')})`, { advice: 'NVIDIA\'s procedure needs the same user on all nodes (MPI and NCCL assume it)' }));
  }
  await Promise.all(
    ctx.nodes.map(async (n, i) => {
      await checkTools(ctx, n, gpuTool);
      await discoverCage(ctx, n);
      await checkRails(ctx, n);
      await checkSudo(ctx, n, users[i] ?? 'user');
      await confirmOneCable(ctx, n);
      await readVersions(ctx, n);
    }),
  );
}
