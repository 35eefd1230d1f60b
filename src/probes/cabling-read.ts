// What a cabling map reads on one node, through its CommandRunner; every command read-only, `sudo -n` only for
// `ethtool -m` (the module EEPROM, as the run's identity step reads it): ibdev2netdev and sysfs (which netdev and
// RoCE device sit in which cage), `ip -j addr show` (MTU, state, addresses), per cage `ethtool <if>` (link, speed,
// lanes), `ethtool -I --show-fec <if>` and the EEPROM's lower and upper page 00h, `lldpctl -f json0` where lldpd
// runs, NCCL's configuration files and the session's NCCL_IB_HCA; then the pings of cabling-map.ts's plan.
import type { NcclView, NodeView, PingView, PortView } from '../domain/cabling-view.js';
import { ParseError } from '../domain/errors.js';
import { cmd } from '../transport/commands.js';
import { RemoteCommandError, type CommandRunner } from '../transport/types.js';
import { readModuleEeprom } from './eeprom-hex.js';
import { parseEthtoolFec } from './ethtool-fec.js';
import { parseEthtoolLink } from './ethtool-link.js';
import { cagesFromLinks, parseIbdev2netdev } from './ibdev2netdev.js';
import { parseIpJson } from './ip-json.js';
import { parseLldpJson0, type LldpNeighbour } from './lldpctl.js';
import { ncclConfValue, parseNcclConf } from './nccl-conf.js';
import { parseNetIdentity } from './net-identity.js';
import { parsePingReplied } from './ping.js';

async function output(runner: CommandRunner, command: string): Promise<string> {
  const r = await runner.run(command);
  if (r.exitCode !== 0) throw new RemoteCommandError(runner.node, r);
  return r.stdout;
}

// NCCL_IB_HCA as NCCL splits it: devices separated by commas, a leading ^ or = and a :port suffix dropped.
function hcaDevices(value: string): string[] {
  return value
    .replace(/^[\^=]/, '')
    .split(',')
    .map((d) => d.split(':')[0]!.trim())
    .filter((d) => d !== '');
}

async function ncclOf(runner: CommandRunner): Promise<NcclView> {
  const env = await runner.run(cmd.ncclHcaEnv());
  if (env.exitCode === 0 && env.stdout.trim() !== '') return { source: 'environment', devices: hcaDevices(env.stdout.trim()) };
  const conf = ncclConfValue(parseNcclConf((await runner.run(cmd.ncclConf())).stdout), 'NCCL_IB_HCA');
  return conf ? { source: conf.file, devices: hcaDevices(conf.value) } : { source: 'default', devices: null };
}

// The module identity of a cage, or null when no module answers (an empty cage, or a read the module refuses).
async function moduleOf(runner: CommandRunner, netdev: string): Promise<PortView['module']> {
  try {
    const id = await readModuleEeprom(runner, netdev);
    return { serial: id.vendorSn || null, partNumber: id.vendorPn || null, vendor: id.vendorName || null };
  } catch (e) {
    if (e instanceof RemoteCommandError || e instanceof ParseError) return null;
    throw e;
  }
}

export async function readNodeView(runner: CommandRunner, node: string): Promise<NodeView> {
  const links = parseIbdev2netdev(await output(runner, cmd.ibdev2netdev())).links;
  const cages = cagesFromLinks(links, parseNetIdentity((await runner.run(cmd.netIdentity())).stdout));
  const ifs = new Map(parseIpJson(await output(runner, cmd.ipAddrJson())).map((i) => [i.ifname, i]));
  const lldpRun = await runner.run(cmd.lldpNeighbours());
  const lldp: LldpNeighbour[] = lldpRun.exitCode === 0 ? parseLldpJson0(lldpRun.stdout) : [];
  const ports: PortView[] = [];
  for (const c of cages) {
    const first = c.rails[0].netdev;
    const l = await runner.run(cmd.ethtoolLink(first));
    const link = parseEthtoolLink(l.stdout + l.stderr);
    const f = await runner.run(cmd.ethtoolFec(first));
    const fec = f.exitCode === 0 ? parseEthtoolFec(f.stdout).active : null;
    const heard = lldp.find((n) => c.rails.some((r) => r.netdev === n.iface));
    ports.push({
      cage: c.index,
      rails: c.rails.map((r) => ({
        netdev: r.netdev,
        rdmaDevice: r.rdmaDevice,
        up: r.state === 'Up',
        addresses: ifs.get(r.netdev)?.addresses ?? [],
        mtu: ifs.get(r.netdev)?.mtu ?? null,
      })),
      module: await moduleOf(runner, first),
      linkUp: link.linkDetected === true,
      speedMbps: link.linkDetected ? link.speedMbps : null,
      lanes: link.linkDetected ? link.lanes : null,
      fec,
      lldp: heard ? { system: heard.system, chassisId: heard.chassisId, port: heard.port } : null,
    });
  }
  return { node, ports, nccl: await ncclOf(runner) };
}

// Run the planned pings (each over its rail's own interface), in order.
export async function runPings(
  runners: ReadonlyMap<string, CommandRunner>,
  plan: readonly { node: string; netdev: string; target: string }[],
): Promise<PingView[]> {
  const out: PingView[] = [];
  for (const p of plan) {
    const r = await runners.get(p.node)!.run(cmd.pingVia(p.netdev, p.target));
    out.push({ ...p, replied: r.exitCode === 0 && parsePingReplied(r.stdout + r.stderr) });
  }
  return out;
}
