// The read-only commands of a simulated node (ethtool, ibdev2netdev, ip, nvidia-smi, sysfs/procfs reads, date...),
// answered from the model at the current lab time in the real tools' output layout.
import type { LabCore, SimRail } from './lab-core.js';
import { encodeCmis, encodeSff8636 } from '../eeprom/encode.js';
import { formatEthtoolFec, formatEthtoolLink, formatEthtoolStats, garbleStats, type FrameCounts, type HostTraffic } from './format-ethtool.js';
import { answerModuleEeprom, isLegacyRead } from './format-ethtool-module.js';
import { expandGlobs } from './shell-words.js';
import { DMI_DIR } from '../transport/commands.js';
import { SIMULATED_SYS_VENDOR, simulatedBiosVersion } from '../probes/dmi.js';
import { ScaledClock } from './scaled-clock.js';
import { homeOf, programPath } from './node-files.js';
import { streamId, uniform } from './prng.js';
import type { ScenarioSpec } from './scenario.js';
import { SIM_LINK_DOWN_REASONS } from './model.js';

export interface Answer {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export const ok = (stdout: string): Answer => ({ stdout, stderr: '', exitCode: 0 });
export const err = (stderr: string, exitCode = 1): Answer => ({ stdout: '', stderr, exitCode });

function noDevice(_iface: string): Answer {
  return err(`netlink error: no device matches name (offset 24)\nnetlink error: No such device\n`, 1);
}

// What the simulated EEPROM advertises per class (generated to the SFF-8636/CMIS layouts real cables use). SFF-8636:
// Spark DACs set the 40G-CR4 compliance bit plus an extended code (docs/formats.md §4a): 0x40 (200GBASE-CR4) at 26.5625 GBd
// for QSFP56; a QSFP112-class DAC says 0x3F at 53.125 GBd, so byte 140 = 0xFF and byte 222 = 0xD5 as on the recorded
// Spark cable (samples/ethtool-module/spark-dac-amphenol-njaakk-n911-...). CMIS: the application descriptors.
const SFF8636_CLASS = {
  QSFP28: { extendedCompliance: 0x0b, nominalRateGBd: 25.78125, encoding: 0x05 },
  QSFP56: { extendedCompliance: 0x40, nominalRateGBd: 26.5625, encoding: 0x08 },
  QSFP112: { extendedCompliance: 0x3f, nominalRateGBd: 53.125, encoding: 0x08 },
} as const;
const CMIS_APPLICATIONS = {
  QSFP28: [{ hostInterface: 0x1a, mediaInterface: 0x01, hostLanes: 4, mediaLanes: 4 }],
  QSFP56: [{ hostInterface: 0x1c, mediaInterface: 0x01, hostLanes: 4, mediaLanes: 4 }],
  QSFP112: [
    { hostInterface: 0x48, mediaInterface: 0x01, hostLanes: 4, mediaLanes: 4 },
    { hostInterface: 0x47, mediaInterface: 0x01, hostLanes: 2, mediaLanes: 2 },
  ],
} as const;

// The module's memory map: the scenario's, else SFF-8636 for QSFP56 and CMIS for QSFP112.
function memoryMapOf(spec: ScenarioSpec): 'sff8636' | 'cmis' {
  return spec.cable.eeprom.memoryMap ?? (spec.cable.family === 'QSFP56' ? 'sff8636' : 'cmis');
}

// Bytes of a cable's EEPROM (its scenario's) as seen from one node (serials may differ per end in eeprom-mismatch).
function eepromBytes(spec: ScenarioSpec, node: string): Uint8Array {
  const c = spec.cable;
  const e = c.eeprom;
  const base = { ...e, vendorSn: c.serialByNode?.[node] ?? e.vendorSn };
  // What the EEPROM advertises: the trained family unless the scenario says otherwise (a 400G-class cable trains 4 x 50G).
  const cls = c.eepromClass ?? c.family;
  const [a, b, x, y] = e.attenuationDb;
  if (memoryMapOf(spec) === 'sff8636') {
    const att: Record<string, number> = { '2.5GHz': a, '5.0GHz': b, '7.0GHz': x, '12.9GHz': y };
    if (e.attenuation25gDb !== undefined) att['25.8GHz'] = e.attenuation25gDb;
    return encodeSff8636({ ...base, attenuationDb: att, compliance: 0x08, ...SFF8636_CLASS[cls] });
  }
  return encodeCmis({
    ...base,
    attenuationDb: { '5.0GHz': a, '7.0GHz': b, '12.9GHz': x, '25.8GHz': y },
    applications: CMIS_APPLICATIONS[cls].map((app) => ({ ...app })),
  });
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
  const add = (x: FrameCounts, y: FrameCounts) => ({
    unicast: x.unicast + y.unicast,
    multicast: x.multicast + y.multicast,
    broadcast: x.broadcast + y.broadcast,
  });
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
  const loc = core.locate(node, iface);
  if (!loc || loc.netdev !== iface) return noDevice(iface);
  // The cable of this netdev's cage (none in a cage the lab leaves empty).
  const cable = core.cableAt(node, loc.cage);
  const cabled = cable !== null;
  if (flag === '-i' || flag === '--driver') return ok(formatEthtoolDriver(loc.pci, core.nodeSpec(node).nicFirmware ?? SIM_NIC_FIRMWARE));
  const up = cabled && core.model.isLinkUp(t, cable);
  const c = core.model.counters(node, t, loc.cage);
  const port = c.port;
  if (flag === undefined) {
    if (params.length) return err(`ethtool: bad command line argument(s)\nFor more information run ethtool -h\n`);
    const speedMbps = core.nodeSpec(node).speedMbps ?? 200000;
    const downReason = cabled ? core.model.linkDownReason(t, cable) : SIM_LINK_DOWN_REASONS.noCable;
    const link = formatEthtoolLink(iface, { cabled, up, lanes: cable?.laneCount ?? 4, linkDownEvents: port.linkDown, root: sudo, speedMbps, downReason });
    return { stdout: link.stdout, stderr: link.stderr, exitCode: 0 };
  }
  if (flag === '-S' || flag === '--statistics') {
    const host = hostTraffic(core, node, loc.rail, cabled);
    const portHost = addFrames(hostTraffic(core, node, 0, cabled), hostTraffic(core, node, 1, cabled));
    const rail = cabled ? c.rails[loc.rail === 0 ? 0 : 1] : { rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0 };
    const recoveryCounter = core.nodeSpec(node).recoveryCounter === true;
    let text = formatEthtoolStats({ cabled, port, rail, host, portHost, uncorrectableAsCrc: true, recoveryCounter }, keep);
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
    if (!sudo)
      return err(isLegacyRead(params) ? 'Cannot get module EEPROM information: Operation not permitted\n' : 'netlink error: Operation not permitted\n');
    if (!cable?.plugged)
      return err('netlink warning: mlx5_core: Query module eeprom by page failed, read 0 bytes, err -5\nnetlink error: Input/output error\n');
    return answerModuleEeprom(eepromBytes(cable.spec, node), iface, params);
  }
  return err(`ethtool: bad command line argument(s)\nFor more information run ethtool -h\n`);
}

// ibdev2netdev in C collation (roceP2... before rocep1...), carrier from the model; nothing while the PCI functions are removed.
export function ibdev2netdev(core: LabCore, node: string): Answer {
  const rows = core.functions(node).map((r) => ({ ...r, up: core.linkUpAt(node, r.cage) }));
  if (rows.length === 0) return ok('');
  rows.sort((x, y) => (x.rdmaDevice < y.rdmaDevice ? -1 : x.rdmaDevice > y.rdmaDevice ? 1 : 0));
  return ok(rows.map((r) => `${r.rdmaDevice} port 1 ==> ${r.netdev} (${r.up ? 'Up' : 'Down'})`).join('\n') + '\n');
}

// `rdma link show` (iproute2), in device-index order.
export function rdmaLink(core: LabCore, node: string): Answer {
  const order = [...core.functions(node)].sort((x, y) => x.rail - y.rail || x.cage - y.cage);
  if (order.length === 0) return ok('');
  return ok(
    order
      .map((l) => {
        const a = core.linkUpAt(node, l.cage);
        return `link ${l.rdmaDevice}/1 state ${a ? 'ACTIVE' : 'DOWN'} physical_state ${a ? 'LINK_UP' : 'DISABLED'} netdev ${l.netdev} `;
      })
      .join('\n') + '\n',
  );
}

// `ip -o -4 addr show dev <if>`: the rail's address on a cabled cage, nothing elsewhere.
export function ipAddr(core: LabCore, node: string, argv: string[]): Answer {
  const di = argv.indexOf('dev');
  const iface = di >= 0 ? argv[di + 1] : undefined;
  if (!argv.includes('addr') && !argv.includes('a') && !argv.includes('address')) return err(`Object "${argv[1] ?? ''}" is unknown, try "ip help".\n`);
  if (!iface) return err('Command line is not complete. Try option "help"\n', 255);
  const loc = core.locate(node, iface);
  if (!loc || loc.netdev !== iface) return err(`Device "${iface}" does not exist.\n`);
  const ips = core.railIpsAt(node, loc.cage);
  if (!ips) return ok('');
  const ip = ips[loc.rail]!;
  const brd = ip.replace(/\.\d+$/, '.255');
  return ok(`${loc.ifindex}: ${iface}    inet ${ip}/24 brd ${brd} scope global ${iface}\\       valid_lft forever preferred_lft forever\n`);
}

// The GPU driver a simulated node reports (generated; the driver of samples/nvidia-smi/dgx-spark-7d19-*).
const SIM_GPU_DRIVER = '580.95.05';

// nvidia-smi's default table (no arguments) in the layout of samples/nvidia-smi/*-default-table-*: generated figures.
function nvidiaSmiTable(core: LabCore, node: string): Answer {
  const g = core.model.gpu(node, core.now());
  const d = new Date(core.clock.now());
  const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][d.getUTCDay()]!;
  const mon = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getUTCMonth()]!;
  const when = `${day} ${mon} ${String(d.getUTCDate()).padStart(2)} ${d.toISOString().slice(11, 19)} ${d.getUTCFullYear()}`;
  const rule = `+${'-'.repeat(89)}+`;
  const cells = `+${'-'.repeat(41)}+${'-'.repeat(24)}+${'-'.repeat(22)}+`;
  const perf = g.util > 10 ? 'P0' : 'P8';
  return ok(
    [
      `${when}       `,
      rule,
      `| NVIDIA-SMI ${SIM_GPU_DRIVER}              Driver Version: ${SIM_GPU_DRIVER}      CUDA Version: 13.0     |`,
      cells,
      '| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |',
      '| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |',
      '|                                         |                        |               MIG M. |',
      `|${'='.repeat(41)}+${'='.repeat(24)}+${'='.repeat(22)}|`,
      '|   0  NVIDIA GB10                    On  |   0000000F:01:00.0 Off |                  N/A |',
      `| N/A   ${`${g.temp}C`.padEnd(3)}    ${perf}${`${Math.round(g.power)}W`.padStart(16)} /  N/A  | Not Supported          |${`${g.util}%`.padStart(8)}      Default |`,
      '|                                         |                        |                  N/A |',
      cells,
      '',
    ].join('\n'),
  );
}

