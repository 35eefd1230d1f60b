import { cmd, ipAddrCommand } from '../../transport/commands.js';
import { cagesFromLinks, parseIbdev2netdev, pickCage, type Ibdev2netdevLink } from '../../probes/ibdev2netdev.js';
import { parseNetIdentity } from '../../probes/net-identity.js';
import { parseRdmaLink, railLinksOfRdma } from '../../probes/rdma-link.js';
import { readCableSerial } from '../../probes/eeprom-hex.js';
import { parseEthtoolLink } from '../../probes/ethtool-link.js';
import { parseEthtoolFec } from '../../probes/ethtool-fec.js';
import { parseDmi } from '../../probes/dmi.js';
import { parseEthtoolDriver } from '../../probes/ethtool-driver.js';
import { osReleaseText, parseOsRelease } from '../../probes/os-release.js';
import { parsePerftestVersion } from '../../probes/perftest-version.js';
import { parseGpuVersions } from '../../probes/gpu-versions.js';
import { ParseError } from '../../domain/errors.js';
import { differentCages, differentCagesWarning } from '../../domain/node.js';
import { parseIpv4, subnetOf } from '../ip-addr.js';
import type { Protocol } from '../../protocol/index.js';
import { gpuLoadNeeds } from '../../protocol/gpu-load.js';
import type { NodeState, RunContext } from '../context.js';
import { SetupError, failOnNode, setupReason } from '../run-errors.js';
import { checkNcclEnvironment, ncclTestOf } from './nccl-preflight.js';

// The sudoers line an operator adds so that cablequal can read the module EEPROM (the only root command it needs).
export function sudoersLine(user: string): string {
  return `${user} ALL=(root) NOPASSWD: /usr/sbin/ethtool -m *`;
}

function fail(rule: string, node: NodeState, message: string, advice: string): never {
  return failOnNode(rule, node.spec.name, message, advice);
}

// What to install for each program a run starts (docs/operator-guide.md section 1 says it at length).
const INSTALL: Record<string, string> = {
  ethtool: 'ethtool ships with DGX OS (sudo apt install ethtool)',
  ibdev2netdev: 'ibdev2netdev ships with the MLNX/DOCA tools of DGX OS; without it cablequal reads `rdma link` (sudo apt install iproute2)',
  'nvidia-smi': 'nvidia-smi ships with the NVIDIA driver',
  ib_write_bw: 'sudo apt install perftest',
  stdbuf: 'stdbuf is part of coreutils',
  mpirun: 'sudo apt install openmpi-bin libopenmpi-dev',
  all_reduce_perf:
    "build nccl-tests with MPI=1 as NVIDIA's nccl playbook does and put its build/ directory on the PATH of non-interactive SSH sessions (or name it by absolute path in the protocol)",
  gpu_burn: "build gpu-burn (make COMPUTE=121) and install gpu_burn in /usr/local/bin, its compare kernel as the protocol's gpuLoad names it",
  docker: 'install Docker and add the user to the docker group',
};

// The program a command template starts: its first word, past a stdbuf/env prefix.
function programOf(template: string): string | null {
  const words = template.trim().split(/\s+/);
  let i = 0;
  if (words[i] === 'stdbuf') for (i++; words[i]?.startsWith('-'); i++);
  return words[i] ?? null;
}

// Every program the protocol's phases start on a node: they must be on the PATH of a non-interactive SSH session
// (the way cablequal and mpirun start them), or at the absolute path the protocol names.
export function requiredTools(protocol: Protocol): string[] {
  const tools = ['ethtool', 'ibdev2netdev', 'nvidia-smi'];
  const kinds = new Set(protocol.phases.map((p) => p.kind));
  const linkLoad = kinds.has('loopback') || kinds.has('ib_write_bw') || protocol.phases.some((p) => p.kind === 'soak' && p.linkLoad);
  if (linkLoad) tools.push(programOf(protocol.commands.ibWriteBwServer) ?? 'ib_write_bw', 'stdbuf');
  if (kinds.has('nccl')) {
    tools.push(programOf(protocol.commands.nccl) ?? 'mpirun');
    const test = ncclTestOf(protocol);
    if (test) tools.push(test);
  }
  if (protocol.phases.some((p) => p.kind === 'soak' && p.gpuLoad)) {
    const need = gpuLoadNeeds(protocol.commands.gpuLoad);
    tools.push(need.program);
    if (need.check) tools.push(need.check[0]!);
  }
  return [...new Set(tools)];
}

