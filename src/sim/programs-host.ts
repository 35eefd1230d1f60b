// The read-only commands of a simulated node (ethtool, ibdev2netdev, ip, nvidia-smi, sysfs/procfs reads, date...),
// answered from the model at the current lab time in the real tools' output layout.
import type { LabCore } from './lab-core.js';
import { locate, SPARK_CAGES } from './lab-core.js';
import { encodeCmis, encodeSff8636 } from '../eeprom/encode.js';
import { formatEthtoolFec, formatEthtoolLink, formatEthtoolStats, garbleStats, type FrameCounts, type HostTraffic } from './format-ethtool.js';
import { answerModuleEeprom, isLegacyRead } from './format-ethtool-module.js';
import { expandGlobs } from './shell-words.js';
import { DMI_DIR } from '../transport/commands.js';
import { SIMULATED_SYS_VENDOR, simulatedBiosVersion } from '../probes/dmi.js';
import { ScaledClock } from './scaled-clock.js';
import { programPath } from './node-files.js';

export interface Answer {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export const ok = (stdout: string): Answer => ({ stdout, stderr: '', exitCode: 0 });
export const err = (stderr: string, exitCode = 1): Answer => ({ stdout: '', stderr, exitCode });

const IFINDEX: Record<string, number> = { enP2p1s0f0np0: 3, enP2p1s0f1np1: 4, enp1s0f0np0: 5, enp1s0f1np1: 6 };

function noDevice(iface: string): Answer {
  return err(`netlink error: no device matches name (offset 24)\nnetlink error: No such device\n`, 1);
}

// The module's memory map: the scenario's, else SFF-8636 for QSFP56 and CMIS for QSFP112.
function memoryMapOf(spec: LabCore['spec']): 'sff8636' | 'cmis' {
  return spec.cable.eeprom.memoryMap ?? (spec.cable.family === 'QSFP56' ? 'sff8636' : 'cmis');
}

// Bytes of the cable EEPROM as seen from one node (serials may differ per end in eeprom-mismatch).
export function eepromBytes(core: LabCore, node: string): Uint8Array {
  const c = core.spec.cable;
  const e = c.eeprom;
  const base = { ...e, vendorSn: c.serialByNode?.[node] ?? e.vendorSn };
  const [a, b, x, y] = e.attenuationDb;
  if (memoryMapOf(core.spec) === 'sff8636') {
    // Spark DACs advertise the 40G-CR4 compliance bit plus an extended code (FORMATS §4a): 0x40 (200GBASE-CR4) at
    // 26.5625 GBd for QSFP56; a QSFP112-class DAC says 0x3F at 53.125 GBd, so byte 140 = 0xFF and byte 222 = 0xD5
    // as on the recorded Spark cable (samples/ethtool-module/spark-dac-amphenol-njaakk-n911-...).
    const qsfp112 = c.family === 'QSFP112';
    const att: Record<string, number> = { '2.5GHz': a, '5.0GHz': b, '7.0GHz': x, '12.9GHz': y };
    if (e.attenuation25gDb !== undefined) att['25.8GHz'] = e.attenuation25gDb;
    return encodeSff8636({ ...base, attenuationDb: att, compliance: 0x08, extendedCompliance: qsfp112 ? 0x3f : 0x40, nominalRateGBd: qsfp112 ? 53.125 : 26.5625 });
  }
  return encodeCmis({ ...base, attenuationDb: { '5.0GHz': a, '7.0GHz': b, '12.9GHz': x, '25.8GHz': y } });
}

// Kernel-stack frames (ARP, IPv6 neighbour discovery, mDNS, the NCCL bootstrap's TCP...) one PCIe function of the
// cabled cage has sent and received since boot, at a steady generated rate (none on an empty cage).
function hostTraffic(core: LabCore, node: string, rail: number, cabled: boolean): HostTraffic {
  const up = cabled ? core.model.boot(node, core.now()).uptimeS : 0;
  const k = rail === 0 ? 1 : 0.3;
  const n = (perS: number) => Math.floor(perS * k * up);
  return { rx: { unicast: n(30), multicast: n(0.8), broadcast: n(0.2) }, tx: { unicast: n(24), multicast: n(0.6), broadcast: n(0.01) } };
}

const addFrames = (a: HostTraffic, b: HostTraffic): HostTraffic => {
  const add = (x: FrameCounts, y: FrameCounts) => ({ unicast: x.unicast + y.unicast, multicast: x.multicast + y.multicast, broadcast: x.broadcast + y.broadcast });
  return { rx: add(a.rx, b.rx), tx: add(a.tx, b.tx) };
};

// `ethtool ...` in its forms used by the harness: `<if>`, `-S`, `[-I] --show-fec`, `-m [params]`, `--version`.
export function ethtool(core: LabCore, node: string, argv: string[], sudo: boolean, keep?: RegExp): Answer {
  const args = argv.slice(1);
  if (args[0] === '--version') return ok('ethtool version 6.7\n');
  const t = core.now();
  const stats = args.includes('-I') || args.includes('--include-statistics');
  const words = args.filter((w) => w !== '-I' && w !== '--include-statistics');
  const flag = words[0]?.startsWith('-') ? words[0] : undefined;
  const iface = flag === undefined ? words[0] : words[1];
  const params = words.slice(flag === undefined ? 1 : 2);
  if (!iface || iface.startsWith('-')) return err('ethtool: bad command line argument(s)\nFor more information run ethtool -h\n');
  const loc = locate(iface);
  if (!loc || loc.netdev !== iface) return noDevice(iface);
  const cabled = loc.cage === core.cageOf(node);
  const up = cabled && core.model.isLinkUp(t);
  const c = core.model.counters(node, t);
  const port = cabled ? c.port : { ...c.port, rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0, lanes: [0, 0, 0, 0] as [number, number, number, number], correctedBits: 0, correctedBlocks: 0, uncorrectable: 0, pcsSymbolErrors: 0, crcFrames: 0, linkDown: 0 };
  if (flag === undefined) {
    if (params.length) return err(`ethtool: bad command line argument(s)\nFor more information run ethtool -h\n`);
    const link = formatEthtoolLink(iface, { cabled, up, lanes: core.model.laneCount, linkDownEvents: port.linkDown, root: sudo });
    return { stdout: link.stdout, stderr: link.stderr, exitCode: 0 };
  }
  if (flag === '-S' || flag === '--statistics') {
    const host = hostTraffic(core, node, loc.rail, cabled);
    const portHost = addFrames(hostTraffic(core, node, 0, cabled), hostTraffic(core, node, 1, cabled));
    const rail = cabled ? c.rails[loc.rail === 0 ? 0 : 1] : { rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0 };
    let text = formatEthtoolStats({ cabled, port, rail, host, portHost, uncorrectableAsCrc: true }, keep);
    const g = core.faults.find((f) => f.kind === 'garbage-output' && !core.garbageFired.has(f) && t >= f.atS && (f.node === null || f.node === node));
    if (g) {
      core.garbageFired.add(g);
      text = garbleStats(text);
    }
    return ok(text);
  }
  if (flag === '--show-fec') return ok(formatEthtoolFec(iface, { cabled, port, stats }));
  if (flag === '-m' || flag === '--module-info' || flag === '--dump-module-eeprom') {
    // Reading a module needs CAP_NET_ADMIN: the netlink request is refused, and so is the legacy ioctl.
    if (!sudo) return err(isLegacyRead(params) ? 'Cannot get module EEPROM information: Operation not permitted\n' : 'netlink error: Operation not permitted\n');
    if (!cabled || !core.model.plugged) return err('netlink warning: mlx5_core: Query module eeprom by page failed, read 0 bytes, err -5\nnetlink error: Input/output error\n');
    return answerModuleEeprom(eepromBytes(core, node), iface, params);
  }
  return err(`ethtool: bad command line argument(s)\nFor more information run ethtool -h\n`);
}

// ibdev2netdev in C collation (roceP2... before rocep1...), carrier from the model.
export function ibdev2netdev(core: LabCore, node: string): Answer {
  const up = core.model.isLinkUp(core.now());
  const cage = core.cageOf(node);
  const rows = SPARK_CAGES.flatMap((c) => c.rails.map((r) => ({ ...r, up: c.index === cage && up })));
  rows.sort((x, y) => (x.rdmaDevice < y.rdmaDevice ? -1 : x.rdmaDevice > y.rdmaDevice ? 1 : 0));
  return ok(rows.map((r) => `${r.rdmaDevice} port 1 ==> ${r.netdev} (${r.up ? 'Up' : 'Down'})`).join('\n') + '\n');
}

// `rdma link show` (iproute2), in device-index order.
export function rdmaLink(core: LabCore, node: string): Answer {
  const up = core.model.isLinkUp(core.now());
  const cage = core.cageOf(node);
  const order = ['rocep1s0f0', 'rocep1s0f1', 'roceP2p1s0f0', 'roceP2p1s0f1'];
  return ok(
    order
      .map((d) => {
        const l = locate(d)!;
        const a = l.cage === cage && up;
        return `link ${d}/1 state ${a ? 'ACTIVE' : 'DOWN'} physical_state ${a ? 'LINK_UP' : 'DISABLED'} netdev ${l.netdev} `;
      })
      .join('\n') + '\n',
  );
}

// `ip -o -4 addr show dev <if>`: the rail's address on the cabled cage, nothing elsewhere.
export function ipAddr(core: LabCore, node: string, argv: string[]): Answer {
  const di = argv.indexOf('dev');
  const iface = di >= 0 ? argv[di + 1] : undefined;
  if (!argv.includes('addr') && !argv.includes('a') && !argv.includes('address')) return err(`Object "${argv[1] ?? ''}" is unknown, try "ip help".\n`);
  if (!iface) return err('Command line is not complete. Try option "help"\n', 255);
  const loc = locate(iface);
  if (!loc || loc.netdev !== iface) return err(`Device "${iface}" does not exist.\n`);
  if (loc.cage !== core.cageOf(node)) return ok('');
  const ip = core.nodeSpec(node).railIps[loc.rail]!;
  const brd = ip.replace(/\.\d+$/, '.255');
  return ok(`${IFINDEX[iface]}: ${iface}    inet ${ip}/24 brd ${brd} scope global ${iface}\\       valid_lft forever preferred_lft forever\n`);
}

// nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits] for the one GB10 GPU.
export function nvidiaSmi(core: LabCore, node: string, argv: string[]): Answer {
  const q = argv.find((w) => w.startsWith('--query-gpu='));
  const f = argv.find((w) => w.startsWith('--format='));
  if (!q || !f) return err('nvidia-smi: only --query-gpu=... --format=csv is simulated\n', 2);
  const fmt = f.slice(9).split(',');
  const units = !fmt.includes('nounits');
  const g = core.model.gpu(node, core.now());
  const fields = q.slice(12).split(',');
  const cols: Record<string, [string, string, string]> = {
    index: ['index', '0', ''],
    name: ['name', 'NVIDIA GB10', ''],
    'utilization.gpu': ['utilization.gpu [%]', String(g.util), ' %'],
    'temperature.gpu': ['temperature.gpu', String(g.temp), ''],
    'power.draw': ['power.draw [W]', g.power.toFixed(2), ' W'],
    'memory.total': ['memory.total [MiB]', '[N/A]', ''],
    'memory.used': ['memory.used [MiB]', '[N/A]', ''],
    'memory.free': ['memory.free [MiB]', '[N/A]', ''],
    driver_version: ['driver_version', '580.95.05', ''],
    pstate: ['pstate', g.util > 10 ? 'P0' : 'P8', ''],
  };
  for (const k of fields) if (!cols[k]) return err(`Field "${k}" is not a valid field to query.\n\n`, 2);
  const head = fields.map((k) => cols[k]![0]).join(', ');
  const row = fields.map((k) => cols[k]![1] + (units && cols[k]![1] !== '[N/A]' ? cols[k]![2] : '')).join(', ');
  return ok(`${fmt.includes('noheader') ? '' : `${head}\n`}${row}\n`);
}

// The node's virtual files: hwmon (4 mlx5 functions + 2 others), boot id, uptime, carrier, RDMA port rate.
export function virtualFiles(core: LabCore, node: string): Map<string, string> {
  const t = core.now();
  const files = new Map<string, string>();
  const nic = Math.round(core.model.nicTemp(node, t) * 8) * 125; // MTMP units of 0.125 C, printed in millidegrees
  const hw = (i: number, name: string, label: string | null, milli: number) => {
    files.set(`/sys/class/hwmon/hwmon${i}/name`, `${name}\n`);
    if (label !== null) files.set(`/sys/class/hwmon/hwmon${i}/temp1_label`, `${label}\n`);
    files.set(`/sys/class/hwmon/hwmon${i}/temp1_input`, `${milli}\n`);
  };
  hw(0, 'acpitz', null, 44800);
  hw(1, 'nvme', 'Composite', 41850);
  for (let i = 2; i < 6; i++) hw(i, 'mlx5', 'asic', nic);
  // DMI strings say what the node is: the simulated lab says so here, as a real node says its vendor and product.
  const n = core.nodeSpec(node);
  files.set(`${DMI_DIR}/sys_vendor`, `${SIMULATED_SYS_VENDOR}\n`);
  files.set(`${DMI_DIR}/product_name`, 'DGX Spark (simulated: generated outputs, not a machine)\n');
  files.set(`${DMI_DIR}/product_version`, `scenario ${core.spec.name}\n`);
  files.set(`${DMI_DIR}/board_name`, `${n.hostname ?? node}\n`);
  files.set(`${DMI_DIR}/bios_vendor`, `${SIMULATED_SYS_VENDOR}\n`);
  files.set(`${DMI_DIR}/bios_version`, `${simulatedBiosVersion(core.clock instanceof ScaledClock ? core.clock.speed : null)}\n`);
  const b = core.model.boot(node, t);
  files.set('/proc/sys/kernel/random/boot_id', `${b.bootId}\n`);
  files.set('/proc/uptime', `${b.uptimeS.toFixed(2)} ${(b.uptimeS * 19.3).toFixed(2)}\n`);
  const up = core.model.isLinkUp(t);
  const cage = core.cageOf(node);
  for (const c of SPARK_CAGES) {
    for (const r of c.rails) {
      const a = c.index === cage && up;
      files.set(`/sys/class/net/${r.netdev}/carrier`, `${a ? 1 : 0}\n`);
      files.set(`/sys/class/net/${r.netdev}/speed`, `${a ? 200000 : -1}\n`);
      files.set(`/sys/class/infiniband/${r.rdmaDevice}/ports/1/rate`, a ? '200 Gb/sec (4X HDR)\n' : '40 Gb/sec (4X QDR)\n');
      files.set(`/sys/class/infiniband/${r.rdmaDevice}/ports/1/state`, a ? '4: ACTIVE\n' : '1: DOWN\n');
    }
  }
  return files;
}

// `grep -H . <files>` and `cat <files>` over the virtual files (globs expanded like the shell).
export function readFiles(core: LabCore, node: string, argv: string[]): Answer {
  const files = virtualFiles(core, node);
  const prog = argv[0]!;
  const grep = prog === 'grep';
  let args = argv.slice(1);
  if (grep) {
    args = args.filter((w) => !w.startsWith('-') || w === '-');
    if (args[0] !== '.') return err('grep: only `grep -H . <files>` is simulated\n', 2);
    args = args.slice(1);
  }
  const paths = expandGlobs(args, [...files.keys()]);
  let stdout = '';
  let stderr = '';
  let matched = false;
  for (const p of paths) {
    const body = files.get(p);
    if (body === undefined) {
      stderr += `${prog}: ${p}: No such file or directory\n`;
      continue;
    }
    if (grep) {
      for (const line of body.split('\n')) if (line !== '') (stdout += `${p}:${line}\n`), (matched = true);
    } else stdout += body;
  }
  const exitCode = grep ? (stderr ? 2 : matched ? 0 : 1) : stderr ? 1 : 0;
  return { stdout, stderr, exitCode };
}


// Small host facts: date, uname, hostname, whoami, command -v.
export function hostFact(core: LabCore, node: string, argv: string[]): Answer | null {
  const n = core.nodeSpec(node);
  switch (argv[0]) {
    case 'date':
      if (argv[1] === '+%s%N') return ok(`${BigInt(Math.round(core.clock.now())) * 1_000_000n}\n`);
      if (argv[1] === '+%s') return ok(`${Math.floor(core.clock.now() / 1000)}\n`);
      if (argv[1] === '+%s.%N') return ok(`${(core.clock.now() / 1000).toFixed(9)}\n`);
      return ok(`${new Date(core.clock.now()).toUTCString()}\n`);
    case 'uname':
      return ok(argv[1] === '-r' ? '6.17.0-1032-nvidia\n' : argv[1] === '-a' ? `Linux ${n.hostname ?? node} 6.17.0-1032-nvidia #32-Ubuntu SMP PREEMPT_DYNAMIC aarch64 GNU/Linux\n` : 'Linux\n');
    case 'hostname':
      return ok(`${n.hostname ?? node}\n`);
    case 'whoami':
      return ok(`${n.user ?? 'nvidia'}\n`);
    case 'true':
      return ok('');
    case 'echo':
      return ok(`${argv.slice(1).join(' ')}\n`);
    case 'command':
    case 'which': {
      const tool = argv[argv.length - 1]!;
      const p = programPath(core, node, tool);
      return p ? ok(`${tool.startsWith('/') ? tool : p}\n`) : { stdout: '', stderr: '', exitCode: 1 };
    }
    default:
      return null;
  }
}