// nvidia-smi for the one GB10 GPU: the default table, or --query-gpu=<fields> --format=csv[,noheader][,nounits].
export function nvidiaSmi(core: LabCore, node: string, argv: string[]): Answer {
  if (argv.length === 1) return nvidiaSmiTable(core, node);
  const q = argv.find((w) => w.startsWith('--query-gpu='));
  const f = argv.find((w) => w.startsWith('--format='));
  if (!q || !f) return err('nvidia-smi: only the default table and --query-gpu=... --format=csv are simulated\n', 2);
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
    driver_version: ['driver_version', SIM_GPU_DRIVER, ''],
    pstate: ['pstate', g.util > 10 ? 'P0' : 'P8', ''],
  };
  for (const k of fields) if (!cols[k]) return err(`Field "${k}" is not a valid field to query.\n\n`, 2);
  const head = fields.map((k) => cols[k]![0]).join(', ');
  const row = fields.map((k) => cols[k]![1] + (units && cols[k]![1] !== '[N/A]' ? cols[k]![2] : '')).join(', ');
  return ok(`${fmt.includes('noheader') ? '' : `${head}\n`}${row}\n`);
}

// The node's virtual files: hwmon (4 mlx5 functions + 2 others), boot id, uptime, carrier, RDMA port rate. Each body
// is made when read (the sampler reads the hwmon files every few ticks; most of the others once a run).
function virtualFiles(core: LabCore, node: string): Map<string, () => string> {
  const t = core.now();
  const files = new Map<string, () => string>();
  const set = (path: string, body: string) => files.set(path, () => body);
  const nic = () => `${Math.round(core.model.nicTemp(node, t) * 8) * 125}\n`; // MTMP units of 0.125 C, printed in millidegrees
  const hw = (i: number, name: string, label: string | null, milli: () => string) => {
    set(`/sys/class/hwmon/hwmon${i}/name`, `${name}\n`);
    if (label !== null) set(`/sys/class/hwmon/hwmon${i}/temp1_label`, `${label}\n`);
    files.set(`/sys/class/hwmon/hwmon${i}/temp1_input`, milli);
  };
  hw(0, 'acpitz', null, () => '44800\n');
  hw(1, 'nvme', 'Composite', () => '41850\n');
  // One mlx5 hwmon device per PCI function: gone with the functions while no cable is in.
  const fns = core.functions(node);
  for (let i = 0; i < fns.length; i++) hw(i + 2, 'mlx5', 'asic', nic);
  // DMI strings say what the node is: the simulated lab says so here, as a real node says its vendor and product.
  const n = core.nodeSpec(node);
  set(`${DMI_DIR}/sys_vendor`, `${SIMULATED_SYS_VENDOR}\n`);
  set(`${DMI_DIR}/product_name`, 'DGX Spark (simulated: generated outputs, not a machine)\n');
  set(`${DMI_DIR}/product_version`, `scenario ${core.spec.name}\n`);
  set(`${DMI_DIR}/board_name`, `${n.hostname ?? node}\n`);
  set(`${DMI_DIR}/bios_vendor`, `${SIMULATED_SYS_VENDOR}\n`);
  files.set(`${DMI_DIR}/bios_version`, () => `${simulatedBiosVersion(core.clock instanceof ScaledClock ? core.clock.speed : null)}\n`);
  files.set('/proc/sys/kernel/random/boot_id', () => `${core.model.boot(node, t).bootId}\n`);
  files.set('/proc/uptime', () => {
    const up = core.model.boot(node, t).uptimeS;
    return `${up.toFixed(2)} ${(up * 19.3).toFixed(2)}\n`;
  });
  const active = (r: SimRail) => core.linkUpAt(node, r.cage);
  for (const r of fns) {
    files.set(`/sys/class/net/${r.netdev}/carrier`, () => `${active(r) ? 1 : 0}\n`);
    files.set(`/sys/class/net/${r.netdev}/speed`, () => `${active(r) ? (n.speedMbps ?? 200000) : -1}\n`);
    // The physical port (the cage) as mlx5 names it, and the PCI function behind the netdev.
    set(`/sys/class/net/${r.netdev}/phys_port_name`, `p${r.cage}\n`);
    set(`/sys/class/net/${r.netdev}/dev_port`, '0\n');
    set(
      `/sys/class/net/${r.netdev}/device/uevent`,
      `DRIVER=mlx5_core\nPCI_CLASS=20000\nPCI_ID=15B3:1021\nPCI_SUBSYS_ID=15B3:0021\nPCI_SLOT_NAME=${r.pci}\nMODALIAS=pci:v000015B3d00001021sv000015B3sd00000021bc02sc00i00\n`,
    );
    files.set(`/sys/class/infiniband/${r.rdmaDevice}/sys_image_guid`, () => `${sysImageGuid(core, node)}\n`);
    files.set(`/sys/class/infiniband/${r.rdmaDevice}/ports/1/rate`, () => (active(r) ? '200 Gb/sec (4X HDR)\n' : '40 Gb/sec (4X QDR)\n'));
    files.set(`/sys/class/infiniband/${r.rdmaDevice}/ports/1/state`, () => (active(r) ? '4: ACTIVE\n' : '1: DOWN\n'));
  }
  // The management port (not RDMA): a netdev whose device is not the CX-7.
  set(
    '/sys/class/net/enP7s7/device/uevent',
    'DRIVER=r8127\nPCI_CLASS=20000\nPCI_ID=10EC:8127\nPCI_SUBSYS_ID=10EC:0123\nPCI_SLOT_NAME=0007:01:00.0\nMODALIAS=pci:v000010ECd00008127sv000010ECsd00000123bc02sc00i00\n',
  );
  set('/sys/class/net/enP7s7/carrier', '1\n');
  set('/etc/dgx-release', SIM_DGX_RELEASE);
  set('/etc/os-release', SIM_OS_RELEASE);
  if (n.ncclConf !== undefined) set('/etc/nccl.conf', n.ncclConf);
  return files;
}