function installAdvice(tools: string[]): string {
  return tools.map((t) => `${t}: ${INSTALL[t.split('/').pop()!] ?? 'install it (docs/operator-guide.md section 1)'}`).join('; ');
}

// What lists the RDMA devices, their netdevs and link state on a node: ibdev2netdev, or iproute2's `rdma link`.
type LinkTool = 'ibdev2netdev' | 'rdma';

// Every required program is there; a node without ibdev2netdev (no MLNX/DOCA tools) lists its links with `rdma link`.
// `found`: where each program is, as `command -v` printed it (untrusted), or its absolute path.
async function checkTools(ctx: RunContext, node: NodeState): Promise<{ linkTool: LinkTool; found: Map<string, string> }> {
  const missing: string[] = [];
  const found = new Map<string, string>();
  for (const t of requiredTools(ctx.protocol)) {
    const r = await ctx.runLogged(node, cmd.programThere(t), `tool:${t}`, 20_000);
    if (r.exitCode !== 0) missing.push(t);
    else found.set(t, t.startsWith('/') ? t : r.stdout.trim().split('\n')[0]!);
  }
  let linkTool: LinkTool = 'ibdev2netdev';
  if (missing.includes('ibdev2netdev') && (await ctx.runLogged(node, cmd.programThere('rdma'), 'tool:rdma', 20_000)).exitCode === 0) {
    missing.splice(missing.indexOf('ibdev2netdev'), 1);
    linkTool = 'rdma';
  }
  if (missing.length) {
    fail(
      'preflight-tools',
      node,
      `missing ${missing.join(', ')} (not on the PATH of a non-interactive SSH session)`,
      `${installAdvice(missing)} (see docs/operator-guide.md section 1)`,
    );
  }
  return { linkTool, found };
}

// The GPU load of a loaded soak must be able to start on the node: its working directory, the files it needs (gpu_burn
// opens its compare kernel at start and exits when it is not there, leaving the GPUs idle) and the protocol's check.
async function checkGpuLoad(ctx: RunContext, node: NodeState): Promise<void> {
  if (!ctx.protocol.phases.some((p) => p.kind === 'soak' && p.gpuLoad)) return;
  const need = gpuLoadNeeds(ctx.protocol.commands.gpuLoad);
  const guide = 'docs/operator-guide.md section 1, "The GPU load"';
  if (need.problem)
    fail(
      'preflight-gpu-load',
      node,
      need.problem,
      `give the protocol's gpuLoad as a program with -c <absolute path of the compare kernel> (see protocols/spark-burnin.json and ${guide})`,
    );
  if (need.cwd !== null) {
    const r = await ctx.runLogged(node, cmd.isDirectory(need.cwd), `gpu-load-cwd:${need.cwd}`, 20_000);
    if (r.exitCode !== 0)
      fail(
        'preflight-gpu-load',
        node,
        `${need.cwd} (the GPU load's working directory) does not exist`,
        `create it or change gpuLoad.cwd in the protocol (${guide})`,
      );
  }
  for (const f of need.files) {
    const r = await ctx.runLogged(node, cmd.readable(f.path), `gpu-load-file:${f.path}`, 20_000);
    if (r.exitCode !== 0) {
      fail(
        'preflight-gpu-load',
        node,
        `${f.path} is not there (${f.why}): the GPU load would not start and the GPUs would stay idle`,
        `install it as ${guide} says, or change the path in a copy of the protocol`,
      );
    }
  }
  if (need.check) {
    const r = await ctx.runLogged(node, cmd.program({ program: need.check[0]!, args: need.check.slice(1) }), 'gpu-load-check', 60_000);
    if (r.exitCode !== 0) {
      const out = `${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-2).join(' | ');
      fail(
        'preflight-gpu-load',
        node,
        `the GPU load's check \`${need.check.join(' ')}\` failed (exit ${r.exitCode ?? r.signal}): ${out || 'no output'}`,
        `make the check pass on the node (${guide})`,
      );
    }
  }
}

