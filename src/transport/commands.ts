// Every command cablequal runs on a node is built here from a template and validated arguments,
// so that nothing from a protocol file or a node's answer can smuggle shell syntax into a command.
import { UsageError } from '../domain/errors.js';

const IFACE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,14}$/; // Linux IFNAMSIZ 16 incl. NUL
const RDMA_DEV = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$|^\d{1,3}(?:\.\d{1,3}){3}$|^[0-9A-Fa-f:]{2,39}$/;
const NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;
const PATH = /^\/[A-Za-z0-9_./-]{0,255}$/;
// A program on the PATH or at an absolute path, and a file a load needs: names only, never shell syntax.
const PROGRAM = /^(?:\/[A-Za-z0-9_.+@-]+(?:\/[A-Za-z0-9_.+@-]+)*|[A-Za-z0-9_.+@-]+)$/;
const FILE = /^\/[A-Za-z0-9_.+@,=-]*(?:\/[A-Za-z0-9_.+@,=-]+)*\/?$/;

function check(kind: string, value: string, re: RegExp): string {
  if (typeof value !== 'string' || !re.test(value) || value.includes('..')) {
    throw new UsageError(`refusing ${kind} ${JSON.stringify(value)}: it must match ${re.source}`);
  }
  return value;
}

// Validators, exported for the edges (CLI, protocol loader) to refuse bad names before anything runs.
export const validate = {
  iface: (v: string) => check('interface name', v, IFACE),
  rdmaDevice: (v: string) => check('RDMA device name', v, RDMA_DEV),
  host: (v: string) => check('host name', v, HOST),
  name: (v: string) => check('process name', v, NAME),
  path: (v: string) => check('path', v, PATH),
  program: (v: string) => check('program', v, PROGRAM),
  file: (v: string) => check('file path', v, FILE),
  // One argument of a started program: any printable text (it is quoted on its own), never a line break.
  argument: (v: string) => {
    if (typeof v !== 'string' || /[\u0000-\u001f\u007f]/.test(v))
      throw new UsageError(`refusing argument ${JSON.stringify(v)}: control characters (a command is one line)`);
    return v;
  },
  port: (v: number) => {
    if (!Number.isInteger(v) || v < 1 || v > 65535) throw new UsageError(`refusing port ${v}: expected 1..65535`);
    return String(v);
  },
};

// POSIX single-quote quoting for the arguments that are not names (protocol-supplied command lines are not quoted: they are the template).
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9_./:=,@%+-]+$/.test(s)) return s;
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

// Lines of `ethtool -S` the sampler keeps: the header and the physical-port counters.
export const PHY_LINES = '^NIC statistics:|_phy: ';

// The line that asks the node's *_phy filter to flush and answer (a line `ethtool -S` never prints).
const PHY_SYNC = 'cq-phy-sync';
// A filter that keeps PHY_LINES, started once per sampling shell so that a tick forks one process per rail
// (`ethtool`) instead of two (`ethtool | grep`): fork+exec is most of a tick's cost on the node. perl (perl-base
// is Essential on Debian and Ubuntu) reads whatever the pipe holds (mawk would wait for a full buffer); it matches
// PHY_LINES with index(), ten times faster than perl's regex for that alternation (0.2 vs 2.2 ms a dump). It prints
// to the shell's stdout and answers each sync line on a second fifo only after flushing, so its lines land inside
// the item's frame; it exits at EOF when the shell goes. The fifo it answers on is opened by its own forked shell
// before perl starts, so a perl that is missing or dies at start is an EOF, never a hang: __cq_phy then stays the
// grep pipeline. If the filter dies later, the shell's next write to it kills the shell (SIGPIPE) and the next
// tick's shell sets up a new one.
const PHY_FILTER =
  `perl -e 'open(my $s, ">&=9") or exit 1; $s->autoflush(1); print $s "ready\\n"; ` +
  `while (<STDIN>) { if ($_ eq "${PHY_SYNC}\\n") { STDOUT->flush(); print $s "done\\n"; next } print if index($_, "_phy: ") >= 0 || index($_, "NIC statistics:") == 0; }'`;
