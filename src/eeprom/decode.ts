import type { EepromStandard } from '../domain/cable.js';
import { ParseError } from '../domain/errors.js';
import { CMIS_IDENTIFIERS, IDENTIFIER_NAMES, SFF8636_IDENTIFIERS, hex2, type EepromImage } from './bytes.js';
import { decodeCmis } from './cmis.js';
import type { EepromDecode } from './decoded.js';
import { decodeSff8636 } from './sff8636.js';

// Management interface implied by an SFF-8024 identifier, or null when this harness does not decode it.
export function standardOf(identifier: number): EepromStandard | null {
  if (SFF8636_IDENTIFIERS.has(identifier)) return 'SFF-8636';
  if (CMIS_IDENTIFIERS.has(identifier)) return 'CMIS';
  return null;
}

// Pick SFF-8636 or CMIS from the identifier byte; SFP (SFF-8472) and unknown ids are a ParseError, not a guess.
export function decodeEeprom(img: EepromImage, bytesRead: number, opts: { standard?: EepromStandard; kind?: string } = {}): EepromDecode {
  const kind = opts.kind ?? 'eeprom-hex';
  const id = img[0] ?? img[128];
  let standard = opts.standard ?? null;
  if (standard === null) {
    if (id === undefined) throw new ParseError(kind, 1, 'identifier byte (offset 0 or 128) not read: cannot tell SFF-8636 from CMIS');
    standard = standardOf(id);
    if (standard === null) {
      const name = IDENTIFIER_NAMES[id];
      const why = id === 0x03 ? 'an SFP module (SFF-8472 A0h/A2h map), not a QSFP SFF-8636/CMIS module' : 'not a QSFP SFF-8636/CMIS module';
      throw new ParseError(kind, 1, `identifier ${hex2(id)}${name ? ` (${name})` : ''} is ${why}; not decoded`);
    }
  }
  const out = standard === 'CMIS' ? decodeCmis(img, bytesRead) : decodeSff8636(img, bytesRead);
  if (opts.standard && id === undefined)
    out.anomalies.unshift(`missing-bytes: identifier not read (bytes 0 and 128); decoded as ${standard} because the caller said so`);
  return out;
}