// mpirun on the first node starts the second rank over SSH to the second node's rail address, non-interactively: a
// password prompt or an unknown host key there would hang or fail the NCCL phase, so prove it works now.
async function checkPeerSsh(ctx: RunContext): Promise<void> {
  if (!ctx.protocol.phases.some((p) => p.kind === 'nccl')) return;
  const [a, b] = ctx.nodes as [NodeState, NodeState];
  const host = b.railIps[0]!;
  const r = await ctx.runLogged(a, cmd.sshBatch(host), `ssh-peer:${host}`, 30_000);
  if (r.exitCode !== 0) {
    const why = r.stderr.trim().split('\n').slice(-1)[0] || `exit ${r.exitCode ?? r.signal}`;
    fail(
      'preflight-ssh-peer',
      a,
      `cannot reach ${b.spec.name} at ${host} the way mpirun does (ssh -o BatchMode=yes ${host}): ${why}`,
      `on ${a.spec.name}, as the same user: ssh-copy-id ${host} (or add its key to ~/.ssh/authorized_keys on ${b.spec.name}), then ssh ${host} true once to record its host key`,
    );
  }
}

// The node's RDMA ports with their netdevs and link state, from ibdev2netdev or (either layout of) `rdma link`.
async function railLinks(ctx: RunContext, node: NodeState, tool: LinkTool): Promise<Ibdev2netdevLink[]> {
  if (tool === 'ibdev2netdev') return parseIbdev2netdev(await ctx.runChecked(node, cmd.ibdev2netdev(), 'ibdev2netdev', 20_000)).links;
  const listed = parseRdmaLink(await ctx.runChecked(node, cmd.rdmaLink(), 'rdma-link', 20_000));
  const links = railLinksOfRdma(listed);
  if (links.length === 0 && listed.links.length > 0) {
    fail(
      'preflight-rails',
      node,
      `rdma link names no netdev for its ${listed.links.length} port(s): this rdma tool is too old to place the rails`,
      'install ibdev2netdev (the MLNX/DOCA tools) or an iproute2 of 4.18 or later (docs/operator-guide.md section 1)',
    );
  }
  return links;
}

// Find the cage the cable is in from what the node says (ibdev2netdev or `rdma link` for devices and link state, sysfs
// for which physical port and PCI function each one is): the requested cage, or with `auto` the one whose two rails are Up.
async function discoverCage(ctx: RunContext, node: NodeState, tool: LinkTool): Promise<void> {
  const lister = tool === 'rdma' ? 'rdma link' : 'ibdev2netdev';
  let cages;
  try {
    const links = await railLinks(ctx, node, tool);
    const ids = await ctx.runLogged(node, cmd.netIdentity(), 'net-identity', 20_000);
    cages = cagesFromLinks(links, parseNetIdentity(ids.stdout));
  } catch (e) {
    if (e instanceof ParseError)
      fail(
        'preflight-rails',
        node,
        `cannot tell the cages apart: ${e.message}`,
        `check that the mlx5 driver is loaded, ${lister} works and /sys/class/net/<if>/device points at the ConnectX-7`,
      );
    throw e;
  }
  const picked = pickCage(cages, node.spec.cage);
  if ('problem' in picked) fail('preflight-rails', node, picked.problem, `plug the cable in fully, check ${lister}, or pass --port`);
  const cage = picked.cage;
  if (!cage.up) {
    fail(
      'preflight-rails',
      node,
      `cage ${cage.index} rails not both Up: ${cage.rails.map((r) => `${r.netdev} ${r.state}`).join(', ')}`,
      'a Spark cable carries 200G only over both PCIe rails; check the cable seating and the other end',
    );
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
    fail(
      'preflight-rails',
      node,
      `cage ${node.cage!.index}: ${r0.netdev} reads cable serial ${a} but ${r1.netdev} reads ${b}: these two functions are not one cage`,
      'check which netdevs belong to the cabled port (ibdev2netdev, /sys/class/net/<if>/phys_port_name) and pass --port',
    );
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
    if (slow)
      fail(
        'preflight-speed',
        node,
        `${rail.netdev}: ${slow}`,
        'check the cable type and the peer port: the link trained below 200G (the ib_write_bw throughput is what judges its speed)',
      );
    if (link.lanes !== null && link.lanes !== 2 && link.lanes !== 4)
      fail('preflight-lanes', node, `${rail.netdev}: ${link.lanes} lanes, expected 2 or 4`, 'check the cable family (QSFP56: 4 lanes, QSFP112: 2 lanes)');
    if (i === 0) {
      node.record.lanes = link.lanes;
      node.record.speedMbps = link.speedMbps;
    }
    const fec = parseEthtoolFec(await ctx.runChecked(node, cmd.ethtoolFec(rail.netdev), `ethtool-fec:${rail.netdev}`, 20_000));
    if (!/^RS/i.test(fec.active))
      fail(
        'preflight-fec',
        node,
        `${rail.netdev}: active FEC ${fec.active}, expected RS`,
        'FEC None after a re-cable needs a reboot of both nodes with the cable attached',
      );
    if (i === 0) node.record.fecActive = fec.active;
    const ip = parseIpv4(await ctx.runChecked(node, ipAddrCommand(rail.netdev), `ip-addr:${rail.netdev}`, 20_000));
    if (!ip)
      fail(
        'preflight-address',
        node,
        `${rail.netdev} has no IPv4 address`,
        "give each rail its own /24 (e.g. 192.168.100.x and 192.168.101.x) as in NVIDIA's connect-two-sparks playbook",
      );
    node.railIps[i] = ip!.address;
    node.railSubnets[i] = subnetOf(ip!);
  }
}

