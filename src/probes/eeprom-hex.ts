import type { EepromStandard } from '../domain/cable.js';
import { decodeEeprom } from '../eeprom/decode.js';
import type { EepromDecode } from '../eeprom/decoded.js';
import { readHexDump } from '../eeprom/hex-rows.js';

// `ethtool -m IF [page 0 offset N length N] hex on` output (one or several dumps) decoded from the bytes themselves.
// `standard` forces the map when the identifier bytes were not read (e.g. an `offset 0x90 length 12` read).
export function parseEepromHex(text: string, opts: { standard?: EepromStandard } = {}): EepromDecode {
  const dump = readHexDump(text, 'eeprom-hex');
  return decodeEeprom(dump.bytes, dump.bytesRead, { ...opts, kind: 'eeprom-hex' });
}
