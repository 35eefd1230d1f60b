// The kinds `cablequal parse <kind>` understands, each a pure parser over one command's text.
import { parseEthtoolStats } from './ethtool-stats.js';
import { parseEthtoolLink } from './ethtool-link.js';
import { parseEthtoolFec } from './ethtool-fec.js';
import { parseEthtoolModule } from './ethtool-module.js';
import { parseEepromHex } from './eeprom-hex.js';
import { parseIbWriteBw } from './ib-write-bw.js';
import { parseNccl } from './nccl.js';
import { parseIbdev2netdev } from './ibdev2netdev.js';
import { parseRdmaLink } from './rdma-link.js';
import { parseNvidiaSmi } from './nvidia-smi.js';
import { parseHwmon, parseMgetTemp } from './nic-temp.js';
import { parseDmi } from './dmi.js';
import { parseEthtoolDriver } from './ethtool-driver.js';
import { parseNetIdentity } from './net-identity.js';
import { parseOsRelease } from './os-release.js';
import { parsePerftestVersion } from './perftest-version.js';
import { parseGpuVersions } from './gpu-versions.js';
import { parseMpirunVersion } from './mpirun-version.js';
import { parseLdd } from './ldd.js';
import { parseNcclConf } from './nccl-conf.js';
import { readings } from './readings.js';

// The maps of parseNetIdentity as plain objects, for JSON output.
function netIdentityJson(text: string): unknown {
  const r = parseNetIdentity(text);
  return { netdevs: Object.fromEntries(r.netdevs), sysImageGuid: Object.fromEntries(r.sysImageGuid) };
}

type Parser = { parse: (text: string) => unknown; describe: string };

const TOOLS: Record<string, Parser> = {
  'ethtool-stats': { parse: parseEthtoolStats, describe: 'ethtool -S <iface>' },
  'ethtool-link': { parse: parseEthtoolLink, describe: 'ethtool <iface>' },
  'ethtool-fec': { parse: parseEthtoolFec, describe: 'ethtool [-I] --show-fec <iface>' },
  'ethtool-module': { parse: parseEthtoolModule, describe: 'ethtool -m <iface> (decoded text)' },
  'eeprom-hex': { parse: parseEepromHex, describe: 'ethtool -m <iface> [page 0 offset N length N] hex on' },
  ib_write_bw: { parse: parseIbWriteBw, describe: 'ib_write_bw client or server output' },
  nccl: { parse: parseNccl, describe: 'nccl-tests *_perf output, with NCCL_DEBUG=INFO lines' },
  ibdev2netdev: { parse: parseIbdev2netdev, describe: 'ibdev2netdev [-v]' },
  'rdma-link': { parse: parseRdmaLink, describe: 'rdma link show (the link-keyword or the older index-prefixed layout)' },
  'nvidia-smi': { parse: parseNvidiaSmi, describe: 'nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]' },
  hwmon: { parse: parseHwmon, describe: 'grep -H . /sys/class/hwmon/hwmon*/{name,temp*_label,temp*_input}' },
  'mget-temp': { parse: parseMgetTemp, describe: 'mget_temp -d <dev>' },
  dmi: { parse: parseDmi, describe: 'grep -H . /sys/class/dmi/id/{sys_vendor,product_name,bios_version,...}' },
  'ethtool-driver': { parse: parseEthtoolDriver, describe: 'ethtool -i <iface>' },
  'net-identity': {
    parse: netIdentityJson,
    describe: 'grep -H . /sys/class/net/*/phys_port_name /sys/class/net/*/device/uevent /sys/class/infiniband/*/sys_image_guid',
  },
  'os-release': { parse: parseOsRelease, describe: 'grep -H . /etc/dgx-release /etc/os-release' },
  'perftest-version': { parse: parsePerftestVersion, describe: 'ib_write_bw --version' },
  'nvidia-smi-versions': { parse: parseGpuVersions, describe: 'nvidia-smi (the default table: driver and CUDA versions of its header)' },
  'mpirun-version': { parse: parseMpirunVersion, describe: 'mpirun --version (Open MPI)' },
  ldd: { parse: parseLdd, describe: 'ldd <program>' },
  'nccl-conf': { parse: parseNcclConf, describe: 'grep -H . /etc/nccl.conf ~/.nccl.conf' },
};

// Every kind: each tool's parser, and each extra reading's under its id (`cablequal parse module-temp-c`).
export const PARSERS: Record<string, Parser> = { ...TOOLS };
for (const r of readings()) {
  if (Object.hasOwn(TOOLS, r.id)) throw new Error(`reading ${r.id}: \`cablequal parse ${r.id}\` is already a tool's parser`);
  PARSERS[r.id] = { parse: r.parse, describe: `${r.describe} (reading ${r.id})` };
}