// The NIC's system image GUID: one per NIC, the same on its four functions (generated per node).
function sysImageGuid(core: LabCore, node: string): string {
  const h = Math.floor(uniform(core.seed, streamId(node), 71) * 2 ** 32)
    .toString(16)
    .padStart(8, '0');
  return `b8ce:f603:${h.slice(0, 4)}:${h.slice(4)}`;
}

// Generated answers (not recordings) for the node's release files and its NIC firmware.
const SIM_NIC_FIRMWARE = '28.45.4028 (MT_0000001221)';
const SIM_DGX_RELEASE =
  'DGX_NAME="DGX Spark"\nDGX_PRETTY_NAME="NVIDIA DGX Spark (simulated)"\nDGX_SWBUILD_DATE="2026-05-12-10-00-00"\nDGX_SWBUILD_VERSION="7.2.3"\nDGX_COMMIT_ID="0000000"\nDGX_PLATFORM="DGX Spark (simulated lab)"\n\nDGX_OTA_VERSION="7.5.0"\nDGX_OTA_DATE="Tue 01 Sep 2026 09:00:00 AM UTC"\n';
const SIM_OS_RELEASE =
  'PRETTY_NAME="Ubuntu 24.04.3 LTS"\nNAME="Ubuntu"\nVERSION_ID="24.04"\nVERSION="24.04.3 LTS (Noble Numbat)"\nVERSION_CODENAME=noble\nID=ubuntu\nID_LIKE=debian\nHOME_URL="https://www.ubuntu.com/"\nUBUNTU_CODENAME=noble\n';

