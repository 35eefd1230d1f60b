import type { EepromStandard } from '../domain/cable.js';
import { decodeEeprom } from '../eeprom/decode.js';
import type { EepromDecode } from '../eeprom/decoded.js';
import { assertNotFailedRead, readHexDump } from '../eeprom/hex-rows.js';
import { cmd } from '../transport/commands.js';
import { ParseError } from '../domain/errors.js';
import { RemoteCommandError, type CommandResult, type CommandRunner } from '../transport/types.js';

// `ethtool -m IF [page 0 offset N length N] hex on` output (one or several dumps) decoded from the bytes themselves.
// `standard` forces the map when the identifier bytes were not read (e.g. an `offset 0x90 length 12` read).
export function parseEepromHex(text: string, opts: { standard?: EepromStandard } = {}): EepromDecode {
  const dump = readHexDump(text, 'eeprom-hex');
  return decodeEeprom(dump.bytes, dump.bytesRead, { ...opts, kind: 'eeprom-hex' });
}

// Read lower page and upper page 00h (netlink page reads work for SFF-8636 and CMIS on mlx5) and decode them.
// A failed upper read still yields the lower-page decode, with the failure named in `anomalies`.
export async function readModuleEeprom(runner: CommandRunner, iface: string): Promise<EepromDecode> {
  const lower = await runner.run(cmd.eepromLower(iface));
  if (lower.exitCode !== 0) throw new RemoteCommandError(runner.node, lower);
  assertNotFailedRead(lower.stderr, 'eeprom-hex');
  const upper = await runner.run(cmd.eepromUpper(iface));
  let upperFailed: string | null = null;
  if (upper.exitCode !== 0) upperFailed = new RemoteCommandError(runner.node, upper).message;
  else if (/netlink warning|query module eeprom/i.test(upper.stderr)) upperFailed = upper.stderr.trim().split('\n')[0]!;
  const out = parseEepromHex(lower.stdout + (upperFailed === null ? upper.stdout : ''));
  if (upperFailed !== null) out.anomalies.push(`missing-bytes: upper page 00h read failed: ${upperFailed}`);
  return out;
}

// The cable serial one PCIe function reads (upper page 00h only: one read), or null when it cannot be read.
export async function readCableSerial(run: (command: string) => Promise<CommandResult>, iface: string): Promise<string | null> {
  const r = await run(cmd.eepromUpper(iface));
  if (r.exitCode !== 0 || /netlink warning|query module eeprom/i.test(r.stderr)) return null;
  try {
    return parseEepromHex(r.stdout).vendorSn || null;
  } catch (e) {
    if (e instanceof ParseError) return null;
    throw e;
  }
}
