import type { EepromStandard } from '../domain/cable.js';
import { decodeEeprom } from '../eeprom/decode.js';
import type { EepromDecode } from '../eeprom/decoded.js';
import { assertNotFailedRead, readHexDump } from '../eeprom/hex-rows.js';
import { cmd } from '../transport/commands.js';
import { RemoteCommandError, type CommandRunner } from '../transport/types.js';

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