// `ethtool -i <if>` of an mlx5 function (layout of ethtool's driver info; in-tree mlx5 reports the kernel release).
function formatEthtoolDriver(pci: string, firmware: string): string {
  return `driver: mlx5_core\nversion: ${SIM_KERNEL}\nfirmware-version: ${firmware}\nexpansion-rom-version: \nbus-info: ${pci}\nsupports-statistics: yes\nsupports-test: yes\nsupports-eeprom-access: yes\nsupports-register-dump: no\nsupports-priv-flags: yes\n`;
}

const SIM_KERNEL = '6.17.0-1032-nvidia';

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
  // The shell's tilde: the user's home directory.
  const paths = expandGlobs(
    args.map((a) => (a.startsWith('~/') ? `${homeOf(core, node)}${a.slice(1)}` : a)),
    [...files.keys()],
  );
  let stdout = '';
  let stderr = '';
  let matched = false;
  for (const p of paths) {
    const body = files.get(p)?.();
    if (body === undefined) {
      stderr += `${prog}: ${p}: No such file or directory\n`;
      continue;
    }
    if (grep) {
      for (const line of body.split('\n')) {
        if (line === '') continue;
        stdout += `${p}:${line}\n`;
        matched = true;
      }
    } else stdout += body;
  }
  const exitCode = grep ? (stderr ? 2 : matched ? 0 : 1) : stderr ? 1 : 0;
  return { stdout, stderr, exitCode };
}

