// `ethtool -m <if> [hex on|off] [raw on|off] [offset N] [length N] [page N] [bank N] [i2c N]` on an mlx5 netdev,
// answered from an encoded EEPROM image the way ethtool 6.x and the kernel do (generated, not recorded):
// - ethtool netlink/module-eeprom.c nl_getmodule(): `hex on`/`raw on` without page/bank/i2c falls back to the legacy
//   ioctl (whole EEPROM); otherwise one netlink page read (page 0, offset 0, length 128 by default; a page > 0
//   without offset reads from 128), printed by dump_hex() when offset, length or page is given, else decoded.
// - kernel net/ethtool/eeprom.c eeprom_parse_request(): a read may not cross offset 128 or 256.
// - mlx5e_get_module_info() (ioctl): QSFP/QSFP+/QSFP28 => 640 bytes (SFF-8636/8436 max length), any other identifier
//   (CMIS 0x18/0x19/0x1e) => -EINVAL, "cable type not recognized" (docs/formats.md §4c).
import { formatEthtoolModuleText, formatHexDump } from '../eeprom/encode.js';

export interface ModuleAnswer {
  stdout: string;
  stderr: string;
  exitCode: number;
}

const PAGE_LEN = 128;
// ETH_MODULE_SFF_8636_MAX_LEN (= ETH_MODULE_SFF_8436_MAX_LEN): lower page + upper pages 00h-03h.
const SFF8636_MAX_LEN = 640;
const QSFP_IDS = new Set([0x0c, 0x0d, 0x11]);
const PARAMS = ['hex', 'raw', 'offset', 'length', 'page', 'bank', 'i2c'] as const;
type Param = (typeof PARAMS)[number];

const fail = (stderr: string, exitCode = 1): ModuleAnswer => ({ stdout: '', stderr, exitCode });

// strtoul(s, NULL, 0) as ethtool's nl_parse_direct_u32 reads a number: 0x.. hex, 0.. octal, else decimal.
function cNumber(s: string): number | null {
  const m = /^(0x[0-9a-f]+|0[0-7]*|[1-9]\d*)$/i.exec(s);
  if (!m) return null;
  return /^0x/i.test(s) ? parseInt(s, 16) : s.length > 1 && s.startsWith('0') ? parseInt(s, 8) : Number(s);
}

const BOOL: Record<string, boolean> = { on: true, off: false, yes: true, no: false, true: true, false: false, '1': true, '0': false };

// Netlink extended-ack offset of an attribute of the MODULE_EEPROM_GET request, as ethtool prints it: nlmsghdr and
// genlmsghdr (20 bytes), the header nest holding the device name, then LENGTH, OFFSET, PAGE (8 bytes each).
function attrOffset(iface: string, attr: 'length' | 'offset' | 'page'): number {
  const align4 = (n: number) => (n + 3) & ~3;
  const header = 4 + align4(4 + iface.length + 1);
  return 20 + header + { length: 0, offset: 8, page: 16 }[attr];
}

// Whether ethtool takes the legacy ioctl path for these parameters (`hex on`/`raw on` without page, bank or i2c).
export function isLegacyRead(params: string[]): boolean {
  const on = (k: string) => {
    const i = params.indexOf(k);
    return i >= 0 && BOOL[params[i + 1]?.toLowerCase() ?? ''] === true;
  };
  return (on('hex') || on('raw')) && !['page', 'bank', 'i2c'].some((k) => params.includes(k));
}