const PHY_SETUP =
  `__cq_phy() { ethtool -S "$1" | grep -E '${PHY_LINES}'; }; ` +
  `command -v perl >/dev/null 2>&1 && __cqd=$(mktemp -d 2>/dev/null) && mkfifo "$__cqd/i" "$__cqd/s" && exec 5<>"$__cqd/i" && ` +
  `{ ${PHY_FILTER} <"$__cqd/i" 9>"$__cqd/s" 5>&- 2>/dev/null & } && exec 8<"$__cqd/s" && read -r __cqx <&8 && ` +
  `exec 7>"$__cqd/i" && ` +
  `__cq_phy() { ethtool -S "$1" >&7; __cqr=$?; printf '\\n%s\\n' ${PHY_SYNC} >&7; read -r __cqx <&8 || return 125; return $__cqr; }; ` +
  `exec 5>&-; [ -z "$__cqd" ] || rm -rf "$__cqd"; __cqd=`;

// The DMI/SMBIOS attributes read from /sys/class/dmi/id (world-readable; serial numbers, which need root, are not).
export const DMI_DIR = '/sys/class/dmi/id';
export const DMI_FIELDS = ['sys_vendor', 'product_name', 'product_version', 'board_name', 'bios_vendor', 'bios_version', 'bios_date'] as const;