// `systemctl reboot --no-block` as root reboots the node (it answers at once; the node goes down seconds later).
// A plain `systemctl reboot` or `reboot` returns and nothing happens, as reported on Sparks (docs/formats.md §0: "sudo
// systemctl reboot sometimes did nothing there; systemctl reboot --no-block worked"); without root logind refuses.
export function systemctl(core: LabCore, node: string, argv: string[], sudo: boolean): Answer {
  const reboot = argv[0] === 'reboot' || argv[1] === 'reboot';
  if (!reboot) return err(`systemctl: only "systemctl reboot --no-block" is simulated\n`, 1);
  if (!sudo)
    return err(
      "Failed to reboot system via logind: Interactive authentication required.\nFailed to start reboot.target: Interactive authentication required.\nSee system logs and 'systemctl status reboot.target' for details.\n",
      1,
    );
  if (argv[0] === 'systemctl' && argv.includes('--no-block')) core.model.requestReboot(node, core.now());
  return ok('');
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
      return ok(
        argv[1] === '-r'
          ? `${SIM_KERNEL}\n`
          : argv[1] === '-a'
            ? `Linux ${n.hostname ?? node} ${SIM_KERNEL} #32-Ubuntu SMP PREEMPT_DYNAMIC aarch64 GNU/Linux\n`
            : 'Linux\n',
      );
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