// The whole answer of `ethtool -m` for a plugged module whose EEPROM is `img` (256 bytes: lower page + page 00h).
export function answerModuleEeprom(img: Uint8Array, iface: string, params: string[]): ModuleAnswer {
  const given = new Map<Param, number | boolean>();
  for (let i = 0; i < params.length; i++) {
    const key = params[i]! as Param;
    if (!PARAMS.includes(key)) return fail(`ethtool (-m): unknown parameter '${key}'\n`);
    const raw = params[++i];
    if (raw === undefined) return fail(`ethtool (-m): no value for parameter '${key}'\n`);
    const value = key === 'hex' || key === 'raw' ? BOOL[raw.toLowerCase()] : cNumber(raw);
    if (value === undefined || value === null) return fail(`ethtool (-m): invalid value '${raw}' for parameter '${key}'\n`);
    given.set(key, value);
  }
  const hex = given.get('hex') === true;
  const raw = given.get('raw') === true;
  if (hex && raw) return fail('Hex and raw dump cannot be specified together\n');
  const num = (k: Param) => (given.get(k) as number | undefined) ?? 0;
  if ((hex || raw) && !given.has('page') && !given.has('bank') && !given.has('i2c'))
    return legacyRead(img, num('offset'), given.has('length') ? num('length') : null, raw);

  const decoded = !given.has('page') && !given.has('bank') && !given.has('offset') && !given.has('length');
  if (decoded && !raw) return { stdout: formatEthtoolModuleText(img, { style: '6.7' }), stderr: '', exitCode: 0 };
  const page = num('page');
  let offset = num('offset');
  const length = given.has('length') ? num('length') : PAGE_LEN;
  if (page && !offset) offset = PAGE_LEN;
  const invalid = (msg: string, attr: 'length' | 'offset' | 'page') =>
    fail(`netlink error: ${msg} (offset ${attrOffset(iface, attr)})\nnetlink error: Invalid argument\n`);
  // ETHTOOL_A_MODULE_EEPROM_LENGTH and _OFFSET are range-checked by the netlink policy (length 1..128): only the
  // errno line is simulated (the policy's own extack text was not verified).
  if (length < 1 || length > PAGE_LEN || offset > 2 * PAGE_LEN - 1 || num('bank') > 255 || page > 255) return fail('netlink error: Invalid argument\n');
  if (page && offset < PAGE_LEN) return invalid('reading from lower half page is allowed for page 0 only', 'page');
  if (offset < PAGE_LEN && offset + length > PAGE_LEN) return invalid('reading cross half page boundary is illegal', 'length');
  if (offset + length > 2 * PAGE_LEN) return invalid('reading cross page boundary is illegal', 'length');
  // The simulated cables are flat-memory modules: only page 00h (and bank 0) exists; the firmware's page read fails
  // the way docs/formats.md §4c quotes it (kernels with the 2025 error-handling fix).
  if ((page > 0 || num('bank') > 0) && offset >= PAGE_LEN) {
    return fail('netlink warning: mlx5_core: Query module eeprom by page failed, read 0 bytes, err -5\nnetlink error: Input/output error\n');
  }
  const data = img.subarray(offset, offset + length);
  if (raw) return { stdout: latin1(data), stderr: '', exitCode: 0 };
  return { stdout: formatHexDump(data, offset), stderr: '', exitCode: 0 };
}

// The legacy ioctl path (ETHTOOL_GMODULEINFO + ETHTOOL_GMODULEEEPROM) ethtool takes for `hex on` / `raw on`
// without a page: mlx5 reports 640 bytes for SFF-8636 and refuses CMIS identifiers.
function legacyRead(img: Uint8Array, offset: number, length: number | null, raw: boolean): ModuleAnswer {
  if (!QSFP_IDS.has(img[0]!)) return fail('Cannot get module EEPROM information: Invalid argument\n');
  const len = Math.min(length ?? SFF8636_MAX_LEN, SFF8636_MAX_LEN - offset);
  if (offset >= SFF8636_MAX_LEN || len <= 0) return fail('Cannot get Module EEPROM data: Invalid argument\n');
  const full = legacyImage(img);
  const data = full.subarray(offset, offset + len);
  return { stdout: raw ? latin1(data) : formatHexDump(data, offset), stderr: '', exitCode: 0 };
}

// The 640 bytes mlx5 returns for an SFF-8636 module: lower page, upper page 00h, then upper pages 01h-03h. A flat-
// memory passive DAC has no pages 01h-03h; its plain 256-byte EEPROM ignores the page select and answers those
// reads with page 00h again (an assumption: no 640-byte mlx5 dump of a flat DAC was found, docs/formats.md §4c).
function legacyImage(img: Uint8Array): Uint8Array {
  const out = new Uint8Array(SFF8636_MAX_LEN);
  out.set(img.subarray(0, 2 * PAGE_LEN), 0);
  for (let p = 1; p <= 3; p++) out.set(img.subarray(PAGE_LEN, 2 * PAGE_LEN), PAGE_LEN * (p + 1));
  return out;
}

const latin1 = (data: Uint8Array) => String.fromCharCode(...data);