// Read-only probes. `sudo -n` only where the kernel requires root (module EEPROM).
export const cmd = {
  ethtoolStats: (iface: string) => `ethtool -S ${validate.iface(iface)}`,
  // The sampler's per-tick read: only the header and the *_phy counters travel (about 45 of ~1,700 lines on mlx5),
  // through the shell's persistent filter (set up by the first call in a shell); the full dump is journaled at
  // phase boundaries. Its output is exactly ethtoolStatsPhyGrep's.
  ethtoolStatsPhy: (iface: string) => `command -v __cq_phy >/dev/null 2>&1 || { ${PHY_SETUP}; }; __cq_phy ${validate.iface(iface)}`,
  // The same lines with one grep per call (two processes per rail per tick): what the filter falls back to.
  ethtoolStatsPhyGrep: (iface: string) => `ethtool -S ${validate.iface(iface)} | grep -E '${PHY_LINES}'`,
  ethtoolLink: (iface: string) => `ethtool ${validate.iface(iface)}`,
  ethtoolFec: (iface: string) => `ethtool -I --show-fec ${validate.iface(iface)}`,
  ethtoolModule: (iface: string) => `sudo -n ethtool -m ${validate.iface(iface)}`,
  // Lower page and upper page 00h through the netlink page API (works for SFF-8636 and CMIS on mlx5).
  eepromLower: (iface: string) => `sudo -n ethtool -m ${validate.iface(iface)} page 0 offset 0 length 128 hex on`,
  eepromUpper: (iface: string) => `sudo -n ethtool -m ${validate.iface(iface)} page 0 offset 128 length 128 hex on`,
  ethtoolVersion: () => 'ethtool --version',
  // Driver and NIC firmware of a function.
  ethtoolDriver: (iface: string) => `ethtool -i ${validate.iface(iface)}`,
  // DGX OS release and the Ubuntu release under it (a missing /etc/dgx-release is skipped).
  osRelease: () => 'grep -H . /etc/dgx-release /etc/os-release 2>/dev/null',
  perftestVersion: () => 'ib_write_bw --version',
  // nvidia-smi's default table: its header names the GPU driver and the CUDA version the driver supports.
  gpuVersions: () => 'nvidia-smi',
  // Open MPI's version; that it answers at all proves mpirun starts in a non-interactive session.
  mpirunVersion: () => 'mpirun --version',
  // The shared libraries a program (an absolute path) loads in this session's environment; `=> not found` marks a missing one.
  ldd: (program: string) => {
    if (!validate.program(program).startsWith('/')) throw new UsageError(`refusing ldd of ${JSON.stringify(program)}: an absolute path is needed`);
    return `ldd ${shellQuote(program)}`;
  },
  // NCCL's configuration files, system and user (docs/formats.md §13); a missing file is skipped, so the output is the answer.
  ncclConf: () => 'grep -H . /etc/nccl.conf ~/.nccl.conf 2>/dev/null',
  ibdev2netdev: () => 'ibdev2netdev',
  // Where each netdev sits (physical port, PCI function) and which NIC each RDMA device is, from sysfs; attributes a
  // netdev lacks (lo has no device) are skipped, so grep's exit status says nothing: the output is the answer.
  netIdentity: () => 'grep -H . /sys/class/net/*/phys_port_name /sys/class/net/*/device/uevent /sys/class/infiniband/*/sys_image_guid 2>/dev/null',
  rdmaLink: () => 'rdma link show',
  // Every interface's flags, MTU and addresses as JSON (iproute2 ip/ipaddress.c; samples/ip-addr/).
  ipAddrJson: () => 'ip -j addr show',
  // One rail's reachability over its own interface (iputils; samples/ping/): 2 echoes, 1 s to wait for each.
  pingVia: (iface: string, ip: string) => `ping -I ${validate.iface(iface)} -c 2 -W 1 ${check('IPv4 address', ip, /^\d{1,3}(\.\d{1,3}){3}$/)}`,
  // lldpd's neighbours in its fixed-shape JSON (samples/lldpctl/); absent where lldpd is not installed.
  lldpNeighbours: () => 'lldpctl -f json0',
  // The session's NCCL_IB_HCA, when set (exit 1 when not).
  ncclHcaEnv: () => 'printenv NCCL_IB_HCA',
  nvidiaSmi: () => 'nvidia-smi --query-gpu=index,name,utilization.gpu,temperature.gpu,power.draw --format=csv,noheader,nounits',
  // All hwmon names, labels and temperature inputs in one read: `<path>:<value>` lines.
  hwmon: () => 'grep -H . /sys/class/hwmon/hwmon*/name /sys/class/hwmon/hwmon*/temp*_label /sys/class/hwmon/hwmon*/temp*_input 2>/dev/null',
  // Epoch seconds with a fraction: bash's $EPOCHREALTIME costs no fork; other shells run date.
  nodeTime: () => 'echo "${EPOCHREALTIME:-$(date +%s.%N)}"',
  uname: () => 'uname -r',
  // DMI/SMBIOS strings (what machine, which BIOS); unreadable attributes are skipped (grep prints nothing for them).
  dmi: () => `grep -H . ${DMI_FIELDS.map((f) => `${DMI_DIR}/${f}`).join(' ')} 2>/dev/null`,
  hostname: () => 'hostname',
  // Changes with every boot: a new value proves a reboot happened.
  bootId: () => 'cat /proc/sys/kernel/random/boot_id',
  // The batch's one other privileged command: reboot after a cable swap (the hot-plug trap). `--no-block` returns at
  // once; on Sparks a plain `systemctl reboot` sometimes did nothing (docs/formats.md §0).
  reboot: () => 'sudo -n systemctl reboot --no-block',
  // Whether the sudoers lines allow that reboot, without rebooting (prints the command when allowed).
  rebootAllowed: () => 'sudo -n -l /usr/bin/systemctl reboot --no-block',
  whoami: () => 'whoami',
  which: (tool: string) => `command -v ${check('tool name', tool, /^[A-Za-z0-9_.+-]{1,64}$/)}`,
  // A program with its own argument vector (a protocol's GPU load, its check): every argument quoted on its own, so
  // nothing in a protocol file reaches the shell as syntax; started in `cwd` when given.
  program: (p: { program: string; args: readonly string[]; cwd?: string }) => {
    const argv = [validate.program(p.program), ...p.args.map((a) => shellQuote(validate.argument(a)))].join(' ');
    return p.cwd === undefined ? argv : `cd ${shellQuote(validate.file(p.cwd))} && ${argv}`;
  },
  // Whether a program is there: `command -v` for a name on the PATH, a test for an executable file at a path.
  programThere: (program: string) => (validate.program(program).startsWith('/') ? `test -x ${shellQuote(program)}` : `command -v ${program}`),
  readable: (file: string) => `test -r ${shellQuote(validate.file(file))}`,
  isDirectory: (dir: string) => `test -d ${shellQuote(validate.file(dir))}`,
  // From the first node to the second the way mpirun reaches it: a non-interactive SSH session that must neither
  // prompt for a password nor ask about a host key (BatchMode), answering within 10 s.
  sshBatch: (host: string) => `ssh -o BatchMode=yes -o ConnectTimeout=10 ${validate.host(host)} true`,
};

// The netdev of a command built by cmd.ethtoolStatsPhy (exactly), so the simulated lab can answer it; else null.
export function matchEthtoolStatsPhy(command: string): string | null {
  const m = / __cq_phy (\S+)$/.exec(command);
  if (!m) return null;
  try {
    return cmd.ethtoolStatsPhy(m[1]!) === command ? m[1]! : null;
  } catch {
    return null;
  }
}

// Addresses of a rail's netdev, to aim ib_write_bw and NCCL at the peer over that rail.
export const ipAddrCommand = (iface: string) => `ip -o -4 addr show dev ${validate.iface(iface)}`;