async function checkSudo(ctx: RunContext, node: NodeState, user: string): Promise<void> {
  const r = await ctx.runLogged(node, cmd.eepromLower(node.cage!.rails[0].netdev), 'sudo-check', 20_000);
  if (r.exitCode !== 0 && /sudo:/.test(r.stderr)) {
    fail(
      'preflight-sudo',
      node,
      `sudo -n ethtool -m refused: ${r.stderr.trim().split('\n')[0]}`,
      `add this line with visudo on the node: ${sudoersLine(user)}`,
    );
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
  await fact(
    cmd.osRelease(),
    'os-release',
    (t) => osReleaseText(parseOsRelease(t)),
    (v) => {
      if (v) node.record.osRelease = v;
    },
  );
  await fact(cmd.perftestVersion(), 'perftest-version', parsePerftestVersion, (v) => (node.record.perftestVersion = v));
  await fact(cmd.gpuVersions(), 'gpu-versions', parseGpuVersions, (v) => {
    node.record.gpuDriverVersion = v.driver;
    if (v.cuda) node.record.cudaVersion = v.cuda;
  });
}

// Preflight on every node: each failure is an ERROR that says what to do, never a cable verdict.
export async function preflight(ctx: RunContext): Promise<void> {
  const users = await Promise.all(
    ctx.nodes.map(async (n) => {
      const r = await n.runner.run(cmd.whoami(), { timeoutMs: 20_000 });
      if (r.exitCode !== 0) fail('preflight-ssh', n, `cannot run commands: ${r.stderr.trim()}`, 'check SSH access to the node');
      return r.stdout.trim();
    }),
  );
  if (new Set(users).size > 1) {
    throw new SetupError(
      setupReason('preflight-user', `user names differ between nodes (${users.join(', ')})`, {
        advice: "NVIDIA's procedure needs the same user on all nodes (MPI and NCCL assume it)",
      }),
    );
  }
  await Promise.all(
    ctx.nodes.map(async (n, i) => {
      const { linkTool, found } = await checkTools(ctx, n);
      await checkNcclEnvironment(ctx, n, found);
      await checkGpuLoad(ctx, n);
      await discoverCage(ctx, n, linkTool);
      await checkRails(ctx, n);
      await checkSudo(ctx, n, users[i] ?? 'user');
      await confirmOneCable(ctx, n);
      await readVersions(ctx, n);
    }),
  );
  checkSubnets(ctx);
  warnDifferentCages(ctx);
  await checkPeerSsh(ctx);
}

// A cable whose two ends sit in different cages (a:0,b:1, or found so with auto) is allowed: said and recorded.
function warnDifferentCages(ctx: RunContext): void {
  const ends = ctx.nodes.flatMap((n) => (n.cage ? [{ node: n.spec.name, cage: n.cage.index }] : []));
  if (differentCages(ends)) ctx.warn(differentCagesWarning(ends));
}

// The two ends of each rail must share a subnet: traffic and mpirun's out-of-band channel go rail to rail.
function checkSubnets(ctx: RunContext): void {
  const [a, b] = ctx.nodes as [NodeState, NodeState];
  for (const rail of [0, 1] as const) {
    if (a.railSubnets[rail] !== b.railSubnets[rail]) {
      throw new SetupError(
        setupReason(
          'preflight-address',
          `rail ${rail}: ${a.spec.name} ${a.railIps[rail]} (${a.railSubnets[rail]}) and ${b.spec.name} ${b.railIps[rail]} (${b.railSubnets[rail]}) are not in one subnet`,
          {
            rail,
            advice:
              "give both ends of each rail addresses in one /24 (rail 0 e.g. 192.168.100.x, rail 1 192.168.101.x), as NVIDIA's connect-two-sparks playbook does",
          },
        ),
      );
    }
  }
}
